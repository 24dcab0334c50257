import Foundation
import SinglecastProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The control socket under bad, heavy and hostile input, against the real daemon.
@Suite struct ControlSocketTests {
    private func errorReason(_ line: String?) throws -> (code: Int, reason: String?, message: String) {
        let text = try #require(line)
        guard case .error(_, let error) = try RPCIncoming.parse(line: Array(text.utf8)) else {
            throw HarnessError("expected an error response, got \(text)")
        }
        return (error.code, error.reason, error.message)
    }

    @Test func badRequestsGetTheRightJSONRPCErrors() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)

        try client.send("{not json\n")
        #expect(try errorReason(client.readLine()).code == -32700)
        try client.send([0x7B, 0xFF, 0xFE, 0x7D, 0x0A])
        let utf8 = try errorReason(client.readLine())
        #expect(utf8.code == -32700)
        #expect(utf8.message.contains("UTF-8"))
        try client.send("[]\n")
        #expect(try errorReason(client.readLine()).message.contains("batch"))
        try client.send("42\n")
        #expect(try errorReason(client.readLine()).code == -32600)
        try client.send(#"{"jsonrpc":"1.0","id":1,"method":"ping"}"# + "\n")
        #expect(try errorReason(client.readLine()).code == -32600)
        try client.send(#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"# + "\n")
        #expect(try errorReason(client.readLine()).code == -32600)

        try client.send(#"{"jsonrpc":"2.0","id":"a","method":"stauts"}"# + "\n")
        let unknown = try errorReason(client.readLine())
        #expect(unknown.code == -32601)
        #expect(unknown.reason == "method_not_found")
        #expect(unknown.message.contains("'stauts'") && unknown.message.contains("Did you mean 'status'?"))

        try client.send(#"{"jsonrpc":"2.0","id":2,"method":"watch","params":{"topics":["nope"]}}"# + "\n")
        let params = try errorReason(client.readLine())
        #expect(params.code == -32602)
        #expect(params.message.contains("unknown topic 'nope'"))
        try client.send(#"{"jsonrpc":"2.0","id":2,"method":"watch","params":{"events":["download.done"]}}"# + "\n")
        let event = try errorReason(client.readLine())
        #expect(event.code == -32602)
        #expect(event.message.contains("unknown event 'download.done'; events of 'downloads': download.added,"))
        try client.send(#"{"jsonrpc":"2.0","id":2,"method":"watch","params":{"events":"download.completed"}}"# + "\n")
        #expect(try errorReason(client.readLine()).message.contains("'events' must be an array of strings, not string"))
        try client.send(#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"loud":true}}"# + "\n")
        #expect(try errorReason(client.readLine()).message.contains("'loud'"))

        // A notification (no id) is never answered, even when it fails; the next request still is.
        try client.send(
            #"{"jsonrpc":"2.0","method":"nope"}"# + "\n" + #"{"jsonrpc":"2.0","id":"last","method":"ping"}"# + "\n"
        )
        let last = try #require(try client.readLine())
        #expect(last == #"{"id":"last","jsonrpc":"2.0","result":{"pong":true}}"#)
        #expect(daemon.stop() == 0)
    }

    @Test func oversizedLineGetsAnErrorAndItsConnectionCloses() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_request_bytes = 4K\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        try client.send(String(repeating: "x", count: 5000))
        let error = try errorReason(client.readLine())
        #expect(error.code == -32000)
        #expect(error.reason == "request_too_large")
        #expect(try client.readLine() == nil)
        #expect(try LineClient(path: daemon.socketPath).result("ping", as: PingResult.self).pong)
        #expect(daemon.stop() == 0)
    }

    @Test func halfLineAtEndOfStreamIsAnswered() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        try client.send(#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#)
        client.shutdownWrite()
        #expect(try client.readLine() == #"{"id":9,"jsonrpc":"2.0","result":{"pong":true}}"#)
        #expect(try client.readLine() == nil)

        let truncated = try LineClient(path: daemon.socketPath)
        try truncated.send(#"{"jsonrpc":"2.0","id":9,"meth"#)
        truncated.shutdownWrite()
        #expect(try errorReason(truncated.readLine()).code == -32700)
        #expect(daemon.stop() == 0)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let count = 2000
        var batch = ""
        for id in 0..<count {
            batch += "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(id % 3 == 0 ? "version" : "ping")\"}\n"
        }
        client.sendInBackground(Array(batch.utf8), thenShutdownWrite: false)
        for id in 0..<count {
            let line = try #require(try client.readLine())
            guard case .result(let responseID, _) = try RPCIncoming.parse(line: Array(line.utf8)) else {
                Issue.record("unexpected \(line)")
                return
            }
            #expect(responseID == .integer(Int64(id)))
        }
        #expect(daemon.stop() == 0)
    }

    @Test func aStopAnswersEveryRequestAlreadySent() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        _ = try client.result("ping", as: PingResult.self)
        var batch = ""
        for id in 0..<200 { batch += "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"version\"}\n" }
        try client.send(batch)
        daemon.signal(SIGTERM)
        var answered = 0
        while let line = try client.readLine() {
            #expect(line.contains("\"id\":\(answered),"))
            answered += 1
        }
        #expect(answered == 200)
        #expect(daemon.waitForExit() == 0)
    }

    @Test func aClientThatNeverReadsDoesNotBlockOthers() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("shutdown_timeout = 1s\n")
        try daemon.startAndWaitUntilReady()
        let stuck = try LineClient(path: daemon.socketPath)
        // Far more answers than the socket buffers hold; the daemon must stop reading from this client only.
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"version"}"#.utf8) + [10]
        var flood: [UInt8] = []
        for _ in 0..<20000 { flood += request }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(stuck.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = flood.withUnsafeBytes { send(stuck.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }

        let started = Date.now
        for _ in 0..<20 {
            #expect(try LineClient(path: daemon.socketPath).result("ping", as: PingResult.self).pong)
        }
        #expect(Date.now.timeIntervalSince(started) < 5)
        // The stuck client is still served once it reads.
        let first = try #require(try stuck.readLine())
        #expect(first.contains(#""daemon":"#))
        // Stopping while a client refuses to read ends once the shutdown timeout has passed.
        let stopping = Date.now
        #expect(daemon.stop() == 0)
        #expect(Date.now.timeIntervalSince(stopping) >= 1)
        #expect(daemon.log.contains("closing 1 connection that did not finish in time"))
    }

    @Test func manyConcurrentClients() async throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let socketPath = daemon.socketPath
        let served = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    let client = try LineClient(path: socketPath)
                    for _ in 0..<25 { _ = try client.result("status", as: StatusResult.self) }
                    return 25
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(served == 64 * 25)
        #expect(daemon.stop() == 0)
    }

    @Test func clientsBeyondTheLimitAreTurnedAwayClearly() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_clients = 2\n")
        try daemon.startAndWaitUntilReady()
        let first = try LineClient(path: daemon.socketPath)
        let second = try LineClient(path: daemon.socketPath)
        _ = try first.result("ping", as: PingResult.self)
        _ = try second.result("ping", as: PingResult.self)
        let third = try LineClient(path: daemon.socketPath)
        let refused = try errorReason(third.readLine())
        #expect(refused.reason == "too_many_clients")
        #expect(try third.readLine() == nil)
        #expect(daemon.stop() == 0)
    }

    /// Waiting at shutdown for connections to finish used to wake every 10 ms to look; now the last connection to
    /// end wakes it, and a client that is slow to read still ends the stop early once it has read.
    @Test func drainingAtShutdownWaitsWithoutPolling() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("shutdown_timeout = 6s\n")
        try daemon.startAndWaitUntilReady()
        let stuck = try LineClient(path: daemon.socketPath)
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"version"}"#.utf8) + [10]
        var flood: [UInt8] = []
        for _ in 0..<20000 { flood += request }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(stuck.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = flood.withUnsafeBytes { send(stuck.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        usleep(300_000)

        let stopping = Date.now
        daemon.signal(SIGTERM)
        usleep(500_000)
        let before = Self.contextSwitches(of: daemon.process.processIdentifier)
        usleep(1_500_000)
        let after = Self.contextSwitches(of: daemon.process.processIdentifier)
        // A 10 ms poll alone wakes 150 times in 1.5 s; an idle daemon wakes a few times.
        #expect(after - before < 40, "the daemon woke \(after - before) times in 1.5 s while draining")

        while try stuck.readLine() != nil {}
        #expect(daemon.waitForExit() == 0)
        #expect(Date.now.timeIntervalSince(stopping) < 5, "the stop waited for the deadline")
        #expect(!daemon.log.contains("did not finish in time"))
    }

    /// Voluntary context switches of all of a process's threads: how often it went to sleep.
    private static func contextSwitches(of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return total + (line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0)
        }
    }

    /// Connections that closed at once used to hold their slots until their tasks got a turn, so a same-user
    /// process connecting and closing in a loop turned every other client away with `too_many_clients`.
    @Test func aConnectAndCloseStormDoesNotLockOthersOut() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_clients = 4\n")
        try daemon.startAndWaitUntilReady()
        let socketPath = daemon.socketPath
        let stormEnded = Completed()
        let storm = Thread {
            for _ in 0..<3000 {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                _ = withUnixAddress(socketPath) { connect(fd, $0, $1) }
                close(fd)
            }
            stormEnded.mark()
        }
        storm.start()
        var pings = 0
        while !stormEnded.isMarked || pings < 20 {
            let client = try LineClient(path: socketPath)
            let answer = try client.call("ping")
            guard case .result = answer else {
                Issue.record("ping \(pings) during the storm: \(answer)")
                break
            }
            pings += 1
        }
        #expect(try LineClient(path: socketPath).result("ping", as: PingResult.self).pong)
        #expect(daemon.stop() == 0)
    }

    /// Every refusal used to log a warning: a client retrying in a loop wrote thousands of lines in seconds.
    @Test func refusalsAreLoggedAtMostOncePerInterval() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_clients = 1\n")
        try daemon.startAndWaitUntilReady()
        let holder = try LineClient(path: daemon.socketPath)
        _ = try holder.result("ping", as: PingResult.self)
        for _ in 0..<200 {
            let refused = try LineClient(path: daemon.socketPath)
            #expect(try errorReason(refused.readLine()).reason == "too_many_clients")
        }
        let status = try holder.result("status", as: StatusResult.self)
        #expect(status.connections.refused == 200)
        #expect(daemon.stop() == 0)
        let warnings = daemon.log.split(separator: "\n").filter { $0.contains("clients are connected already") }
        #expect(warnings.count == 1, "\(warnings.count) warnings:\n\(warnings.prefix(5).joined(separator: "\n"))")
    }

    @Test func aBatchRunsInOrderAndAnswersInOneLine() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        // The pause refers to the download the enqueue before it creates, and show sees the pause: in order.
        try client.send(
            #"[{"jsonrpc":"2.0","id":"watch","method":"watch","params":{"topics":["downloads"]}},"#
                + #"{"jsonrpc":"2.0","id":"add","method":"enqueue","params":{"urls":["http://127.0.0.1:9/a.mp3"]}},"#
                + #"{"jsonrpc":"2.0","method":"pause","params":{"ids":[1]}},"#
                + #"{"jsonrpc":"2.0","id":"show","method":"show","params":{"id":1}}]"# + "\n"
        )
        var events: [String] = []
        var answer: JSONValue?
        while answer == nil || !events.contains("download.added") {
            let line = try #require(try client.readLine())
            let value = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
            switch value {
            case .array: answer = value
            case .object(let fields):
                guard case .string(let method)? = fields["method"] else {
                    Issue.record("an answer outside the batch: \(line)")
                    return
                }
                events.append(method)
            default: Issue.record("unexpected line \(line)")
            }
        }
        guard case .array(let responses)? = answer else { return }
        let ids = responses.compactMap { response -> JSONValue? in
            guard case .object(let fields) = response else { return nil }
            return fields["id"]
        }
        #expect(ids == [.string("watch"), .string("add"), .string("show")])
        guard case .object(let shown) = responses[2], case .object(let download)? = shown["result"] else {
            Issue.record("show failed: \(responses[2])")
            return
        }
        #expect(download["state"] == .string("paused"))
        #expect(daemon.stop() == 0)
    }

    @Test func aBatchOverTheLimitIsRefusedWholeAndTheConnectionGoesOn() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let ping = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        try client.send("[" + Array(repeating: ping, count: 1001).joined(separator: ",") + "]\n")
        let refused = try errorReason(client.readLine())
        #expect(refused.code == -32600)
        #expect(refused.message.contains("at most 1000 requests"))
        try client.send("[" + Array(repeating: ping, count: 1000).joined(separator: ",") + "]\n")
        let line = try #require(try client.readLine())
        guard case .array(let answers) = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else {
            Issue.record("not a batch answer: \(line.prefix(200))")
            return
        }
        #expect(answers.count == 1000)
        #expect(daemon.stop() == 0)
    }

    /// 10,000 seeded random lines over several connections: every line gets an error, the daemon keeps answering.
    @Test func tenThousandGarbageLinesLeaveTheDaemonAnswering() async throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let socketPath = daemon.socketPath
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for connection in 0..<8 {
                group.addTask {
                    var generator = SplitMix64(seed: UInt64(connection) &+ 0x5eed)
                    let client = try LineClient(path: socketPath)
                    var lines = 0
                    var payload: [UInt8] = []
                    for _ in 0..<1250 {
                        payload += garbageLine(&generator) + [10]
                        lines += 1
                    }
                    client.sendInBackground(payload, thenShutdownWrite: true)
                    var responses = 0
                    while let line = try client.readLine() {
                        #expect(line.contains(#""error":"#) || line.contains(#""result":"#))
                        responses += 1
                    }
                    #expect(responses == lines)
                    return responses
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(answered == 10_000)
        #expect(try LineClient(path: socketPath).result("ping", as: PingResult.self).pong)
        #expect(daemon.stop() == 0)
    }

    @Test func socketActivationUsesThePassedSocketAndLeavesItInPlace() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        try #require(FileManager.default.isExecutableFile(atPath: activate), "systemd-socket-activate is needed")
        let daemon = DaemonProcess()
        let socketPath = daemon.root.file("activated.sock")
        try daemon.start(wrapper: daemon.socketActivationWrapper(activate, socketPath))
        try waitForListener(socketPath)
        // systemd-socket-activate starts the daemon on the first connection, as systemd's socket unit does.
        let status = try LineClient(path: socketPath).result("status", as: StatusResult.self)
        #expect(daemon.notify.receive(until: "READY=1") != nil)
        #expect(status.socketActivated)
        #expect(status.paths.socket == socketPath)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "no socket of its own is created")
        #expect(daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: socketPath), "systemd's socket is not the daemon's to remove")
    }

    /// SO_PEERCRED: a client of another uid is refused even when file permissions would let it connect.
    /// Switching to another uid needs root and setpriv; without them the test is reported as skipped.
    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root, systemd-socket-activate and setpriv"
        )
    )
    func clientOfAnotherUIDIsRefused() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        let setpriv = "/usr/bin/setpriv"
        let daemon = DaemonProcess()
        chmod(daemon.root.path, 0o755)
        let socketPath = daemon.root.file("shared.sock")
        // A world-connectable socket, so only the credential check stands between uid 65534 and the daemon.
        try daemon.start(wrapper: daemon.socketActivationWrapper(activate, socketPath))
        try waitForListener(socketPath)
        chmod(socketPath, 0o666)
        let request = #"{"jsonrpc":"2.0","id":1,"method":"status"}"#
        let output = daemon.root.file("outsider.out")
        let status = try spawnAndWait(
            setpriv,
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()+b'\\n'); print(s.makefile().readline().strip())",
                socketPath, request,
            ],
            output: output
        )
        let outsider = (status: status, stdout: try String(contentsOfFile: output, encoding: .utf8), stderr: "")
        #expect(outsider.status == 0, "\(outsider.stderr)")
        let refusal = try errorReason(outsider.stdout)
        #expect(refusal.reason == "permission_denied")
        #expect(refusal.message.contains("uid 65534"))
        let served = try LineClient(path: socketPath).result("status", as: StatusResult.self)
        #expect(served.connections.refused == 1)
        #expect(daemon.stop() == 0)
    }
}

