import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// Why a transfer failed, with a stable ``code`` for programs and a ``message`` for people that says what failed
/// and what to do about it.
///
/// Messages never contain passwords: user information in URLs is replaced by `***`.
package struct TransferError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable, CaseIterable {
        /// The connection failed or broke (DNS, refused, reset, closed early).
        case network
        /// Connecting took too long, or the transfer stalled under the low-speed limit.
        case timeout
        /// More redirects than ``TransferOptions/maxRedirects``.
        case tooManyRedirects = "too_many_redirects"
        /// The URL, or a redirect, uses a scheme other than http/https (or http while https is required).
        case schemeNotAllowed = "scheme_not_allowed"
        /// A redirect from https to http while ``TransferOptions/requireHTTPS`` is set.
        case insecureRedirect = "insecure_redirect"
        /// Writing failed with `ENOSPC` or `EDQUOT`.
        case diskFull = "disk_full"
        /// The announced body does not fit in the free space of the file's file system: nothing was written.
        case noSpace = "no_space"
        /// Another write or truncate error.
        case io
        /// The transfer was cancelled, or the engine stopped.
        case cancelled
        /// The server answered a range request with bytes that do not belong at the resume offset.
        case rangeMismatch = "range_mismatch"
        /// The file is bigger than ``TransferOptions/maxFileSize``.
        case tooLarge = "too_large"
        /// The URL cannot be parsed.
        case invalidURL = "invalid_url"
        /// TLS handshake or certificate verification failed.
        case tls
        /// The server broke the HTTP protocol: a malformed response, or garbage where a status line belongs.
        case protocolError = "protocol_error"
        /// The response headers passed libcurl's limit (300 KB): the server is broken or hostile, and another
        /// attempt would only receive them again.
        case headersTooLarge = "headers_too_large"
        /// The request itself is unusable (a header with a line break, a negative offset, a closed descriptor).
        case invalidRequest = "invalid_request"
        /// libcurl could not be set up.
        case engineUnavailable = "engine_unavailable"
    }

    /// What a download should do after a failure with a code, so that the rule has one owner.
    package enum RetryClass: Sendable, Hashable {
        /// A transient failure (network, timeout, protocol error, I/O): try again after the usual backoff.
        case afterBackoff
        /// The next attempt fixes it by itself (a resume that must restart from byte 0): try again at once.
        case immediately
        /// Nothing changes until someone acts (the disk is full): pause the download.
        case afterUserAction
        /// The same request would fail the same way (a refused scheme, too large, a redirect loop): fail for good.
        case never
        /// Not a failure: the transfer was stopped on purpose.
        case notAFailure
    }

    package var code: Code
    package var message: String
    /// The libcurl `CURLcode`, when libcurl reported the failure.
    package var curlCode: Int32?
    /// The `errno` of a failed system call.
    package var systemErrno: Int32?

    package init(code: Code, message: String, curlCode: Int32? = nil, systemErrno: Int32? = nil) {
        self.code = code
        self.message = message
        self.curlCode = curlCode
        self.systemErrno = systemErrno
    }

    package var description: String { "\(code.rawValue): \(message)" }
}

extension TransferError.Code {
    /// What a download should do after a failure with this code.
    package var retryClass: TransferError.RetryClass {
        switch self {
        case .network, .timeout, .protocolError, .io, .tls, .invalidRequest, .engineUnavailable: .afterBackoff
        case .rangeMismatch: .immediately
        case .diskFull, .noSpace: .afterUserAction
        case .schemeNotAllowed, .insecureRedirect, .tooManyRedirects, .tooLarge, .headersTooLarge, .invalidURL: .never
        case .cancelled: .notAFailure
        }
    }

    /// Whether another attempt may succeed without anyone acting: ``TransferError/RetryClass/afterBackoff`` or
    /// ``TransferError/RetryClass/immediately``.
    package var isRetryable: Bool { retryClass == .afterBackoff || retryClass == .immediately }
}

extension TransferError {
    static func cancelled(_ url: String, reason: String = "the transfer was cancelled") -> TransferError {
        TransferError(code: .cancelled, message: "Downloading \(redactedURL(url)) stopped: \(reason).")
    }

    static func rangeMismatch(_ url: String, _ detail: String, resuming: Bool = true) -> TransferError {
        guard resuming else {
            return TransferError(
                code: .rangeMismatch,
                message: "The server for \(redactedURL(url)) answered with a part of the file that makes no sense: "
                    + "\(detail). Nothing was written; try again from byte 0."
            )
        }
        return TransferError(
            code: .rangeMismatch,
            message: "Resuming \(redactedURL(url)) failed: \(detail). "
                + "Nothing was written past the resume offset; restart the download from byte 0."
        )
    }

    static func noSpace(_ url: String, needed: Int64, free: Int64) -> TransferError {
        TransferError(
            code: .noSpace,
            message: "Not enough disk space for \(redactedURL(url)): it needs \(needed) bytes and its file system has "
                + "\(free) free. Nothing was written; free space there, then resume."
        )
    }

