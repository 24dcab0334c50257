import CCurl
import CPosix
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// One transfer's easy handle and the state its libcurl callbacks work on.
///
/// Lives on the engine thread only: it is created there when the transfer is added to the multi handle, reached from
/// the C callbacks through an unretained pointer (`CURLOPT_PRIVATE`, `CURLOPT_WRITEDATA`, `CURLOPT_HEADERDATA`) while
/// the engine's table of active transfers owns it, and torn down there by ``finish(_:)``.
final class TransferContext {
    /// libcurl's receive buffer for downloads (`CURLOPT_BUFFERSIZE`): 8 KiB under glibc's mmap threshold, so that
    /// libcurl's allocation of it (one byte more) and malloc's header stay in the heap.
    static let downloadBufferSize = Int(CPOSIX_MMAP_THRESHOLD) - 8 * 1024

    let id: Int
    let request: TransferRequest
    private let easy: UnsafeMutableRawPointer
    /// Where the handle goes when the transfer ends (``EasyHandlePool``).
    private let handles: EasyHandlePool
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let progress: @Sendable (TransferProgress) -> Void
    private let continuation: CheckedContinuation<TransferOutcome, Never>
    private var policy: ResponseBodyPolicy
    /// A failed write or truncate, and how much of the file was valid at that moment.
    private var writeFailure: (error: TransferError, bytesInFile: Int64)?
    private var lastProgressNanoseconds: UInt64 = 0
    /// The bytes in the file at the last report.
    private var reportedBytes: Int64 = -1
    /// Where the next write-behind starts (see ``startWriteback(from:through:)``); -1 before the first write.
    private var writebackOffset: Int64 = -1
    private var finished = false
    /// This transfer's share of the speed limit.
    private var rateLimiter = ReceiveRateLimiter(now: monotonicNanoseconds())
    /// The write callback paused the transfer because ``rateLimiter`` ran out of tokens.
    private(set) var isPaused = false

    /// The easy handle, for adding it to and removing it from the multi handle.
    var handle: UnsafeMutableRawPointer { easy }

    /// Progress is reported at most this often, so callbacks stay cheap on fast links.
    private static let progressInterval: UInt64 = 100_000_000

    /// Takes an easy handle from `handles` (a kept one, or a new one) and sets every option. When libcurl refuses,
    /// the caller is resumed with the failure at once and the result is `nil`.
    static func make(
        id: Int,
        request: TransferRequest,
        handles: EasyHandlePool,
        progress: @escaping @Sendable (TransferProgress) -> Void,
        continuation: CheckedContinuation<TransferOutcome, Never>
    ) -> TransferContext? {
        guard let easy = handles.take() else {
            let error = TransferError(
                code: .engineUnavailable,
                message: "libcurl could not create a transfer (curl_easy_init failed); the system is probably out "
                    + "of memory."
            )
            continuation.resume(returning: .failed(error, response: nil, bytesInFile: request.resumeOffset))
            return nil
        }
        let context = TransferContext(
            id: id,
            easy: easy,
            handles: handles,
            request: request,
            progress: progress,
            continuation: continuation
        )
        if let error = context.configure() {
            context.abandon(error)
            return nil
        }
        return context
    }

