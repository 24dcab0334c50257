import FoundationEssentials

/// Limits and policies that apply to one transfer.
package struct TransferOptions: Sendable, Hashable {
    /// The `User-Agent` header, e.g. `singlecast/1.2.0`.
    package var userAgent: String
    /// How long to wait for the TCP (and TLS) connection before giving up (`CURLOPT_CONNECTTIMEOUT_MS`).
    package var connectTimeout: Duration
    /// Bytes per second under which the transfer counts as stalled (`CURLOPT_LOW_SPEED_LIMIT`).
    package var lowSpeedLimit: Int
    /// How long the transfer may stay under ``lowSpeedLimit`` before it fails with ``TransferError/Code/timeout``
    /// (`CURLOPT_LOW_SPEED_TIME`, whole seconds, rounded up).
    package var lowSpeedTime: Duration
    /// The most redirects to follow (`CURLOPT_MAXREDIRS`); only to http and https URLs.
    package var maxRedirects: Int
    /// Refuses `http://` URLs and any redirect that leaves https.
    package var requireHTTPS: Bool
    /// The largest file to accept, in bytes; the transfer fails with ``TransferError/Code/tooLarge`` as soon as the
    /// announced size or the bytes received would exceed it, also when the server sends no `Content-Length`.
    package var maxFileSize: Int64?

    package init(
        userAgent: String = "singlecast",
        connectTimeout: Duration = .seconds(30),
        lowSpeedLimit: Int = 1024,
        lowSpeedTime: Duration = .seconds(60),
        maxRedirects: Int = 10,
        requireHTTPS: Bool = false,
        maxFileSize: Int64? = nil
    ) {
        self.userAgent = userAgent
        self.connectTimeout = connectTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.maxRedirects = maxRedirects
        self.requireHTTPS = requireHTTPS
        self.maxFileSize = maxFileSize
    }
}

/// One GET of a URL into a file the caller opened.
///
/// The engine never opens, closes, syncs or renames files: it writes the body with `pwrite` at absolute offsets
/// into ``fileDescriptor`` and may `ftruncate` it to zero when the server sends the whole file again.
package struct TransferRequest: Sendable {
    /// An `http://` or `https://` URL.
    package var url: String
    /// Extra request headers, each `"Name: value"`.
    package var headers: [String]
    /// The user name for HTTP basic authentication; sent only to the host of ``url``, never logged.
    package var basicAuthUser: String?
    /// The password for HTTP basic authentication; never logged.
    package var basicAuthPassword: String?
    /// How many bytes of the file are already in ``fileDescriptor``; when positive the request asks for
    /// `Range: bytes=<resumeOffset>-`.
    package var resumeOffset: Int64
    /// The `ETag` of the bytes already in the file. A resume sends it as `If-Range` when it is strong (RFC 9110
    /// §13.1.5 forbids weak ones there; else ``lastModified`` goes), so that a changed file comes back whole (`200`)
    /// instead of as a mismatched tail; a `206` or `416` carrying another `ETag` is another version of the file, and
    /// the transfer fails with ``TransferError/Code/rangeMismatch`` (restart from zero) before writing a byte.
    package var etag: String?
    /// The `Last-Modified` of the bytes already in the file; used and compared like ``etag``.
    package var lastModified: String?
    /// The size of the whole file learnt earlier; a `Content-Range` total that differs means the file changed.
    package var expectedTotal: Int64?
    /// A descriptor opened `O_RDWR` by the caller, who also closes it.
    package var fileDescriptor: Int32
    /// Bytes free on the file's file system when the transfer starts (a fresh start also reuses the space of the
    /// bytes it cuts); a body announced bigger is not written at all (``TransferError/Code/noSpace``). `nil`: not
    /// checked.
    package var freeSpace: Int64?
    /// Limits and policies.
    package var options: TransferOptions
    /// Whether libcurl follows redirects itself; when `false` a `3xx` comes back as
    /// ``TransferOutcome/httpError(_:)`` with its ``TransferResponse/location`` (``HTTPEngine/fetch(_:)`` follows
    /// hop by hop to learn whether every hop was permanent).
    package var followsRedirects = true
    /// Whether the transfer opens a connection of its own and closes it afterwards (`CURLOPT_FRESH_CONNECT`,
    /// `CURLOPT_FORBID_REUSE`): set by the engine when it retries a transfer a reused connection broke.
    var freshConnection = false
    /// Whether the request accepts every content coding libcurl can decode (gzip, deflate, br, zstd) and the body
    /// callbacks see the decoded bytes, so that ``TransferOptions/maxFileSize`` limits what is decoded: set by
    /// ``HTTPEngine/fetch(_:)``, never for downloads (see ``TransferContext``).
    var decodesContent = false
    /// Whether the next attempt after a failure resumes from the bytes written (downloads), or starts afresh
    /// (``HTTPEngine/fetch(_:)``): failure messages say which.
    var resumable = true
    /// Whether libcurl reads in 120 KiB chunks rather than its default 16 KiB (``TransferContext``): downloads. A
    /// fetch's easy handle, made for one small body, keeps the default: kept for the next fetch, it would hold the
    /// bigger buffer; at 128 KiB, glibc's mmap threshold, that cost an `mmap`, page faults and a `munmap` per fetch.
    var readsLargeChunks = true
    /// Sent as a POST body when set (``FetchRequest/postBody``).
    var postBody: Data?
    /// The most the whole transfer may take, in milliseconds (`CURLOPT_TIMEOUT_MS`): what is left of a fetch's
    /// ``FetchDeadline``; downloads have none.
    var timeoutMilliseconds: Int?
    /// Called on the engine thread with the outcome, just before the caller is resumed with it (not for a transfer
    /// the engine refused or dropped unstarted): ``HTTPEngine/fetch(_:)`` hands its ``FetchRequest/lastTransferEnded``
    /// on there, so a fetch's slot is free the moment its connection is.
    var ended: (@Sendable (TransferOutcome) -> Void)?
    /// The fetch slot the transfer waits for before it starts (``FetchLimiter``): the engine starts it once admitted,
    /// on the thread that freed the slot, rather than resuming a task that would then start it.
    var admission: FetchAdmission?
    /// Called once, under the engine's lock, just before the transfer is queued to start: what is made only then
    /// (a fetch's memory file, and what is left of its deadline), so that a transfer waiting for its admission holds
    /// no descriptor. An error completes the transfer with it instead. Quick, and never calls the engine.
    var prepare: (@Sendable (inout TransferRequest) -> TransferError?)?

    /// The `If-Range` of a resume: a strong ``etag``, else ``lastModified``.
    var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
    package init(
        url: String,
        headers: [String] = [],
        basicAuthUser: String? = nil,
        basicAuthPassword: String? = nil,
        resumeOffset: Int64 = 0,
        etag: String? = nil,
        lastModified: String? = nil,
        expectedTotal: Int64? = nil,
        fileDescriptor: Int32,
        options: TransferOptions = TransferOptions()
    ) {
        self.url = url
        self.headers = headers
        self.basicAuthUser = basicAuthUser
        self.basicAuthPassword = basicAuthPassword
        self.resumeOffset = resumeOffset
        self.etag = etag
        self.lastModified = lastModified
        self.expectedTotal = expectedTotal
        self.fileDescriptor = fileDescriptor
        self.options = options
    }
}