    static func tooLarge(_ url: String, limit: Int64, size: Int64?) -> TransferError {
        let what = size.map { "the file is \($0) bytes" } ?? "the file grew past the limit"
        return TransferError(
            code: .tooLarge,
            message: "Downloading \(redactedURL(url)) stopped: \(what), more than the \(limit)-byte maximum. "
                + "Raise the maximum file size if the file is expected to be this big."
        )
    }

    static func write(
        _ url: String,
        operation: String,
        path: String,
        offset: Int64,
        errno code: Int32
    ) -> TransferError {
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return TransferError(
                code: .diskFull,
                message: "The disk is full: \(operation) at byte \(offset) of \(path) failed (\(reason)) while "
                    + "downloading \(redactedURL(url)). Free space on that file system, then resume.",
                systemErrno: code
            )
        }
        return TransferError(
            code: .io,
            message: "Writing the download of \(redactedURL(url)) failed: \(operation) at byte \(offset) of \(path): "
                + "\(reason). Check that the file is writable and the file system is healthy, then resume.",
            systemErrno: code
        )
    }
}

/// What a failed libcurl transfer looked like, for mapping it to a ``TransferError``; no libcurl types, so the
/// mapping can be tested without a network.
struct CurlFailure: Sendable, Hashable {
    /// The `CURLcode`.
    var code: Int32
    /// libcurl's `CURLOPT_ERRORBUFFER` text, or `curl_easy_strerror` when that was empty.
    var curlMessage: String
    /// The requested URL.
    var url: String
    /// The `Location` of the last redirect seen, if any.
    var redirectLocation: String?
    /// Body bytes of the final response received so far.
    var bodyBytesReceived: Int64
    /// `Content-Length` of the final response.
    var contentLength: Int64?
    /// Valid bytes in the file.
    var bytesInFile: Int64
    /// Whether the next attempt resumes from ``bytesInFile`` (a download) or starts afresh (a fetch).
    var resumable = true
    var options: TransferOptions
    /// Whether the final response's headers were still being read (no final response yet).
    var readingHeaders = false
}

