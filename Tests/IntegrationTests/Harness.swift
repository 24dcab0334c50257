import Foundation
import SinglecastProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Locates the built executables next to the test bundle.
enum Binaries {
    static let directory: URL = {
        var candidate = Bundle.main.bundleURL
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("singlecastd").path) {
                return candidate
            }
            candidate.deleteLastPathComponent()
        }
        fatalError("cannot find the singlecastd binary near \(Bundle.main.bundleURL.path); run 'swift build' first")
    }()

    static var daemon: URL { directory.appendingPathComponent("singlecastd") }
    static var client: URL { directory.appendingPathComponent("singlecastctl") }
}

/// A short private directory under /tmp (Unix socket paths must stay under 108 bytes), removed on deinit.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() {
        var template = Array("/tmp/sc-test-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed")
        path = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A real `NOTIFY_SOCKET`: a datagram socket the daemon's sd_notify calls reach.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let fd: Int32

    init(path: String) {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let result = withUnixAddress(path) { bind(fd, $0, $1) }
        precondition(result == 0, "bind \(path): \(String(cString: strerror(errno)))")
    }

    deinit { close(fd) }

    /// The next datagram, or `nil` after `timeout` seconds.
    func receive(timeout: Double = 20) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Datagrams until one contains `needle` (inclusive); `nil` on timeout.
    func receive(until needle: String, timeout: Double = 20) -> [String]? {
        var messages: [String] = []
        let deadline = Date.now.addingTimeInterval(timeout)
        while Date.now < deadline {
            guard let message = receive(timeout: deadline.timeIntervalSinceNow) else { return nil }
            messages.append(message)
            if message.contains(needle) { return messages }
        }
        return nil
    }
}

/// A singlecastd process with its own XDG directories.
final class DaemonProcess: @unchecked Sendable {
    let root: TemporaryDirectory
    let process = Process()
    let notify: NotifySocket
    let stderrPath: String
    var environment: [String: String]

    var socketPath: String { root.file("run/singlecast/control.sock") }
    var configPath: String { root.file("config/singlecast/singlecast.conf") }
    var stateDirectory: String { root.file("state/singlecast") }