    private init(
        id: Int,
        easy: UnsafeMutableRawPointer,
        handles: EasyHandlePool,
        request: TransferRequest,
        progress: @escaping @Sendable (TransferProgress) -> Void,
        continuation: CheckedContinuation<TransferOutcome, Never>
    ) {
        self.id = id
        self.easy = easy
        self.handles = handles
        self.request = request
        self.progress = progress
        self.continuation = continuation
        self.policy = ResponseBodyPolicy(
            .init(
                resumeOffset: request.resumeOffset,
                expectedTotal: request.expectedTotal,
                maxFileSize: request.options.maxFileSize,
                followsRedirects: request.followsRedirects,
                // Compared only with what a resume appends to: the bytes of a fresh start have no version yet.
                etag: request.resumeOffset > 0 ? request.etag : nil,
                lastModified: request.resumeOffset > 0 ? request.lastModified : nil,
                freeSpace: request.freeSpace
            )
        )
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit {
        precondition(finished, "a transfer context was dropped without resuming its caller")
    }

    // MARK: Options

    private func configure() -> TransferError? {
        let options = request.options
        let protocols = options.requireHTTPS ? "https" : "http,https"
        let me = Unmanaged.passUnretained(self).toOpaque()
        var failures: [String] = []
        func check(_ result: CURLcode, _ name: String) {
            if result != CURLE_OK { failures.append("\(name): \(String(cString: curl_easy_strerror(result)))") }
        }

        check(ccurl_setopt_string(easy, CURLOPT_URL, request.url), "CURLOPT_URL")
        check(ccurl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        check(ccurl_setopt_pointer(easy, CURLOPT_PRIVATE, me), "CURLOPT_PRIVATE")
        // > CURLOPT_NOSIGNAL: If onoff is 1, libcurl uses no functions that install signal handlers or any functions
        // > that cause signals to be sent to the process. [...] so that multi-threaded applications can still set/use
        // > all timeout options etc
        check(ccurl_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        check(ccurl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, protocols), "CURLOPT_PROTOCOLS_STR")
        check(
            ccurl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, request.followsRedirects ? 1 : 0),
            "CURLOPT_FOLLOWLOCATION"
        )
        check(ccurl_setopt_long(easy, CURLOPT_MAXREDIRS, max(0, options.maxRedirects)), "CURLOPT_MAXREDIRS")
        // Redirects to file://, ftp:// (or http:// when https is required) fail with CURLE_UNSUPPORTED_PROTOCOL.
        check(ccurl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, protocols), "CURLOPT_REDIR_PROTOCOLS_STR")
        check(ccurl_setopt_string(easy, CURLOPT_USERAGENT, options.userAgent), "CURLOPT_USERAGENT")
        check(
            ccurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, milliseconds(options.connectTimeout))),
            "CURLOPT_CONNECTTIMEOUT_MS"
        )
        check(
            ccurl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, max(0, options.lowSpeedLimit)),
            "CURLOPT_LOW_SPEED_LIMIT"
        )
        check(
            ccurl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, seconds(options.lowSpeedTime))),
            "CURLOPT_LOW_SPEED_TIME"
        )
        // Downloads leave CURLOPT_ACCEPT_ENCODING unset: the bytes on disk must be the file itself, and a Range
        // applies to the encoded representation, which would make resuming meaningless. A fetch is never resumed,
        // and feeds are often sent compressed whether asked or not.
        if request.decodesContent {
            // > To aid applications not having to bother about what specific algorithms this particular libcurl
            // > build supports, libcurl allows a zero-length string to be set ("") to ask for an Accept-Encoding
            // > header to be used that contains all built-in supported encodings.
            check(ccurl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")
        }
        // > CURLOPT_SUPPRESS_CONNECT_HEADERS: When CURLOPT_HTTPPROXYTUNNEL is used [...] the CONNECT response headers
        // > are not passed to the header callback
        // so a proxy's "200 Connection established" is never mistaken for the final response.
        check(ccurl_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "CURLOPT_SUPPRESS_CONNECT_HEADERS")
        // Bigger chunks than the default 16 KiB mean fewer reads per megabyte; libcurl still hands the write callback
        // at most 16 KiB at a time, which is what keeps the speed limit's steps small. libcurl allocates the buffer
        // for each transfer: at 128 KiB, glibc's mmap threshold, every download paid an mmap, page faults on fresh
        // pages and a munmap with its TLB shootdown, 18 % of the daemon's CPU over 64 KiB downloads.
        if request.readsLargeChunks {
            check(ccurl_setopt_long(easy, CURLOPT_BUFFERSIZE, Self.downloadBufferSize), "CURLOPT_BUFFERSIZE")
        }

        check(
            ccurl_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                Unmanaged<TransferContext>.fromOpaque(context!).takeUnretainedValue()
                    .receiveBody(data, size * count)
            },
            "CURLOPT_WRITEFUNCTION"
        )
        check(ccurl_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA")
        check(
            ccurl_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                Unmanaged<TransferContext>.fromOpaque(context!).takeUnretainedValue()
                    .receiveHeader(data, size * count)
            },
            "CURLOPT_HEADERFUNCTION"
        )
        check(ccurl_setopt_pointer(easy, CURLOPT_HEADERDATA, me), "CURLOPT_HEADERDATA")

        if request.resumeOffset > 0 {
            // CURLOPT_RANGE, not CURLOPT_RESUME_FROM: with RESUME_FROM libcurl itself fails a 200 answer with
            // CURLE_RANGE_ERROR, while the policy wants to restart from zero then.
            check(ccurl_setopt_string(easy, CURLOPT_RANGE, "\(request.resumeOffset)-"), "CURLOPT_RANGE")
        }
        if let user = request.basicAuthUser {
            check(ccurl_setopt_string(easy, CURLOPT_USERNAME, user), "CURLOPT_USERNAME")
            check(ccurl_setopt_string(easy, CURLOPT_PASSWORD, request.basicAuthPassword ?? ""), "CURLOPT_PASSWORD")
            // libcurl sends credentials to the original host only (CURLOPT_UNRESTRICTED_AUTH stays 0), so a
            // redirect to a CDN does not leak them.
            check(ccurl_setopt_basic_auth(easy), "CURLOPT_HTTPAUTH")
        }
        if let body = request.postBody {
            // COPYPOSTFIELDS: libcurl keeps its own copy, so the Data need not outlive this call.
            check(
                ccurl_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                "CURLOPT_POSTFIELDSIZE"
            )
            let copied =
                body.isEmpty
                ? ccurl_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, "")
                : body.withUnsafeBytes {
                    ccurl_setopt_pointer(
                        easy,
                        CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: $0.baseAddress)
                    )
                }
            check(copied, "CURLOPT_COPYPOSTFIELDS")
        }
        var lines = request.headers
        if request.resumeOffset > 0, let validator = request.ifRange {
            lines.append("If-Range: \(validator)")
        }
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                failures.append("curl_slist_append: out of memory")
                break
            }
            headerList = appended
        }
        if let headerList {
            check(ccurl_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER")
        }

        if let timeout = request.timeoutMilliseconds {
            check(ccurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, timeout)), "CURLOPT_TIMEOUT_MS")
        }
        if request.freshConnection {
            check(ccurl_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1), "CURLOPT_FRESH_CONNECT")
            check(ccurl_setopt_long(easy, CURLOPT_FORBID_REUSE, 1), "CURLOPT_FORBID_REUSE")
        }

        // Optional: older or differently built libcurls may refuse these, and the transfer works without them.
        _ = ccurl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        _ = ccurl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)

        guard failures.isEmpty else {
            return TransferError(
                code: .engineUnavailable,
                message: "libcurl refused the options for \(redactedURL(request.url)): "
                    + failures.joined(separator: "; ") + ". Check that libcurl is 7.85 or newer with http and https."
            )
        }
        return nil
    }

    /// Applies this transfer's share of the global speed limit (`0`: unlimited), also to a running transfer.
    ///
    /// The engine limits with ``ReceiveRateLimiter`` rather than `CURLOPT_MAX_RECV_SPEED_LARGE` (see there why). The
    /// low-speed limit follows the share: libcurl measures the speed over seconds that include the pauses, so a share
    /// below the limit would make it abort the transfer as stalled when it is only being held back on purpose.
    ///
    /// - Returns: What libcurl said when a paused transfer that is now unlimited was resumed (see
    ///   ``resumeIfAllowed(now:)``).
    func setReceiveSpeedLimit(_ bytesPerSecond: Int64, now: UInt64) -> CURLcode {
        rateLimiter.setRate(bytesPerSecond, now: now)
        let lowSpeed = max(0, request.options.lowSpeedLimit)
        let effective = bytesPerSecond > 0 ? min(lowSpeed, Int(bytesPerSecond / 2)) : lowSpeed
        _ = ccurl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, effective)
        return resumeIfAllowed(now: now)
    }

    /// Resumes a transfer the speed limit paused once its share allows more bytes again.
    ///
    /// - Returns: `CURLE_OK`, or the failure of the held-back bytes that libcurl delivers from within
    ///   `curl_easy_pause` (a full disk, a policy stop); the engine then finishes the transfer with it.
    func resumeIfAllowed(now: UInt64) -> CURLcode {
        rateLimiter.refill(now: now)
        guard isPaused, rateLimiter.mayReceive else { return CURLE_OK }
        isPaused = false
        // CURLPAUSE_CONT is CURLPAUSE_RECV_CONT | CURLPAUSE_SEND_CONT, both 0; a compound macro Swift cannot import.
        return curl_easy_pause(easy, 0)
    }

    /// How long until a paused transfer may receive again, in nanoseconds; `nil` when it is not paused.
    var nanosecondsUntilResuming: UInt64? {
        isPaused ? rateLimiter.nanosecondsUntilReceiving : nil
    }

    // MARK: Callbacks (engine thread, inside curl_multi_perform)

    private func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let data, count > 0 else { return count }
        switch policy.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: count)) {
        case .proceed:
            return count
        case .stop:
            // > If that amount differs from the amount passed in to your function, it signals an error condition to
            // > the library. This causes the transfer to get aborted and the libcurl function used returns
            // > CURLE_WRITE_ERROR.
            return 0
        }
    }

    private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let data, count > 0 else { return count }
        guard rateLimiter.mayReceive else {
            // > If your callback function returns CURL_WRITEFUNC_PAUSE it will cause this transfer to become paused.
            // libcurl keeps the chunk and delivers it again when the engine resumes the transfer, so the policy must
            // not see it now.
            isPaused = true
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        rateLimiter.consume(count)
        switch policy.receiveBody(count: count) {
        case .discard:
            return count
        case .stop:
            return 0  // CURLE_WRITE_ERROR; finish(_:) reports the policy's reason instead
        case .write(let offset, let truncateFirst):
            if truncateFirst && !truncate() { return 0 }
            var written = 0
            while written < count {
                let result = pwrite(
                    request.fileDescriptor,
                    data + written,
                    count - written,
                    off_t(offset) + off_t(written)
                )
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else {
                    let code = result < 0 ? errno : EIO
                    recordWriteFailure("pwrite", offset: offset + Int64(written), errno: code)
                    return 0
                }
                written += result
            }
            startWriteback(from: offset, through: offset + Int64(count))
            reportProgress(force: false)
            return count
        }
    }

    /// Write-behind: after every 8 MiB written, asks the kernel to start writing those pages to disk, without waiting.
    ///
    /// Otherwise the page cache holds what arrived until a checkpoint's or the completion's fsync, and the disk
    /// idles in between: a 256 MiB download took 1.6 times as long as writing and syncing the same bytes without
    /// any network. Failures are ignored: this only schedules work the later fsync would do anyway.
    ///
    /// The call runs on a queue of its own, on a duplicate of the descriptor (the transfer may close its own
    /// first): `sync_file_range` blocks while the disk's request queue is full, measured here at up to 14 ms per
    /// call, and on the engine thread that stalled every transfer while the sockets filled up.
    private func startWriteback(from start: Int64, through end: Int64) {
        if writebackOffset < 0 || start < writebackOffset { writebackOffset = start }  // the first write, or a restart
        guard end - writebackOffset >= Self.writebackChunk else { return }
        let (offset, count) = (off_t(writebackOffset), off_t(end - writebackOffset))
        writebackOffset = end
        let descriptor = fcntl(request.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        guard descriptor >= 0 else { return }
        Self.writebackQueue.async {
            _ = cposix_start_writeback(descriptor, offset, count)
            close(descriptor)
        }
    }

    private static let writebackChunk: Int64 = 8 << 20
    private static let writebackQueue = DispatchQueue(label: "singlecast.write-behind")

    /// Truncates the file to zero bytes; records the failure and returns `false` when that fails.
    private func truncate() -> Bool {
        while ftruncate(request.fileDescriptor, 0) != 0 {
            if errno == EINTR { continue }
            recordWriteFailure("ftruncate", offset: 0, errno: errno)
            return false
        }
        return true
    }

    private func recordWriteFailure(_ operation: String, offset: Int64, errno code: Int32) {
        let path = pathOfDescriptor(request.fileDescriptor)
        // Claiming fewer valid bytes is always safe; after a failed truncate nothing is known to be valid.
        let valid = operation == "ftruncate" ? 0 : offset
        writeFailure = (
            .write(request.url, operation: operation, path: path, offset: offset, errno: code),
            valid
        )
    }

    /// Reports bytes written since the last report, once the interval allows. The engine calls it on every turn of
    /// its loop: writes report at most every 100 ms, so without it the last bytes of a burst after which the server
    /// falls silent would stay unreported for as long as the silence lasts.
    func reportPendingProgress() {
        if bytesInFile != reportedBytes { reportProgress(force: false) }
    }

    private func reportProgress(force: Bool) {
        let nanoseconds = monotonicNanoseconds()
        guard force || nanoseconds &- lastProgressNanoseconds >= TransferContext.progressInterval else { return }
        lastProgressNanoseconds = nanoseconds
        reportedBytes = bytesInFile
        // Validators only of a response whose body is written (never of a redirect hop, an error page or a 206 of
        // another version of the file).
        let writing = policy.accepted
        progress(
            TransferProgress(
                bytesInFile: bytesInFile,
                totalLength: policy.totalLength ?? request.expectedTotal,
                etag: writing ? policy.etag : nil,
                lastModified: writing ? policy.lastModified : nil
            )
        )
    }

    private var bytesInFile: Int64 { writeFailure?.bytesInFile ?? policy.bytesInFile }

    // MARK: Completion

    /// A transfer to run again, on a new connection, for the same caller.
    struct FreshConnectionRetry {
        var request: TransferRequest
        var progress: @Sendable (TransferProgress) -> Void
        var continuation: CheckedContinuation<TransferOutcome, Never>
    }

    /// Builds the outcome, cleans up the easy handle (already removed from the multi handle), reports the last
    /// progress and resumes the caller. `cancellation` overrides whatever libcurl said.
    ///
    /// - Returns: Instead of resuming the caller, the transfer to start again when it failed with a protocol error
    ///   on a reused connection before anything was written: a server that sent more than its `Content-Length`
    ///   leaves the excess on the connection, where the next request reads it instead of a status line. Only the
    ///   connection is broken, so a new one is tried at once (and once: the retry never reuses or keeps one).
    func finish(_ result: CURLcode, cancellation: TransferError? = nil) -> FreshConnectionRetry? {
        precondition(!finished, "transfer finished twice")
        if policy.truncatePending && writeFailure == nil {
            // A full response arrived without body bytes: the old contents must still go, so that the reported
            // bytesInFile (0) is true.
            if truncate() { policy.truncated() }
        }
        let outcome = makeOutcome(result, cancellation: cancellation)
        if case .failed(let error, nil, let bytesInFile) = outcome, error.code == .protocolError,
            error.curlCode != nil, cancellation == nil, bytesInFile == request.resumeOffset,
            !request.freshConnection, usedReusedConnection
        {
            releaseHandle(keep: false)
            finished = true
            var retry = request
            retry.freshConnection = true
            return FreshConnectionRetry(request: retry, progress: progress, continuation: continuation)
        }
        releaseHandle(
            keep: EasyHandlePool.mayKeep(
                request,
                succeeded: result == CURLE_OK,
                // A 304's policy stops writing but lets libcurl end the transfer: CURLE_OK, and the handle is kept.
                cancelled: cancellation != nil || writeFailure != nil,
                paused: isPaused
            )
        )
        reportProgress(force: true)
        finished = true
        request.ended?(outcome)
        continuation.resume(returning: outcome)
        return nil
    }

    /// Whether the transfer ran on a connection an earlier transfer had opened.
    private var usedReusedConnection: Bool {
        // > CURLINFO_NUM_CONNECTS: Pass a pointer to a long to receive how many new connections libcurl had to
        // > create to achieve the previous transfer (only the successful connects are counted).
        var connects = 0
        return ccurl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects == 0
    }

    /// Completes a transfer whose easy handle never reached the multi handle.
    func abandon(_ error: TransferError) {
        precondition(!finished, "transfer finished twice")
        releaseHandle(keep: false)
        finished = true
        let outcome = TransferOutcome.failed(error, response: nil, bytesInFile: request.resumeOffset)
        request.ended?(outcome)
        continuation.resume(returning: outcome)
    }

    /// Hands the easy handle back (reset and kept for another fetch with `keep`, else cleaned up), then frees what its
    /// options pointed to: after the reset, or the cleanup, nothing refers to them any more.
    private func releaseHandle(keep: Bool) {
        handles.give(easy, keep: keep)
        curl_slist_free_all(headerList)
        headerList = nil
        errorBuffer.deallocate()
    }

    private func makeOutcome(_ result: CURLcode, cancellation: TransferError?) -> TransferOutcome {
        let response = policy.hasFinalResponse ? makeResponse() : nil
        if let cancellation {
            return .failed(cancellation, response: response, bytesInFile: bytesInFile)
        }
        if let writeFailure {
            return .failed(writeFailure.error, response: response, bytesInFile: writeFailure.bytesInFile)
        }
        if let stop = policy.stopReason {
            switch stop {
            case .httpError, .rangeNotSatisfiable:
                guard let response else { break }
                return stop == .rangeNotSatisfiable ? .rangeNotSatisfiable(response) : .httpError(response)
            case .rangeMismatch(let detail):
                return .failed(
                    .rangeMismatch(request.url, detail, resuming: request.resumeOffset > 0),
                    response: response,
                    bytesInFile: bytesInFile
                )
            case .tooLarge(let announced):
                let limit = request.options.maxFileSize ?? 0
                return .failed(
                    .tooLarge(request.url, limit: limit, size: announced),
                    response: response,
                    bytesInFile: bytesInFile
                )
            case .noSpace(let needed, let free):
                return .failed(
                    .noSpace(request.url, needed: needed, free: free),
                    response: response,
                    bytesInFile: bytesInFile
                )
            case .malformed(let detail):
                let error = TransferError(
                    code: .protocolError,
                    message: "The server for \(redactedURL(request.url)) sent a malformed response: \(detail). "
                        + "Try again later; if it persists, tell the publisher."
                )
                return .failed(error, response: response, bytesInFile: bytesInFile)
            }
        }
        if result == CURLE_OK, let response {
            if request.options.requireHTTPS && !URLText.isHTTPS(response.finalURL) {
                let error = TransferError(
                    code: .insecureRedirect,
                    message: "Downloading \(redactedURL(request.url)) ended at \(redactedURL(response.finalURL)), "
                        + "which is not https; HTTPS-only downloads refuse it."
                )
                return .failed(error, response: response, bytesInFile: bytesInFile)
            }
            if (200..<300).contains(response.status) {
                return .completed(response, bytesInFile: bytesInFile)
            }
            return .httpError(response)
        }
        let message = String(cString: errorBuffer)
        let failure = CurlFailure(
            code: Int32(bitPattern: result.rawValue),
            curlMessage: message.isEmpty ? String(cString: curl_easy_strerror(result)) : message,
            url: request.url,
            redirectLocation: policy.lastRedirectLocation,
            bodyBytesReceived: policy.bodyBytesReceived,
            contentLength: policy.hasFinalResponse ? policy.contentLength : nil,
            bytesInFile: bytesInFile,
            resumable: request.resumable,
            options: request.options,
            readingHeaders: !policy.hasFinalResponse
        )
        return .failed(TransferError(failure), response: response, bytesInFile: bytesInFile)
    }

    private func makeResponse() -> TransferResponse {
        var effective: UnsafeMutablePointer<CChar>?
        let finalURL =
            ccurl_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK
            ? effective.map { String(cString: $0) } ?? request.url : request.url
        let headers = policy.headers
        return TransferResponse(
            status: policy.status ?? 0,
            finalURL: finalURL,
            etag: policy.etag,
            lastModified: policy.lastModified,
            contentLength: policy.contentLength,
            totalLength: policy.totalLength,
            contentType: headers["content-type"],
            retryAfter: headers["retry-after"],
            resumed: policy.resumed,
            location: headers["location"]
        )
    }
}

@available(*, unavailable)
extension TransferContext: Sendable {}

/// The path of an open descriptor, for messages (`/proc/self/fd/N`), or `file descriptor N`.
func pathOfDescriptor(_ descriptor: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
    guard length > 0 else { return "file descriptor \(descriptor)" }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Nanoseconds of `CLOCK_MONOTONIC`, for progress intervals and the speed limit.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
