/// The header fields of one HTTP response, looked up case-insensitively.
package struct HTTPHeaderFields: Sendable, Hashable {
    private var fields: [(lowercasedName: String, value: String)] = []

    package init() {}

    package init(_ fields: [(name: String, value: String)]) {
        for field in fields { append(name: field.name, value: field.value) }
    }

    /// The value of the first field called `name` (any case), or `nil`.
    package subscript(_ name: String) -> String? {
        let name = name.lowercased()
        return fields.first(where: { $0.lowercasedName == name })?.value
    }

    package var count: Int { fields.count }

    mutating func append(name: String, value: String) {
        fields.append((name.lowercased(), value))
    }

    /// Appends an obsolete line folding continuation (RFC 9112 §5.2) to the last value.
    mutating func continueLastValue(_ text: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += " " + text
    }

    mutating func removeAll() { fields.removeAll(keepingCapacity: true) }

    package static func == (lhs: HTTPHeaderFields, rhs: HTTPHeaderFields) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.lowercasedName == $1.lowercasedName && $0.value == $1.value }
    }

    package func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.lowercasedName)
            hasher.combine(field.value)
        }
    }
}

/// A parsed `Content-Range: bytes first-last/total` (RFC 9110 §14.4).
package struct ContentRange: Sendable, Hashable {
    /// The offset of the first byte.
    package var first: Int64
    /// The offset of the last byte (inclusive).
    package var last: Int64
    /// The size of the whole file; `nil` for `*`.
    package var total: Int64?

    package init(first: Int64, last: Int64, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    /// The total of the unsatisfied form `bytes */T` that comes with a `416`.
    package static func unsatisfiedTotal(_ header: String) -> Int64? {
        let text = Substring(header).drop(while: { $0 == " " || $0 == "\t" })
        guard text.lowercased().hasPrefix("bytes */") else { return nil }
        return Int64(text.dropFirst(8).trimmingSuffix(while: { $0 == " " || $0 == "\t" || $0.isNewline }))
    }

    /// Parses `bytes a-b/T` or `bytes a-b/*`; returns `nil` for anything else, including the unsatisfied form
    /// `bytes */T` and ranges that contradict themselves.
    package init?(_ header: String) {
        var text = Substring(header).drop(while: { $0 == " " || $0 == "\t" })
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        text = text.dropFirst(6).drop(while: { $0 == " " })
        guard let dash = text.firstIndex(of: "-"), let slash = text.firstIndex(of: "/"), dash < slash,
            let first = Int64(text[..<dash]),
            let last = Int64(text[text.index(after: dash)..<slash])
        else { return nil }
        let totalText = text[text.index(after: slash)...].trimmingSuffix(while: {
            $0 == " " || $0 == "\t" || $0.isNewline
        })
        let total: Int64?
        if totalText == "*" {
            total = nil
        } else {
            guard let value = Int64(totalText) else { return nil }
            total = value
        }
        guard first >= 0, last >= first, total.map({ last < $0 }) ?? true else { return nil }
        self.init(first: first, last: last, total: total)
    }
}

/// Decides, from the header and body callbacks of one transfer, which body bytes go where in the file — and stops the
/// transfer before a single byte lands where it does not belong.
///
/// The engine feeds it every header line (`CURLOPT_HEADERFUNCTION`) and the size of every body chunk
/// (`CURLOPT_WRITEFUNCTION`), and performs the ``BodyAction`` it returns. Only the *final* response counts: a `1xx`
/// and a redirect hop reset the collected headers and their bodies are discarded.
///
/// - `206` is appended only when its `Content-Range` starts exactly at the resume offset (and its total matches the
///   expected total, when both are known); anything else stops with ``Stop/rangeMismatch(_:)`` before writing.
/// - Any other `2xx` (the server ignored `Range`, or `If-Range` failed because the file changed) rewrites the file
///   from byte 0: the first write truncates it.
/// - `416` stops with ``Stop/rangeNotSatisfiable``, other statuses of 300 and more with ``Stop/httpError(_:)``: error
///   pages are never written.
package struct ResponseBodyPolicy: Sendable, Hashable {
    /// The facts about the request the decisions depend on.
    package struct Configuration: Sendable, Hashable {
        /// Bytes already in the file; `0` means no `Range` was asked for.
        package var resumeOffset: Int64
        /// The whole-file size learnt earlier.
        package var expectedTotal: Int64?
        /// The largest acceptable file.
        package var maxFileSize: Int64?
        /// Whether libcurl follows redirects (so a `3xx` with a `Location` is a hop, not the final response).
        package var followsRedirects: Bool

        package init(
            resumeOffset: Int64 = 0,
            expectedTotal: Int64? = nil,
            maxFileSize: Int64? = nil,
            followsRedirects: Bool = true
        ) {
            self.resumeOffset = resumeOffset
            self.expectedTotal = expectedTotal
            self.maxFileSize = maxFileSize
            self.followsRedirects = followsRedirects
        }
    }

    /// Why the transfer must stop now.
    package enum Stop: Sendable, Hashable {
        /// A status of 300 or more that is not a followed redirect, other than 416.
        case httpError(Int)
        /// 416.
        case rangeNotSatisfiable
        /// A 206 whose bytes do not belong at the resume offset; the text says why.
        case rangeMismatch(String)
        /// The announced size (`nil`: the bytes received) exceeds the maximum file size.
        case tooLarge(announced: Int64?)
        /// The response does not make sense as HTTP; the text says why.
        case malformed(String)
    }

    /// What to do with a header line.
    package enum HeaderAction: Sendable, Hashable {
        case proceed
        case stop(Stop)
    }

    /// What to do with a chunk of body bytes.
    package enum BodyAction: Sendable, Hashable {
        /// A redirect hop's or `1xx` body: drop it.
        case discard
        /// Write the chunk at `offset`; when `truncateFirst`, truncate the file to zero bytes first.
        case write(offset: Int64, truncateFirst: Bool)
        case stop(Stop)
    }

    private enum Phase: Sendable, Hashable {
        /// Reading the header block of a response (the status line has been seen, or nothing yet).
        case headers
        /// A `1xx` or followed redirect ended its headers; anything until the next status line is discarded.
        case hop
        /// The final response was accepted; body bytes go to `nextOffset`.
        case body(nextOffset: Int64, truncatePending: Bool)
        /// Stopped; `bytesInFile` is what the file held at that moment.
        case stopped(Stop, bytesInFile: Int64)
    }

    package let configuration: Configuration
    private var phase = Phase.headers

    /// The status code of the latest status line.
    package private(set) var status: Int?
    /// The header fields of the latest response.
    package private(set) var headers = HTTPHeaderFields()
    /// The `Location` of the latest redirect hop.
    package private(set) var lastRedirectLocation: String?
    /// Whether the final response's headers are complete (whether it was accepted or not).
    package private(set) var hasFinalResponse = false
    /// Whether the accepted final response is a `206` appended at the resume offset.
    package private(set) var resumed = false
    /// Body bytes of the final response received so far (accepted or not).
    package private(set) var bodyBytesReceived: Int64 = 0

    package init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Valid bytes in the file, assuming every approved write succeeded: the resume offset until a final response is
    /// accepted, then the end of the last approved write (`0` once a full response was accepted); after a stop, what
    /// the file held when it stopped.
    package var bytesInFile: Int64 {
        switch phase {
        case .body(let nextOffset, _): nextOffset
        case .stopped(_, let bytesInFile): bytesInFile
        case .headers, .hop: configuration.resumeOffset
        }
    }

    /// Whether an accepted full response still has to truncate the file because no body byte arrived yet; the engine
    /// truncates when the transfer ends in that state, so that ``bytesInFile`` (`0`) stays true.
    package var truncatePending: Bool {
        if case .body(_, true) = phase { return true }
        return false
    }

    /// The `Content-Length` of the latest response.
    package var contentLength: Int64? { headers["content-length"].flatMap { Int64($0.trimmed) } }

    /// The size of the whole file according to the latest response: the `Content-Range` total of a `206`, the
    /// `Content-Length` of a `200`, the `bytes */T` of a `416`.
    package var totalLength: Int64? {
        switch status {
        case 206: headers["content-range"].flatMap(ContentRange.init)?.total
        case .some(200..<300): contentLength
        case 416: headers["content-range"].flatMap(ContentRange.unsatisfiedTotal)
        default: nil
        }
    }

    /// Feeds one header line as libcurl delivers it: a status line, a field, or the blank line that ends a block.
    package mutating func receiveHeaderLine(_ rawLine: String) -> HeaderAction {
        switch phase {
        case .body:
            return .proceed  // a chunked trailer: the decision is made
        case .stopped(let stop, _):
            return .stop(stop)
        case .headers, .hop:
            break
        }
        // "\r\n" is one Character in Swift; isNewline covers it, "\n" and "\r".
        let line = Substring(rawLine).trimmingSuffix(while: { $0.isNewline })
        if line.hasPrefix("HTTP/") {
            // A new response: a redirect hop or 1xx came before it. Its headers must not leak into this one.
            headers.removeAll()
            phase = .headers
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard fields.count >= 2, let code = Int(fields[1]), (100..<600).contains(code) else {
                return stop(.malformed("unreadable status line \"\(line.prefix(80))\""))
            }
            status = code
            return .proceed
        }
        guard case .headers = phase else { return .proceed }  // stray bytes after a hop's headers
        if line.isEmpty {
            return endOfHeaders()
        }
        guard status != nil else { return stop(.malformed("a header field before the status line")) }
        if line.first == " " || line.first == "\t" {
            headers.continueLastValue(line.trimmed)
        } else if let colon = line.firstIndex(of: ":") {
            headers.append(name: line[..<colon].trimmed, value: line[line.index(after: colon)...].trimmed)
        }
        return .proceed
    }

    /// Feeds the size of one body chunk; the engine performs the returned action.
    package mutating func receiveBody(count: Int) -> BodyAction {
        switch phase {
        case .hop:
            return .discard
        case .headers:
            return .stop(stopping(.malformed("body bytes before the end of the headers")))
        case .stopped(let stop, _):
            return .stop(stop)
        case .body(let nextOffset, let truncatePending):
            bodyBytesReceived += Int64(count)
            let end = nextOffset + Int64(count)
            if let limit = configuration.maxFileSize, end > limit {
                return .stop(stopping(.tooLarge(announced: nil)))
            }
            phase = .body(nextOffset: end, truncatePending: false)
            return .write(offset: nextOffset, truncateFirst: truncatePending)
        }
    }

    /// Tells the policy the pending truncation happened (the transfer ended before any body byte).
    package mutating func truncated() {
        if case .body(let nextOffset, true) = phase {
            phase = .body(nextOffset: nextOffset, truncatePending: false)
        }
    }

    /// The reason the transfer was stopped, if it was.
    package var stopReason: Stop? {
        if case .stopped(let stop, _) = phase { return stop }
        return nil
    }

    private mutating func stop(_ reason: Stop) -> HeaderAction {
        .stop(stopping(reason))
    }

    private mutating func stopping(_ reason: Stop) -> Stop {
        // Bytes already written stay valid; a full response that has not truncated yet has touched nothing.
        let valid: Int64
        switch phase {
        case .body(let nextOffset, false): valid = nextOffset
        case .stopped(_, let bytesInFile): valid = bytesInFile
        case .body(_, true), .headers, .hop: valid = configuration.resumeOffset
        }
        phase = .stopped(reason, bytesInFile: valid)
        return reason
    }

    private mutating func endOfHeaders() -> HeaderAction {
        guard let status else { return stop(.malformed("a blank header line before the status line")) }
        switch status {
        case 100..<200:
            phase = .hop
            return .proceed
        case 300..<400 where isFollowedRedirect(status):
            lastRedirectLocation = headers["location"]
            phase = .hop
            return .proceed
        default:
            break
        }
        hasFinalResponse = true
        bodyBytesReceived = 0
        switch status {
        case 206:
            return acceptPartialContent()
        case 200..<300:
            if let limit = configuration.maxFileSize, let length = contentLength, length > limit {
                return stop(.tooLarge(announced: length))
            }
            phase = .body(nextOffset: 0, truncatePending: true)
            resumed = false
            return .proceed
        case 416:
            return stop(.rangeNotSatisfiable)
        default:
            return stop(.httpError(status))
        }
    }

    /// libcurl follows every `3xx` with a `Location` except `304` (a conditional answer) and `305` (use proxy).
    private func isFollowedRedirect(_ status: Int) -> Bool {
        configuration.followsRedirects && status != 304 && status != 305 && headers["location"] != nil
    }

    private mutating func acceptPartialContent() -> HeaderAction {
        let offset = configuration.resumeOffset
        guard let header = headers["content-range"] else {
            return stop(.rangeMismatch("the server answered 206 without a Content-Range"))
        }
        guard let range = ContentRange(header) else {
            return stop(.rangeMismatch("the server answered 206 with an unusable Content-Range \"\(header)\""))
        }
        guard range.first == offset else {
            return stop(
                .rangeMismatch(
                    "the server sent bytes \(range.first)-\(range.last) but the file continues at byte \(offset)"
                )
            )
        }
        if let expected = configuration.expectedTotal, let total = range.total, expected != total {
            return stop(
                .rangeMismatch(
                    "the file is now \(total) bytes instead of \(expected), so it changed on the server"
                )
            )
        }
        if let length = contentLength, length != range.last - range.first + 1 {
            return stop(
                .rangeMismatch(
                    "Content-Length \(length) does not match Content-Range \(range.first)-\(range.last)"
                )
            )
        }
        if let limit = configuration.maxFileSize, let total = range.total, total > limit {
            return stop(.tooLarge(announced: total))
        }
        phase = .body(nextOffset: offset, truncatePending: false)
        resumed = true
        return .proceed
    }
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }

    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate var trimmed: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).trimmingSuffix(while: { $0 == " " || $0 == "\t" }))
    }
}

extension String {
    fileprivate var trimmed: String { Substring(self).trimmed }
}