/// What the server said in its final response (redirect hops and `1xx` responses are not kept).
package struct TransferResponse: Sendable, Hashable {
    /// The HTTP status code.
    package var status: Int
    /// The URL after redirects (`CURLINFO_EFFECTIVE_URL`).
    package var finalURL: String
    /// The raw `ETag` header, quotes and `W/` included; `nil` when it holds a control character (a bare CR), which
    /// could never be sent back.
    package var etag: String?
    /// The raw `Last-Modified` header; `nil` like ``etag``.
    package var lastModified: String?
    /// The `Content-Length` of this response's body.
    package var contentLength: Int64?
    /// The size of the whole file: the total of `Content-Range: bytes a-b/T` on a `206`, `Content-Length` on a
    /// `200`; `nil` when the server did not say.
    package var totalLength: Int64?
    /// The `Content-Type` header.
    package var contentType: String?
    /// The raw `Retry-After` header: delta-seconds or an HTTP-date.
    package var retryAfter: String?
    /// `true` when a `206` was appended at the resume offset; `false` when the file was written from byte 0.
    package var resumed: Bool
    /// The raw `Location` header (of a redirect that was not followed).
    package var location: String?

    package init(
        status: Int,
        finalURL: String,
        etag: String? = nil,
        lastModified: String? = nil,
        contentLength: Int64? = nil,
        totalLength: Int64? = nil,
        contentType: String? = nil,
        retryAfter: String? = nil,
        resumed: Bool = false,
        location: String? = nil
    ) {
        self.status = status
        self.finalURL = finalURL
        self.etag = etag
        self.lastModified = lastModified
        self.contentLength = contentLength
        self.totalLength = totalLength
        self.contentType = contentType
        self.retryAfter = retryAfter
        self.resumed = resumed
        self.location = location
    }
}

/// How far a transfer got, reported at most every ~100 ms and once at the end.
package struct TransferProgress: Sendable, Hashable {
    /// Valid bytes in the file, counting from byte 0 (so a resumed transfer starts at its resume offset).
    package var bytesInFile: Int64
    /// The size of the whole file, when the server said.
    package var totalLength: Int64?
    /// Validators of the response being written, so the caller can record them before the transfer ends: a
    /// resume after a crash needs them for `If-Range`.
    package var etag: String?
    package var lastModified: String?

    package init(bytesInFile: Int64, totalLength: Int64?, etag: String? = nil, lastModified: String? = nil) {
        self.bytesInFile = bytesInFile
        self.totalLength = totalLength
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// How a transfer ended.
package enum TransferOutcome: Sendable {
    /// The body arrived completely (libcurl reported success). The caller verifies the size, syncs and renames.
    case completed(TransferResponse, bytesInFile: Int64)
    /// `416`: the range starts at or past the end; the caller checks whether the file is already complete.
    /// Nothing was written.
    case rangeNotSatisfiable(TransferResponse)
    /// A status of 400 or more, or a leftover `1xx`/`3xx` that was not followed. No body byte was written.
    case httpError(TransferResponse)
    /// The transfer stopped early: network error, timeout, full disk, cancellation, a mismatched range…
    /// `bytesInFile` says how much of the file is valid; resume from there.
    case failed(TransferError, response: TransferResponse?, bytesInFile: Int64)
}