extension TransferError {
    /// Maps a libcurl failure to an error whose message says what failed and what to do.
    init(_ failure: CurlFailure) {
        let url = redactedURL(failure.url)
        let curl = "curl: \(failure.curlMessage.removingCurlTimings())"
        let resume =
            failure.bytesInFile > 0 && failure.resumable
            ? "The file holds \(failure.bytesInFile) valid bytes; the next attempt resumes from there."
            : "Try again later."
        let code: Code
        let message: String
        switch CURLcode(rawValue: UInt32(bitPattern: failure.code)) {
        case CURLE_OPERATION_TIMEDOUT:
            code = .timeout
            if failure.curlMessage.hasPrefix("Operation too slow") {
                message =
                    "Downloading \(url) stalled: less than \(failure.options.lowSpeedLimit) bytes/s for "
                    + "\(seconds(failure.options.lowSpeedTime)) s (\(curl)). \(resume)"
            } else {
                message =
                    "Connecting to \(url) timed out (\(curl)). Check the network and the server address; "
                    + "the connect timeout is \(seconds(failure.options.connectTimeout)) s."
            }
        case CURLE_TOO_MANY_REDIRECTS:
            code = .tooManyRedirects
            message =
                "Downloading \(url) was redirected more than \(failure.options.maxRedirects) times (\(curl)). "
                + "The server is probably in a redirect loop; check the URL in a browser."
        case CURLE_UNSUPPORTED_PROTOCOL
        where ["Received HTTP/0.9", "Unsupported HTTP version", "Unsupported response code"].contains(where: {
            failure.curlMessage.hasPrefix($0)
        }):
            // libcurl's words for bytes where a status line belongs (typically the excess of the previous response on
            // a reused connection), an unknown HTTP version, or a status code out of range: a broken response, not a
            // refused scheme.
            code = .protocolError
            message =
                "The server for \(url) sent something that is not an HTTP response where the status line belongs "
                + "(\(curl)). \(resume)"
        case CURLE_UNSUPPORTED_PROTOCOL:
            let scheme = failure.redirectLocation.flatMap(URLText.scheme(of:)) ?? URLText.scheme(of: failure.url) ?? "?"
            if failure.options.requireHTTPS && scheme == "http" && failure.redirectLocation != nil {
                code = .insecureRedirect
                message =
                    "Downloading \(url) was redirected from https to plain http "
                    + "(\(redactedURL(failure.redirectLocation ?? ""))), which HTTPS-only downloads refuse. "
                    + "Turn off the HTTPS requirement for this feed if that is acceptable."
            } else {
                code = .schemeNotAllowed
                let what =
                    failure.redirectLocation.map { "was redirected to \(redactedURL($0)), a '\(scheme)' URL" }
                    ?? "is a '\(scheme)' URL"
                let allowed = failure.options.requireHTTPS ? "https" : "http and https"
                let link = failure.options.requireHTTPS ? "an https" : "an http or https"
                message =
                    "Downloading \(url) failed: it \(what), but only \(allowed) URLs are downloaded (\(curl)). "
                    + "Ask the publisher for \(link) link."
            }
        case CURLE_URL_MALFORMAT:
            code = .invalidURL
            message = "The URL \(url) is not valid (\(curl)). Check the feed or the link it came from."
        case CURLE_PARTIAL_FILE:
            code = .network
            let total = failure.contentLength.map { " of \($0)" } ?? ""
            message =
                "Downloading \(url) broke off: the connection closed after \(failure.bodyBytesReceived)\(total) "
                + "bytes (\(curl)). \(resume)"
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CLIENTCERT,
            CURLE_USE_SSL_FAILED:
            code = .tls
            message =
                "The secure connection to \(url) failed (\(curl)). Check the system clock and CA certificates "
                + "(ca-certificates); if the server's certificate is broken, tell the publisher."
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_BAD_CONTENT_ENCODING,
            CURLE_RANGE_ERROR, CURLE_BAD_DOWNLOAD_RESUME, CURLE_HTTP3:
            code = .protocolError
            message = "The server for \(url) broke the HTTP protocol (\(curl)). \(resume)"
        case CURLE_FILESIZE_EXCEEDED:
            code = .tooLarge
            message =
                "Downloading \(url) stopped: the file is bigger than the \(failure.options.maxFileSize ?? 0)-byte "
                + "maximum (\(curl)). Raise the maximum file size if the file is expected to be this big."
        case CURLE_ABORTED_BY_CALLBACK:
            code = .cancelled
            message = "Downloading \(url) stopped: the transfer was cancelled."
        case CURLE_WRITE_ERROR:
            code = .io
            message = "Writing the download of \(url) failed (\(curl)). Check the disk, then resume."
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            code = .network
            message = "The server name in \(url) could not be resolved (\(curl)). Check the network and DNS."
        case CURLE_RECV_ERROR where failure.curlMessage.hasPrefix("Too large response headers"):
            code = .headersTooLarge
            message =
                "The server for \(url) sent response headers without end (\(curl)). It is broken or hostile; "
                + "the download is not retried. Tell the publisher."
        case CURLE_OUT_OF_MEMORY where failure.readingHeaders:
            // libcurl 7.88 collects a header line in a buffer bounded at 100 KB and reports a longer one as
            // CURLE_OUT_OF_MEMORY, without a message: a server sending a header (or Location) without end.
            code = .headersTooLarge
            message =
                "The server for \(url) sent a response header line longer than libcurl's limit of 100 KB. It is "
                + "broken or hostile; the download is not retried. Tell the publisher."
        case CURLE_COULDNT_CONNECT:
            code = .network
            message = "Connecting to \(url) failed (\(curl)). The server may be down; \(resume.lowercasedFirst)"
        default:
            code = .network
            message = "Downloading \(url) failed (\(curl)). \(resume)"
        }
        self.init(code: code, message: message, curlCode: failure.code)
    }
}

/// Whole seconds, rounded up, for messages and for options libcurl takes in seconds.
func seconds(_ duration: Duration) -> Int {
    let (whole, fraction) = duration.components
    return Int(whole) + (fraction > 0 ? 1 : 0)
}

/// Milliseconds, rounded up, for libcurl's `_MS` options.
func milliseconds(_ duration: Duration) -> Int {
    let (whole, fraction) = duration.components
    let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
    return Int(whole) * 1000 + Int((fraction + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond)
}

/// The URL with any `user:password@` replaced by `***@`, so that messages and logs never carry credentials.
package func redactedURL(_ url: String) -> String {
    guard let schemeEnd = url.firstRange(of: "://") else { return url }
    let authorityStart = schemeEnd.upperBound
    let authorityEnd = url[authorityStart...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? url.endIndex
    guard let at = url[authorityStart..<authorityEnd].lastIndex(of: "@") else { return url }
    return String(url[..<authorityStart]) + "***" + String(url[at...])
}

extension String {
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }

    /// The text without every `" after <digits> ms"`: libcurl puts how long a failed connect took into its
    /// messages, and the same failure should read the same every time.
    fileprivate func removingCurlTimings() -> String {
        var result = ""
        var rest = Substring(self)
        while let marker = rest.firstRange(of: " after ") {
            let digits = rest[marker.upperBound...].prefix(while: { $0.isASCII && $0.isNumber })
            let tail = rest[digits.endIndex...]
            if !digits.isEmpty && tail.hasPrefix(" ms") {
                result += rest[..<marker.lowerBound]
                rest = tail.dropFirst(3)
            } else {
                result += rest[..<marker.upperBound]
                rest = rest[marker.upperBound...]
            }
        }
        return result + rest
    }
}
