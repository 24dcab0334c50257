import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// A blocking connection to singlecastd's control socket.
///
/// Blocking I/O keeps the client simple and fast to start; ``Blocking/run(_:)`` moves it off the
/// cooperative thread pool. Each read waits at most until a deadline, so a wedged daemon cannot hang the
/// client forever.
package final class ControlConnection {
    /// Replies such as a long download list can be large; anything beyond this is not a sane reply.
    static let maximumLineLength = 64 << 20

    package let path: String
    private let fileDescriptor: Int32
    private var framer = LineFramer(maximumLineLength: maximumLineLength)
    private var pendingLines: [[UInt8]] = []
    private var reachedEndOfStream = false
    private var nextID: Int64 = 1

    /// Connects to the Unix stream socket at `path`.
    ///
    /// - Throws: ``ClientError`` with ``ClientError/Code/notRunning`` (no socket file),
    ///   ``ClientError/Code/notListening`` (`ECONNREFUSED`) or another connect code.
    package init(path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        // sun_path needs room for the terminating NUL.
        guard pathBytes.count < capacity else { throw ClientError.socketPathTooLong(path, limit: capacity - 1) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }

        let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fileDescriptor = socket(AF_UNIX, socketType, 0)
        guard fileDescriptor >= 0 else { throw ClientError.connect(path: path, errno: errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fileDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            close(fileDescriptor)
            throw ClientError.connect(path: path, errno: code)
        }
        self.path = path
        self.fileDescriptor = fileDescriptor
    }

    deinit {
        close(fileDescriptor)
    }

    /// Sends a request and waits for its response, skipping notifications that arrive meanwhile.
    ///
    /// - Parameters:
    ///   - method: the method name, e.g. `status`.
    ///   - params: `nil` to omit `params`.
    ///   - timeout: how long to wait for the response.
    ///   - notification: called for each notification that arrives before the response.
    /// - Returns: the `result` member, exactly as the daemon sent it.
    /// - Throws: ``ClientError``, with ``ClientError/Code/daemonError`` when the daemon answered with an error.
    package func call(
        _ method: String,
        params: JSONValue? = nil,
        timeout: Duration,
        notification: (_ method: String, _ params: JSONValue?, _ line: [UInt8]) -> Void = { _, _, _ in }
    ) throws -> JSONValue {
        let line = try responseLine(method, params: params, timeout: timeout, notification: notification)
        return try Self.result(JSONValue.self, in: line) ?? .null
    }

    /// Like ``call(_:params:timeout:notification:)``, but returns the whole response line undecoded.
    ///
    /// A large result (100,000 episodes) is then decoded once, straight into its type with
    /// ``result(_:in:)``, instead of into a ``JSONValue`` that is encoded and decoded again.
    package func responseLine(
        _ method: String,
        params: JSONValue? = nil,
        timeout: Duration,
        notification: (_ method: String, _ params: JSONValue?, _ line: [UInt8]) -> Void = { _, _, _ in }
    ) throws -> [UInt8] {
        let id = JSONValue.integer(nextID)
        nextID += 1
        let request = try RPCRequest(id: id, method: method, params: params).encodedLine()
        // A daemon that refuses us (too many clients, another uid) answers and closes without reading, so
        // a failed write is reported only if no answer is waiting to be read.
        let writeError = sendAll(Array(request))
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let line = try readLine(deadline: deadline, timeout: timeout) else {
                throw writeError ?? .closedBeforeAnswer(path: path)
            }
            let head = try Self.head(of: line)
            if head.method != nil {
                if case .notification(let method, let params) = try Self.parse(line) {
                    notification(method, params, line)
                }
            } else if let error = head.error, head.id == id || head.id == .null || head.id == nil {
                // A `null` id answers a request the daemon could not read; ours is the only one in flight.
                throw ClientError.daemon(error)
            } else if head.id == id, head.error == nil {
                return line
            }
            // Otherwise an answer to some other request; not ours to handle.
        }
    }

    /// The `result` of a response line as `type`; `nil` when the line has none.
    ///
    /// Only the result's own bytes are decoded, and a type that reads itself (``JSONByteReadable``, such as a
    /// podcast's 100,000 episodes) skips `JSONDecoder` altogether.
    ///
    /// - Throws: the decoding error when the result does not have the shape of `type`.
    package static func result<T: Decodable>(_ type: T.Type, in line: [UInt8]) throws -> T? {
        try JSONByteReader.read(line) { reader in
            var result: T?
            try reader.readObject { reader, key in
                guard key.elementsEqual("result".utf8), !reader.readNull() else { return try reader.skipValue() }
                if let readable = T.self as? any JSONByteReadable.Type {
                    result = try readable.init(reading: &reader) as? T
                } else {
                    result = try reader.decode(T.self)
                }
            }
            return result
        }
    }

    /// What routing a message needs, read without building the (possibly large) result.
    private struct Head {
        var id: JSONValue?
        var method: String?
        var error: RPCError?
    }

    /// Reads the members of a message but its `result` (or `params`), which are skipped, not built.
    private static func head(of line: [UInt8]) throws -> Head {
        do {
            return try JSONByteReader.read(line) { reader in
                var head = Head()
                try reader.readObject { reader, key in
                    if key.elementsEqual("id".utf8) {
                        head.id = try reader.decode(JSONValue.self)
                    } else if key.elementsEqual("method".utf8) {
                        head.method = try reader.readOptionalString()
                    } else if key.elementsEqual("error".utf8) {
                        head.error = try reader.readNull() ? nil : reader.decode(RPCError.self)
                    } else {
                        try reader.skipValue()
                    }
                }
                try reader.expectEnd()
                return head
            }
        } catch {
            throw invalidLine(line)
        }
    }

    /// Waits for the next message; `nil` when the daemon closed the connection.
    ///
    /// - Parameter timeout: how long to wait, or `nil` to wait as long as it takes (e.g. for events).
    package func nextMessage(timeout: Duration? = nil) throws -> (RPCIncoming, line: [UInt8])? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        guard let line = try readLine(deadline: deadline, timeout: timeout) else { return nil }
        return (try Self.parse(line), line)
    }

    private static func parse(_ line: [UInt8]) throws -> RPCIncoming {
        do {
            return try RPCIncoming.parse(line: line)
        } catch {
            throw invalidLine(line)
        }
    }

    private static func invalidLine(_ line: [UInt8]) -> ClientError {
        let preview = String(decoding: line.prefix(200), as: UTF8.self)
        return ClientError.invalidResponse("the line '\(preview)' is not a JSON-RPC message")
    }

    private func sendAll(_ bytes: [UInt8]) -> ClientError? {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            // MSG_NOSIGNAL: a daemon that hung up must cause EPIPE here, not a SIGPIPE that kills the client.
            let sent = remaining.withUnsafeBytes {
                send(fileDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return .io("write to", path: path, errno: errno)
            }
            remaining = remaining.dropFirst(sent)
        }
        return nil
    }

    private func readLine(deadline: ContinuousClock.Instant?, timeout: Duration?) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while pendingLines.isEmpty {
            if reachedEndOfStream { return nil }
            var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.pollTimeout(until: deadline))
            if ready < 0 {
                if errno == EINTR { continue }
                throw ClientError.io("wait on", path: path, errno: errno)
            }
            if ready == 0 {
                throw ClientError.timedOut(path: path, after: timeout ?? .zero)
            }
            let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                // ECONNRESET means the daemon closed with our bytes unread: the stream is over.
                guard errno == ECONNRESET else { throw ClientError.io("read from", path: path, errno: errno) }
            }
            if count <= 0 {
                reachedEndOfStream = true
                if case .line(let line) = framer.finish() { pendingLines.append(line) }
                continue
            }
            for event in framer.append(buffer[..<count]) {
                switch event {
                case .line(let line):
                    if !line.allSatisfy(LineFramer.isWhitespace) { pendingLines.append(line) }
                case .lineTooLong:
                    throw ClientError.invalidResponse(
                        "a line is longer than \(Self.maximumLineLength) bytes"
                    )
                }
            }
        }
        return pendingLines.removeFirst()
    }

    /// Milliseconds for `poll(2)`: -1 waits forever, 0 polls once past the deadline.
    private static func pollTimeout(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let (seconds, attoseconds) = (deadline - .now).components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}

@available(*, unavailable)
extension ControlConnection: Sendable {}

/// Runs blocking work on a thread of its own.
package enum Blocking {
    /// Runs `body` on a new thread and returns its result.
    ///
    /// The client's socket calls block; running them on a cooperative-pool thread would stall unrelated
    /// tasks, which matters when tests run many CLI invocations in one process.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            startThread(name: "singlecastctl-io") { continuation.resume(with: Result { try body() }) }
        }
    }
}
