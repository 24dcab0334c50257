import CPosix
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// One GET of a small resource (a feed, a directory's JSON, artwork) into memory.
package struct FetchRequest: Sendable {
    /// An `http://` or `https://` URL.
    package var url: String
    /// Extra request headers, each `"Name: value"`.
    package var headers: [String]
    /// The user name for HTTP basic authentication; sent only to the origin of ``url``, never logged.
    package var basicAuthUser: String?
    /// The password for HTTP basic authentication; never logged.
    package var basicAuthPassword: String?
    /// The ETag of the copy the caller has, sent as `If-None-Match`; a match comes back as `304` without a body.
    package var ifNoneMatch: String?
    /// The `Last-Modified` of the copy the caller has, sent as `If-Modified-Since`.
    package var ifModifiedSince: String?
    /// The largest body accepted; a bigger one fails with ``TransferError/Code/tooLarge`` as soon as its announced
    /// size or the bytes received exceed it.
    package var maxBytes: Int64
    /// Limits and policies; ``TransferOptions/maxRedirects`` and ``TransferOptions/requireHTTPS`` apply to every hop.
    package var options: TransferOptions
    /// A body to POST instead of a GET (a sync's uploads); the caller names its type in ``headers``.
    package var postBody: Data?
    /// When the whole fetch (the wait for a slot and every hop) must be over; past it the fetch throws
    /// ``FetchDeadline/failure(_:)``.
    package var deadline: FetchDeadline?
    /// Called on the engine's thread as soon as the fetch's last transfer has ended, before the fetch returns: a
    /// transfer whose answer is not a redirect to follow (``RedirectPlan/redirect(of:)``). ``FetchLimiter`` gives its
    /// slot to the next fetch there rather than once this fetch's task has run again. Not called when the engine
    /// refuses a transfer, or a redirect cannot be followed: the caller gives its slot back itself then.
    package var lastTransferEnded: (@Sendable () -> Void)?
    /// The limiter's slot the first transfer waits for in the engine (set by ``FetchLimiter``).
    var admission: FetchAdmission?

    package init(
        url: String,
        headers: [String] = [],
        basicAuthUser: String? = nil,
        basicAuthPassword: String? = nil,
        ifNoneMatch: String? = nil,
        ifModifiedSince: String? = nil,
        maxBytes: Int64 = 64 << 20,
        options: TransferOptions = TransferOptions(),
        postBody: Data? = nil,
        deadline: FetchDeadline? = nil
    ) {
        self.postBody = postBody
        self.deadline = deadline
        self.url = url
        self.headers = headers
        self.basicAuthUser = basicAuthUser
        self.basicAuthPassword = basicAuthPassword
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.maxBytes = maxBytes
        self.options = options
    }
}

/// What a fetch brought back: the final response and, for a `2xx`, its body.
package struct FetchResult: Sendable {
    /// The final response: `200`, `304`, `404`, `410`…; ``TransferResponse/finalURL`` is where the redirects ended.
    package var response: TransferResponse
    /// The body of a `2xx`; empty for `304`. Bodies of `3xx`, `4xx` and `5xx` answers are dropped.
    package var body: Data
    /// The URL the resource permanently moved to: set when every redirect hop was 301 or 308 (then the caller updates
    /// its stored URL); nil otherwise.
    ///
    /// It is set whatever the final status, so a feed that moved for good and is now gone reports both.
    package var permanentRedirect: String?

    package init(response: TransferResponse, body: Data, permanentRedirect: String? = nil) {
        self.response = response
        self.body = body
        self.permanentRedirect = permanentRedirect
    }
}