/// Waits until `path` exists (a socket being bound by another process).
/// Waits until a Unix socket at `path` listens. The file appears at `bind`, before `listen`, and a connect in between
/// is refused; a connect would also start a socket-activated daemon, so this reads the kernel's table instead.
func waitForListener(_ path: String, timeout: Double = 20) throws {
    let deadline = Date.now.addingTimeInterval(timeout)
    while !isListening(path) {
        guard Date.now < deadline else { throw HarnessError("nothing listens on \(path)") }
        usleep(10_000)
    }
}

/// Whether /proc/net/unix lists a socket bound to `path` with `__SO_ACCEPTCON` (0x10000): one that listens.
private func isListening(_ path: String) -> Bool {
    guard let table = kernelTable("/proc/net/unix") else { return false }
    for line in table.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 8, fields[7] == path, let flags = Int(fields[3], radix: 16) else { continue }
        if flags & 0x10000 != 0 { return true }
    }
    return false
}

/// A small deterministic generator, so a failing garbage line can be reproduced from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One non-blank line without `\n`: random bytes, broken JSON, wrong shapes or hostile params.
func garbageLine(_ generator: inout SplitMix64) -> [UInt8] {
    let templates = [
        #"{"jsonrpc":"2.0","id":1,"method":"status","params":{"path":"../../etc/passwd"}}"#,
        #"{"jsonrpc":"2.0","id":1e999,"method":"ping"}"#,
        #"{"jsonrpc":"2.0","id":-1,"method":"watch","params":{"topics":"file:///etc"}}"#,
        #"{"jsonrpc":"2.0","id":null,"method":"\u0000"}"#,
        #"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        #"{"jsonrpc":"2.0","id":7,"method":42}"#,
        String(repeating: "[", count: 5000),
        #"{"jsonrpc":"2.0","id":"x","method":"version","params":[1,2,3]}"#,
        "null",
        #"{"a":"#,
    ]
    switch generator.next() % 3 {
    case 0:
        let length = Int(generator.next() % 200) + 1
        var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes = bytes.map { $0 == 10 ? 0x20 : $0 }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { bytes[0] = 0x21 }
        return bytes
    case 1:
        var bytes = Array(templates[Int(generator.next() % UInt64(templates.count))].utf8)
        let cut = Int(generator.next() % UInt64(bytes.count)) + 1
        bytes = Array(bytes.prefix(cut))
        if bytes.allSatisfy({ $0 == 0x20 }) { bytes = [0x21] }
        return bytes
    default:
        return Array(templates[Int(generator.next() % UInt64(templates.count))].utf8)
    }
}

/// A flag one thread sets and another reads.
final class Completed: @unchecked Sendable {
    private let lock = NSLock()
    private var marked = false

    func mark() { lock.withLock { marked = true } }
    var isMarked: Bool { lock.withLock { marked } }
}
