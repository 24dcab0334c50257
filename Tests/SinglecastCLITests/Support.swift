import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// Collects everything written to it, standing in for stdout or stderr.
final class CapturedOutput: TextOutput, @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""

    func write(_ text: String) {
        lock.withLock { buffer += text }
    }

    var text: String { lock.withLock { buffer } }
}

/// The outcome of one in-process `singlecastctl` run.
struct CLIRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `singlecastctl` in-process with captured output.
func runCLI(
    _ arguments: [String],
    environment: [String: String] = [:],
    responseTimeout: Duration = .seconds(10)
) async -> CLIRun {
    let stdout = CapturedOutput()
    let stderr = CapturedOutput()
    let status = await CLI.main(
        arguments: arguments,
        environment: environment,
        stdout: stdout,
        stderr: stderr,
        responseTimeout: responseTimeout,
        userID: 1000
    )
    return CLIRun(status: status, stdout: stdout.text, stderr: stderr.text)
}

/// A fresh directory under `/tmp`, short enough for socket paths (sun_path holds 107 bytes).
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    var template = Array("/tmp/sc-cli-test.XXXXXX".utf8CString)
    let path = try template.withUnsafeMutableBufferPointer { buffer -> String in
        guard let result = mkdtemp(buffer.baseAddress!) else { throw POSIXError(.init(rawValue: errno)!) }
        return String(cString: result)
    }
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// A test peer for the client: accepts one connection (or `connections` in turn) on a Unix socket, reads one
/// request line from each, and answers each with the same canned lines.
final class TestServer: @unchecked Sendable {
    enum Behavior: Sendable {
        /// Writes these lines (a newline is added to each) and closes.
        case reply([String])
        /// Writes nothing and keeps the connection open for this long, like a wedged daemon.
        case silent(seconds: Double)
        /// Writes the first lines, keeps quiet for `seconds`, then writes the rest and closes.
        case pausing(before: [String], seconds: Double, after: [String])
        /// Reads a request line before writing each of these lines, as a daemon answers one request after another on
        /// one connection, then closes.
        case answers([String])
    }

    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var received: [String] = []
    private let finished = DispatchSemaphore(value: 0)

    init(directory: String, behavior: Behavior, connections: Int = 1) throws {
        path = directory + "/control.sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try Self.bind(listener, to: path)
        guard listen(listener, 4) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
        let thread = Thread { [self] in
            for _ in 0..<connections { serve(behavior) }
            finished.signal()
        }
        thread.start()
    }

    deinit { close(listener) }

    /// Request lines the server read, once it has finished with its connection.
    func requests() -> [String] {
        if finished.wait(timeout: .now() + 10) == .success {
            finished.signal()  // Leave it signalled for the next caller.
        }
        return lock.withLock { received }
    }

    /// The one request line, as the client sent it.
    func requestLine() throws -> String {
        let lines = requests()
        try #require(lines.count == 1)
        return lines[0]
    }

    /// The one request, parsed as the daemon would parse it.
    func request() throws -> RPCRequest {
        let lines = requests()
        try #require(lines.count == 1)
        return try RPCRequest.parse(line: Array(lines[0].utf8)).get()
    }

    static func bind(_ descriptor: Int32, to path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno)!) }
    }

    private func serve(_ behavior: Behavior) {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        /// Reads up to the next newline and records the line; false when the client closed first.
        func readRequest() -> Bool {
            while !bytes.contains(UInt8(ascii: "\n")) {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { return false }
                bytes += buffer[..<count]
            }
            let newline = bytes.firstIndex(of: UInt8(ascii: "\n"))!
            lock.withLock { received.append(String(decoding: bytes[..<newline], as: UTF8.self)) }
            bytes.removeSubrange(...newline)
            return true
        }
        if case .answers(let lines) = behavior {
            for line in lines {
                guard readRequest() else { return }
                Self.send([line], to: connection)
            }
            return
        }
        _ = readRequest()
        switch behavior {
        case .answers:
            break
        case .reply(let lines):
            Self.send(lines, to: connection)
        case .silent(let seconds):
            Thread.sleep(forTimeInterval: seconds)
        case .pausing(let before, let seconds, let after):
            Self.send(before, to: connection)
            Thread.sleep(forTimeInterval: seconds)
            Self.send(after, to: connection)
        }
    }

    private static func send(_ lines: [String], to connection: Int32) {
        let data = Array(lines.map { $0 + "\n" }.joined().utf8)
        _ = data.withUnsafeBytes { Foundation.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