extension HTTPEngine {
    /// Fetches a small resource into memory, following redirects hop by hop.
    ///
    /// Each hop is one transfer with libcurl's own redirect following turned off, so the fetch knows the status of
    /// every hop (for ``FetchResult/permanentRedirect``) and applies its rules itself: `Location` resolved against
    /// the current URL (RFC 3986), http and https only, at most ``TransferOptions/maxRedirects`` hops, no URL
    /// visited twice, no step down from https to http under ``TransferOptions/requireHTTPS``, and credentials
    /// (basic authentication, `Authorization` and `Cookie` headers) sent to the original origin only. The body is
    /// written into an anonymous in-memory file (`memfd_create`) and mapped once the transfer is complete: the body
    /// is in memory once, in the file's pages.
    ///
    /// Cancelling the calling task stops the transfer and throws ``TransferError/Code/cancelled``. Past the request's
    /// ``FetchRequest/deadline`` it throws the deadline's ``FetchDeadline/failure(_:)``: every hop runs with what is
    /// left of it as libcurl's total timeout.
    ///
    /// 2xx/3xx(304)/4xx/5xx all come back as a FetchResult; only transport failures (DNS, refused, timeout, tooLarge,
    /// bad scheme, redirect loop/limit, https→http under requireHTTPS) throw.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The final response, its body for a `2xx`, and the new permanent URL when there is one.
    /// - Throws: ``TransferError``.
    package func fetch(_ request: FetchRequest) async throws(TransferError) -> FetchResult {
        let memory = MemoryFile.Holder()
        var plan = RedirectPlan(url: request.url, options: request.options)
        while true {
            if Task.isCancelled { throw .cancelled(plan.current) }
            var hop = plan.transferRequest(request, fileDescriptor: -1)
            // Made as the hop starts, which for a first hop waiting for its slot may be much later, on another
            // thread: the memory file (the first hop's serves every hop), and what is left of the deadline.
            hop.prepare = { [spares = spareMemoryFiles, url = request.url, deadline = request.deadline] hop in
                if let deadline {
                    guard let left = deadline.remainingMilliseconds(at: .now) else { return deadline.failure(url) }
                    hop.timeoutMilliseconds = left
                }
                do throws(TransferError) {
                    hop.fileDescriptor = try memory.descriptor(url: url, spares: spares)
                } catch {
                    return error
                }
                return nil
            }
            if plan.hops == 0 { hop.admission = request.admission }
            if let lastTransferEnded = request.lastTransferEnded {
                hop.ended = { outcome in if RedirectPlan.redirect(of: outcome) == nil { lastTransferEnded() } }
            }
            let outcome = await transfer(hop) { _ in }
            if let redirect = RedirectPlan.redirect(of: outcome) {
                try plan.follow(status: redirect.status, location: redirect.location)
                continue
            }
            switch outcome {
            case .completed(let response, let bytesInFile):
                guard let file = memory.file else { preconditionFailure("a fetch completed without its memory file") }
                let body = try file.map(count: bytesInFile, url: plan.current)
                return FetchResult(response: response, body: body, permanentRedirect: plan.permanentRedirect)
            case .httpError(let response), .rangeNotSatisfiable(let response):
                return FetchResult(response: response, body: Data(), permanentRedirect: plan.permanentRedirect)
            case .failed(let error, _, _):
                // libcurl's total timeout starts after the deadline's remainder was taken, so it ends at (about) the
                // deadline: a timeout then is the deadline's, not a connect timeout's or the low-speed limit's.
                if error.code == .timeout, let deadline = request.deadline, deadline.accountsForTimeout(at: .now) {
                    throw deadline.failure(request.url)
                }
                throw error
            }
        }
    }
}