    /// Prepares (but does not start) a daemon; `root` may be shared with an earlier daemon to reuse its state.
    init(root: TemporaryDirectory = TemporaryDirectory(), extraEnvironment: [String: String] = [:]) {
        self.root = root
        let notifyPath = root.file("notify-\(UUID().uuidString.prefix(8)).sock")
        notify = NotifySocket(path: notifyPath)
        stderrPath = root.file("daemon-\(UUID().uuidString.prefix(8)).log")
        for directory in ["run", "config", "state", "data", "home"] {
            try? FileManager.default.createDirectory(atPath: root.file(directory), withIntermediateDirectories: true)
        }
        chmod(root.file("run"), 0o700)
        environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": root.file("home"),
            "XDG_RUNTIME_DIR": root.file("run"),
            "XDG_CONFIG_HOME": root.file("config"),
            "XDG_STATE_HOME": root.file("state"),
            "XDG_DATA_HOME": root.file("data"),
            "NOTIFY_SOCKET": notifyPath,
            // No system bus: the machine's NetworkManager (metered = pause is the default) must not pause a test.
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + root.file("no-system-bus"),
        ].merging(extraEnvironment) { $1 }
    }

    func writeConfig(_ text: String) throws {
        try FileManager.default.createDirectory(
            atPath: (configPath as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts the daemon (optionally through a wrapper such as systemd-socket-activate).
    func start(arguments: [String] = [], wrapper: [String] = []) throws {
        if !FileManager.default.fileExists(atPath: stderrPath) {
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        }
        let log = FileHandle(forWritingAtPath: stderrPath)!
        if wrapper.isEmpty {
            process.executableURL = Binaries.daemon
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: wrapper[0])
            process.arguments = Array(wrapper.dropFirst()) + [Binaries.daemon.path] + arguments
        }
        process.environment = environment
        process.standardError = log
        process.standardOutput = log
        try process.run()
    }

    /// Starts and waits for `READY=1`; returns the datagrams up to and including it.
    @discardableResult
    func startAndWaitUntilReady(arguments: [String] = [], wrapper: [String] = []) throws -> [String] {
        try start(arguments: arguments, wrapper: wrapper)
        guard let messages = notify.receive(until: "READY=1") else {
            throw HarnessError("the daemon did not report READY=1; its log:\n\(log)")
        }
        return messages
    }

    /// `systemd-socket-activate` listening at `socketPath`; it passes only the variables named with `-E` on to
    /// the daemon it starts at the first connection.
    func socketActivationWrapper(_ tool: String, _ socketPath: String) -> [String] {
        [tool, "--listen=\(socketPath)"] + environment.keys.sorted().map { "-E\($0)" }
    }

    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit and returns its status; kills it after `timeout` seconds.
    func waitForExit(timeout: Double = 20) -> Int32 {
        let deadline = Date.now.addingTimeInterval(timeout)
        while process.isRunning && Date.now < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        signal(SIGTERM)
        return waitForExit()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A blocking line client for the control socket, with a receive timeout so a broken daemon fails the test
/// instead of hanging it.
final class LineClient: @unchecked Sendable {
    let fd: Int32
    /// The socket's path, for a second connection (``finished(_:timeout:)`` watches on one of its own).
    let path: String
    private var pending: [UInt8] = []

    init(path: String, timeout: Double = 20) throws {
        self.path = path
        // A local until connected: a class whose stored properties are all set runs its deinit when its init throws,
        // so closing `self.fd` here and in deinit closed the number twice, maybe another test's descriptor by then.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let result = withUnixAddress(path) { connect(fd, $0, $1) }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw HarnessError("connect \(path): \(message)")
        }
        self.fd = fd
        var interval = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw HarnessError("send: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Sends `bytes` from another thread, then optionally half-closes, so the caller can read the answers at
    /// the same time: the daemon stops reading from a client whose answers pile up, so a client that sends
    /// everything before reading anything would deadlock itself.
    func sendInBackground(_ bytes: [UInt8], thenShutdownWrite: Bool) {
        let thread = Thread { [self] in
            try? send(bytes)
            if thenShutdownWrite { shutdownWrite() }
        }
        thread.start()
    }

    /// The next line, or `nil` at end of stream.
    func readLine() throws -> String? {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return nil }
            guard count > 0 else { throw HarnessError("recv: \(String(cString: strerror(errno)))") }
            pending.append(contentsOf: buffer[..<count])
        }
    }

    /// Sends a request and returns the decoded response (skipping notifications).
    func call(_ method: String, id: Int = 1, params: String? = nil) throws -> RPCIncoming {
        let paramsPart = params.map { ",\"params\":\($0)" } ?? ""
        try send("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\"\(paramsPart)}\n")
        while let line = try readLine() {
            let message = try RPCIncoming.parse(line: Array(line.utf8))
            if case .notification = message { continue }
            return message
        }
        throw HarnessError("connection closed before the response to \(method)")
    }

    func result<T: Decodable>(_ method: String, as type: T.Type, params: String? = nil) throws -> T {
        switch try call(method, params: params) {
        case .result(_, let value): return try WireCoding.decode(type, from: value)
        case .error(_, let error): throw HarnessError("\(method) failed: \(error.message)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }
}

extension LineClient {
    /// Waits until every download in `ids` is completed or failed, on the daemon's events rather than by polling:
    /// a watching connection of its own is subscribed first, then each download is asked for once (it may have
    /// ended before the watch began), and every other one is awaited as its `download.completed` or
    /// `download.failed`. Throws with what it knows after `timeout` seconds.
    ///
    /// - Returns: The downloads as they ended, in the order of `ids`.
    func finished(_ ids: [Int64], timeout: Double = 60) throws -> [DownloadInfo] {
        try EventWatcher(path: path, topics: ["downloads"], timeout: timeout).finished(ids, asking: self)
    }
}

/// A connection watching the daemon's events, so that a test waits for what the daemon announces instead of
/// polling its state with sleeps.
final class EventWatcher {
    private let client: LineClient
    private let deadline: Date

    /// Subscribes to `topics` before it returns: every event after this point reaches it.
    init(path: String, topics: [String], timeout: Double = 60) throws {
        client = try LineClient(path: path, timeout: timeout)
        deadline = Date.now.addingTimeInterval(timeout)
        let list = topics.map { "\"\($0)\"" }.joined(separator: ",")
        _ = try client.result("watch", as: WatchResult.self, params: #"{"topics":[\#(list)]}"#)
    }

    /// The next event named one of `methods`; throws at the deadline.
    func next(_ methods: Set<String>) throws -> (method: String, params: JSONValue) {
        while Date.now < deadline {
            guard let line = try client.readLine() else { throw HarnessError("the daemon closed the watch") }
            if case .notification(let method, let params?) = try RPCIncoming.parse(line: Array(line.utf8)),
                methods.contains(method)
            {
                return (method, params)
            }
        }
        throw HarnessError("no \(methods.sorted()) event in time")
    }

    /// Every download in `ids` completed or failed: asked of `requests` once (after the watch began), then awaited.
    func finished(_ ids: [Int64], asking requests: LineClient) throws -> [DownloadInfo] {
        var ended: [Int64: DownloadInfo] = [:]
        for id in ids {
            let info = try requests.result("show", as: DownloadInfo.self, params: #"{"id":\#(id)}"#)
            if info.state == .completed || info.state == .failed { ended[id] = info }
        }
        while ended.count < Set(ids).count {
            let event: (method: String, params: JSONValue)
            do {
                event = try next([DownloadEvent.completed.rawValue, DownloadEvent.failed.rawValue])
            } catch {
                throw HarnessError("downloads \(ids) did not end (ended: \(ended.keys.sorted())): \(error)")
            }
            let download = try WireCoding.decode(DownloadEventParams.self, from: event.params).download
            if ids.contains(download.id) { ended[download.id] = download }
        }
        return ids.compactMap { ended[$0] }
    }

    /// An `episode.deleted` event of each of `episodes`, in their order.
    func deleted(_ episodes: [Int64]) throws -> [EpisodeEventParams] {
        var deleted: [Int64: EpisodeEventParams] = [:]
        while deleted.count < Set(episodes).count {
            let event = try next([EpisodeEvent.deleted.rawValue])
            let params = try WireCoding.decode(EpisodeEventParams.self, from: event.params)
            if episodes.contains(params.episode) { deleted[params.episode] = params }
        }
        return episodes.compactMap { deleted[$0] }
    }
}

/// Calls `body` with a `sockaddr_un` for `path` (short test paths only).
func withUnixAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// Runs a program to completion and captures its output.
func runProgram(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String]? = nil,
    currentDirectory: String? = nil
) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

/// Runs a program with stdout and stderr sent to `output` and waits for it with waitpid(2).
///
/// Foundation's `Process` did not reap a child here while a socket-activated daemon, also its child, was
/// running, so tests that need both use this.
func spawnAndWait(_ executable: String, _ arguments: [String], output: String) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer {
        for argument in argv { free(argument) }
    }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard result == 0 else { throw HarnessError("posix_spawn \(executable): \(String(cString: strerror(result)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
}

/// A table the kernel writes under /proc/net, read to its end.
///
/// These files report a size of 0 and hand out about a page per `read`, so a reader that trusts the size or stops at
/// a short read can see only the first rows: with a few hundred sockets, the ones a test looks for were missed.
func kernelTable(_ path: String) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    guard let bytes = try? handle.readToEnd() else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

/// Whether `condition` holds within `timeout` seconds, asked every 50 ms: for what the daemon shows only in its log
/// or on disk (a file moved, a line logged), where there is no event to wait for.
func eventually(_ timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date.now.addingTimeInterval(timeout)
    while Date.now < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}

/// Runs blocking work (a browser, a python client, a chain of client commands) on a thread of its own: Swift Testing
/// runs every test on the cooperative pool, two threads on a two-core machine, and a test that blocks one of them for
/// a minute stalls the in-process daemon tests of the whole run.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
