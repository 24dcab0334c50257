import FoundationEssentials
import SinglecastProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Talking to singlecastd failed; the message says what happened and what to do about it.
package struct ClientError: Error, Hashable, Sendable, LocalizedError, CLIExitStatusProviding {
    package enum Code: String, Hashable, Sendable {
        /// No socket file at the path.
        case notRunning = "not_running"
        /// A socket file exists but nobody accepts on it (a daemon that died without cleaning up).
        case notListening = "not_listening"
        /// `connect` failed for another reason, e.g. `EACCES`.
        case connectFailed = "connect_failed"
        /// The path does not fit in `sockaddr_un.sun_path`.
        case socketPathTooLong = "socket_path_too_long"
        /// The daemon did not answer in time.
        case timedOut = "timed_out"
        /// The daemon closed the connection before answering, or a watch ended without `daemon.stopping`.
        case connectionClosed = "connection_closed"
        /// The daemon sent something that is not a JSON-RPC message of the expected shape.
        case invalidResponse = "invalid_response"
        /// Reading or writing the socket failed.
        case ioFailed = "io_failed"
        /// The daemon answered with a JSON-RPC error; ``rpcError`` holds it.
        case daemonError = "daemon_error"
    }

    package var code: Code
    package var message: String
    /// The daemon's error object for ``Code/daemonError``.
    package var rpcError: RPCError?
    /// The `errno` behind a socket failure.
    package var underlyingErrno: Int32?

    package init(code: Code, message: String, rpcError: RPCError? = nil, underlyingErrno: Int32? = nil) {
        self.code = code
        self.message = message
        self.rpcError = rpcError
        self.underlyingErrno = underlyingErrno
    }

    package var errorDescription: String? { message }

    /// As ``ExitCode/of(_:)`` says: 69 when the daemon cannot be reached, 64 for its `invalid_params`, else 1.
    package var exitStatus: ExitCode { ExitCode.of(self) }

    private static let startHint = "Start it with 'systemctl --user start singlecastd' or run 'singlecastd'."

    /// The right error for a failed `connect(2)` to `path`.
    package static func connect(path: String, errno code: Int32) -> ClientError {
        switch code {
        case ENOENT:
            ClientError(
                code: .notRunning,
                message: "singlecastd is not running (no socket at \(path)). \(startHint)",
                underlyingErrno: code
            )
        case ECONNREFUSED:
            ClientError(
                code: .notListening,
                message: "singlecastd is not running (nothing is listening at \(path)). \(startHint)",
                underlyingErrno: code
            )
        default:
            ClientError(
                code: .connectFailed,
                message: "Cannot connect to singlecastd at \(path): \(describe(errno: code)).",
                underlyingErrno: code
            )
        }
    }

    package static func socketPathTooLong(_ path: String, limit: Int) -> ClientError {
        ClientError(
            code: .socketPathTooLong,
            message:
                "The socket path \(path) is \(path.utf8.count) bytes long; Unix sockets allow at most \(limit). "
                + "Use a shorter --socket path."
        )
    }

    package static func timedOut(path: String, after timeout: Duration) -> ClientError {
        ClientError(
            code: .timedOut,
            message:
                "singlecastd at \(path) did not answer within \(seconds(timeout)). It may be stuck; "
                + "check its log (e.g. 'journalctl --user -u singlecastd')."
        )
    }

    package static func closedBeforeAnswer(path: String) -> ClientError {
        ClientError(
            code: .connectionClosed,
            message: "singlecastd at \(path) closed the connection without answering."
        )
    }

    package static func invalidResponse(_ detail: String) -> ClientError {
        ClientError(code: .invalidResponse, message: "singlecastd sent an invalid reply: \(detail).")
    }

    package static func io(_ operation: String, path: String, errno code: Int32) -> ClientError {
        ClientError(
            code: .ioFailed,
            message: "Cannot \(operation) the connection to singlecastd at \(path): \(describe(errno: code)).",
            underlyingErrno: code
        )
    }

    /// The daemon's own message: it already says what failed and how to fix it. Only JSON-RPC's "Invalid params: "
    /// goes, which names the protocol's notion and not the user's mistake; `--json` prints `rpcError` as it came.
    package static func daemon(_ error: RPCError) -> ClientError {
        let prefix = "Invalid params: "
        let message = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
        return ClientError(code: .daemonError, message: message, rpcError: error)
    }

    /// `30 s`, or `0.3 s` for the short timeouts of tests.
    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds) s" : "\(seconds).\(tenths) s"
    }

    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }
}