/// The redirect rules of ``HTTPEngine/fetch(_:)``: where the next hop goes, whether it may, and whether every hop so
/// far was permanent. Pure, so the rules are tested without a server.
package struct RedirectPlan: Sendable, Hashable {
    /// The URL the next transfer asks for.
    package private(set) var current: String
    /// Redirects followed so far.
    package private(set) var hops = 0
    private let original: String
    private let options: TransferOptions
    private var visited: Set<String>
    private var allPermanent = true

    package init(url: String, options: TransferOptions) {
        current = url
        original = url
        self.options = options
        visited = [url]
    }

    /// The statuses that redirect: 301, 302, 303, 307, 308. `304` (not modified) and `305` (use proxy) do not.
    package static func isRedirect(_ status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// The redirect a hop's outcome asks the fetch to follow: a redirect status with a `Location`; `nil` when the
    /// outcome ends the fetch.
    static func redirect(of outcome: TransferOutcome) -> (status: Int, location: String)? {
        switch outcome {
        case .httpError(let response), .rangeNotSatisfiable(let response):
            guard let location = response.location, isRedirect(response.status) else { return nil }
            return (response.status, location)
        case .completed, .failed:
            return nil
        }
    }

    /// The last URL, when at least one hop happened and every hop was a `301` or `308`.
    package var permanentRedirect: String? { hops > 0 && allPermanent ? current : nil }

    /// Moves on to `location`, the `Location` of a redirect from ``current``.
    ///
    /// - Throws: ``TransferError`` with ``TransferError/Code/tooManyRedirects`` past the limit or on a loop,
    ///   ``TransferError/Code/invalidURL`` for an unusable `Location`, ``TransferError/Code/schemeNotAllowed`` for
    ///   a scheme other than http and https, ``TransferError/Code/insecureRedirect`` for https to http under
    ///   ``TransferOptions/requireHTTPS``.
    package mutating func follow(status: Int, location: String) throws(TransferError) {
        let from = redactedURL(original)
        guard hops < options.maxRedirects else {
            throw TransferError(
                code: .tooManyRedirects,
                message: "Fetching \(from) was redirected more than \(options.maxRedirects) times. The server is "
                    + "probably in a redirect loop; check the URL in a browser."
            )
        }
        let trimmed = location.trimmingWhitespace()
        let next = URL(string: current).flatMap { URL(string: trimmed, relativeTo: $0) }?.absoluteString ?? ""
        let invalid = TransferError(
            code: .invalidURL,
            message: "Fetching \(from) was redirected to \"\(redactedURL(String(location.prefix(200))))\", which is "
                + "not a valid URL. Tell the publisher."
        )
        guard !trimmed.isEmpty, let scheme = URLText.scheme(of: next) else { throw invalid }
        guard URLText.isFetched(scheme: scheme) else {
            throw TransferError(
                code: .schemeNotAllowed,
                message: "Fetching \(from) was redirected to \(redactedURL(next)), a '\(scheme)' URL, but only http "
                    + "and https are fetched. Ask the publisher for an https link."
            )
        }
        guard URLText.host(of: next) != nil else { throw invalid }
        if options.requireHTTPS && scheme != "https" {
            throw TransferError(
                code: .insecureRedirect,
                message: "Fetching \(from) was redirected from https to plain http (\(redactedURL(next))), which "
                    + "HTTPS-only fetches refuse. Turn off the HTTPS requirement if that is acceptable."
            )
        }
        guard visited.insert(next).inserted else {
            throw TransferError(
                code: .tooManyRedirects,
                message: "Fetching \(from) went round a redirect loop (back to \(redactedURL(next))). Check the URL "
                    + "in a browser and tell the publisher."
            )
        }
        hops += 1
        allPermanent = allPermanent && (status == 301 || status == 308)
        current = next
    }

    /// The transfer for the next hop: redirects not followed by libcurl, conditional headers added, credentials
    /// only while the hop stays on the original origin.
    func transferRequest(_ fetch: FetchRequest, fileDescriptor: Int32) -> TransferRequest {
        // Parsing both URLs (four URLComponents) was 4 % of a refresh's CPU, for a first hop that is the original.
        let sameOrigin = current == original || Self.origin(current) == Self.origin(original)
        var headers = fetch.headers
        if !sameOrigin {
            headers.removeAll { line in
                let name = line.prefix(while: { $0 != ":" }).trimmingWhitespace().lowercased()
                return name == "authorization" || name == "cookie"
            }
        }
        // A validator that cannot be sent (a bare CR stored by an older version) makes the fetch unconditional
        // instead of unsendable for good.
        if let etag = ResponseBodyPolicy.usableValidator(fetch.ifNoneMatch) { headers.append("If-None-Match: \(etag)") }
        if let date = ResponseBodyPolicy.usableValidator(fetch.ifModifiedSince) {
            headers.append("If-Modified-Since: \(date)")
        }
        var options = fetch.options
        options.maxFileSize = min(options.maxFileSize ?? .max, fetch.maxBytes)
        var request = TransferRequest(
            url: current,
            headers: headers,
            basicAuthUser: sameOrigin ? fetch.basicAuthUser : nil,
            basicAuthPassword: sameOrigin ? fetch.basicAuthPassword : nil,
            fileDescriptor: fileDescriptor,
            options: options
        )
        request.followsRedirects = false
        // A POST goes to the original origin only, like the credentials it usually carries.
        request.postBody = sameOrigin ? fetch.postBody : nil
        // The body arrives decoded, and maxBytes (as maxFileSize) counts the decoded bytes: a small gzip bomb is
        // refused as soon as what it unpacks to passes the limit, before more of it reaches memory.
        request.decodesContent = true
        request.resumable = false
        request.readsLargeChunks = false
        return request
    }

    /// `scheme://host:port`, lower-cased, with the scheme's default port filled in.
    static func origin(_ url: String) -> String? {
        guard let scheme = URLText.scheme(of: url), let host = URLText.host(of: url) else { return nil }
        let port = URLComponents(string: url)?.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}

/// An anonymous in-memory file (`memfd_create`) that a transfer writes with `pwrite` and a fetch maps; its pages are
/// freed once the body mapped from it is.
///
/// A file that holds nothing when the fetch is done (a `304`, a dropped error page, a failure before any body byte)
/// goes back to the engine's spares for the next fetch: a refresh of 1,000 unchanged feeds made and closed 1,000 of
/// them, 3 % of its CPU in the kernel alone (docs/ARCHITECTURE.md, Refreshing many feeds). One that was mapped never
/// does: the mapping still reads its pages.
///
/// `@unchecked Sendable` for one hand-over: it is made on the thread that starts the fetch's first transfer
/// (``Holder``), and used by the fetch's task only once that transfer has ended, which the continuation resuming the
/// task orders after it.
private final class MemoryFile: @unchecked Sendable {
    let descriptor: Int32
    private let spares: SpareDescriptors
    /// Only ever set by the fetch's task.
    private var mapped = false

    /// A fetch's memory file, made when its first transfer starts (``TransferRequest/prepare``: on the engine's
    /// thread, or the caller's), so that a fetch waiting for its slot holds no descriptor.
    final class Holder: Sendable {
        private let made = Mutex<MemoryFile?>(nil)

        /// The file's descriptor, made the first time.
        func descriptor(url: String, spares: SpareDescriptors) throws(TransferError) -> Int32 {
            try made.withLock { (made) throws(TransferError) -> Int32 in
                if let file = made { return file.descriptor }
                let file = try MemoryFile(url: url, spares: spares)
                made = file
                return file.descriptor
            }
        }

        var file: MemoryFile? { made.withLock { $0 } }
    }

    init(url: String, spares: SpareDescriptors) throws(TransferError) {
        self.spares = spares
        if let spare = spares.take() {
            descriptor = spare
            return
        }
        let descriptor = cposix_memfd("singlecast-fetch")
        guard descriptor >= 0 else {
            let code = errno
            throw TransferError(
                code: .io,
                message: "Fetching \(redactedURL(url)) failed: memfd_create: \(String(cString: strerror(code))). The "
                    + "system is probably out of memory or file descriptors.",
                systemErrno: code
            )
        }
        self.descriptor = descriptor
    }

    /// The first `count` bytes, mapped rather than read: the body is then in memory once, in the file's pages,
    /// instead of once there and once more in a copy on the heap (a 99 MB feed was both at once). The mapping keeps
    /// the file after its descriptor is closed, and goes with the last copy of the data.
    func map(count: Int64, url: String) throws(TransferError) -> Data {
        guard count > 0 else { return Data() }
        var status = stat()
        // Touching a mapped page past the end of the file raises SIGBUS: map only what the file holds.
        guard fstat(descriptor, &status) == 0, Int64(status.st_size) >= count, let length = Int(exactly: count) else {
            throw failure("the file holds fewer bytes than were received", code: EIO, url: url)
        }
        // Private and writable: a writer of the data would write its own copy of a page, never the file. Populated,
        // so the process's RSS counts the body from now on, as it counted the copy (the pages exist either way).
        mapped = true
        guard let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_POPULATE, descriptor, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            let code = errno
            throw failure("mmap: \(String(cString: strerror(code)))", code: code, url: url)
        }
        return Data(bytesNoCopy: address, count: length, deallocator: .custom { munmap($0, $1) })
    }

    private func failure(_ what: String, code: Int32, url: String) -> TransferError {
        TransferError(
            code: .io,
            message: "Fetching \(redactedURL(url)) failed: reading the body back from memory: \(what).",
            systemErrno: code
        )
    }

    deinit {
        // Empty (the transfer truncated or wrote nothing) and never mapped: as good as a new one.
        var status = stat()
        if !mapped, fstat(descriptor, &status) == 0, status.st_size == 0, spares.give(descriptor) { return }
        close(descriptor)
    }
}

/// A few open descriptors kept for reuse, taken and given from any thread.
final class SpareDescriptors: Sendable {
    private let spares = Mutex<[Int32]>([])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func take() -> Int32? { spares.withLock { $0.popLast() } }

    /// Keeps `descriptor` while there is room; `false` when the caller must close it.
    func give(_ descriptor: Int32) -> Bool {
        spares.withLock { spares in
            guard spares.count < capacity else { return false }
            spares.append(descriptor)
            return true
        }
    }

    deinit {
        for descriptor in spares.withLock({ $0 }) { close(descriptor) }
    }
}
