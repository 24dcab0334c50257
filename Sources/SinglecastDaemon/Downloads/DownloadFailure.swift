import SinglecastHTTP

#if canImport(Glibc)
import Glibc
#endif

/// Why a download attempt ended without a complete file.
///
/// The one place that gives each failure its stable code (`last_error.code` in docs/PROTOCOL.md) and its message;
/// ``RetryPolicy/decide(_:attempts:now:random:)`` is the one place that decides what follows from it.
package enum DownloadFailure: Equatable, Sendable {
    /// A file operation on the partial or final file.
    package enum FileOperation: String, Sendable {
        case open
        case truncate
        case sync
        case rename
        case remove
    }

    /// The transfer failed below HTTP: the network, a timeout, TLS, a refused redirect, a write error.
    case transfer(TransferError)
    /// The server answered with an error status.
    case httpStatus(Int, url: String, retryAfter: String?)
    /// The body ended at another length than the one announced.
    case lengthMismatch(received: Int64, announced: Int64)
    /// The server refused to resume (416) and the partial file is not the whole file.
    case rangeNotSatisfiable(offset: Int64)
    /// A system call on the download's file failed.
    case file(FileOperation, errno: Int32, path: String)
    /// Audio or video was announced, but the body is text (an HTML error page): `received` is libmagic's MIME type.
    /// The partial file is removed; only the user's `retry` tries again.
    case notMedia(announced: String, received: String)

    /// Whether the disk (or the user's quota) is full: the download waits for the user instead of failing.
    package var isDiskFull: Bool {
        switch self {
        case .transfer(let error): error.code == .diskFull
        case .file(_, let code, _): code == ENOSPC || code == EDQUOT
        case .httpStatus, .lengthMismatch, .rangeNotSatisfiable, .notMedia: false
        }
    }

    /// A failure as the download records it, and clients see it as `last_error`.
    package struct Summary: Equatable, Sendable {
        package var code: String
        package var message: String
        package var httpStatus: Int?

        init(code: String, message: String, httpStatus: Int? = nil) {
            self.code = code
            self.message = message
            self.httpStatus = httpStatus
        }
    }

    /// What clients see as `last_error`.
    package var info: Summary {
        switch self {
        case .transfer(let error):
            return Summary(code: error.code.rawValue, message: error.message)
        case .httpStatus(let status, let url, _):
            return Summary(
                code: "http_status",
                message: "the server answered HTTP \(status) for \(url)",
                httpStatus: status
            )
        case .lengthMismatch(let received, let announced):
            return Summary(
                code: "length_mismatch",
                message: "the server sent \(received) bytes but announced \(announced); downloading again"
            )
        case .rangeNotSatisfiable(let offset):
            return Summary(
                code: "range_not_satisfiable",
                message: "the server refused to resume at byte \(offset); starting over",
                httpStatus: 416
            )
        case .file(let operation, let code, let path):
            if isDiskFull {
                return Summary(
                    code: "disk_full",
                    message: "the disk holding \(path) is full; free space, then resume"
                )
            }
            let verb =
                switch operation {
                case .open: "open"
                case .truncate: "truncate"
                case .sync: "sync"
                case .rename: "rename"
                case .remove: "remove"
                }
            return Summary(code: "io", message: "cannot \(verb) \(path): \(String(cString: strerror(code)))")
        case .notMedia(let announced, let received):
            return Summary(
                code: "not_media",
                message: "announced \(announced) but received \(MediaCheck.describe(received))"
            )
        }
    }
}
