import SinglecastSupport

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

    /// The value of the last field called `name`, which is lower-case already: the policy's own lookups, made for
    /// every response, copy nothing.
    func last(lowercasedName name: String) -> String? {
        fields.last(where: { $0.lowercasedName == name })?.value
    }

    /// Whether a field called `name` (lower-case already) has a value that satisfies `predicate`.
    func contains(lowercasedName name: String, where predicate: (String) -> Bool) -> Bool {
        fields.contains(where: { $0.lowercasedName == name && predicate($0.value) })
    }

    package var count: Int { fields.count }

    mutating func append(name: String, value: String) {
        append(lowercasedName: name.lowercased(), value: value)
    }

    mutating func append(lowercasedName: String, value: String) {
        fields.append((lowercasedName, value))
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
        return OutsideNumber.decimal(
            text.dropFirst(8).trimmingSuffix(while: { $0 == " " || $0 == "\t" || $0.isNewline })
        )
    }

    /// Parses `bytes a-b/T` or `bytes a-b/*`; returns `nil` for anything else, including the unsatisfied form
    /// `bytes */T` and ranges that contradict themselves.
    package init?(_ header: String) {
        var text = Substring(header).drop(while: { $0 == " " || $0 == "\t" })
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        text = text.dropFirst(6).drop(while: { $0 == " " })
        guard let dash = text.firstIndex(of: "-"), let slash = text.firstIndex(of: "/"), dash < slash,
            let first = OutsideNumber.decimal(text[..<dash]),
            let last = OutsideNumber.decimal(text[text.index(after: dash)..<slash])
        else { return nil }
        let totalText = text[text.index(after: slash)...].trimmingSuffix(while: {
            $0 == " " || $0 == "\t" || $0.isNewline
        })
        let total: Int64?
        if totalText == "*" {
            total = nil
        } else {
            guard let value = OutsideNumber.decimal(totalText) else { return nil }
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
/// - `206` is appended only when its `Content-Range` starts exactly at the resume offset, its total matches the
///   expected total (when both are known) and its validators match those of the bytes in the file (when both
///   sides have one); anything else stops with ``Stop/rangeMismatch(_:)`` before writing. Servers that insert ads
///   per request answer a resume with another version of the file, `If-Range` or not.
/// - Any other `2xx` (the server ignored `Range`, or `If-Range` failed because the file changed) rewrites the file
///   from byte 0: the first write truncates it.
/// - `416` stops with ``Stop/rangeNotSatisfiable`` (or ``Stop/rangeMismatch(_:)`` when its validators show another
///   version of the file), other statuses of 300 and more with ``Stop/httpError(_:)``: error pages are never
///   written. A response without content (`304`, `Content-Length: 0`) is stopped without aborting the transfer,
///   so that its connection is kept.
///
/// Every number in a header is read as plain decimal digits (``OutsideNumber/decimal(_:)-(Bytes)``) and the
/// arithmetic on them saturates, so no `Content-Range` or `Content-Length` a server makes up can trap.
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
        /// The `ETag` the bytes already in the file came with; a `206` or `416` with another one is another version.
        package var etag: String?
        /// The `Last-Modified` the bytes already in the file came with; compared like ``etag``.
        package var lastModified: String?
        /// Bytes the file's file system has free for it; a body announced bigger stops before a byte is written.
        package var freeSpace: Int64?

        package init(
            resumeOffset: Int64 = 0,
            expectedTotal: Int64? = nil,
            maxFileSize: Int64? = nil,
            followsRedirects: Bool = true,
            etag: String? = nil,
            lastModified: String? = nil,
            freeSpace: Int64? = nil
        ) {
            self.freeSpace = freeSpace
            self.resumeOffset = resumeOffset
            self.expectedTotal = expectedTotal
            self.maxFileSize = maxFileSize
            self.followsRedirects = followsRedirects
            self.etag = etag
            self.lastModified = lastModified
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
        /// The announced body (`needed` bytes) cannot fit in the `free` bytes of the file's file system.
        case noSpace(needed: Int64, free: Int64)
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
    /// Whether a final response was accepted, so that its body is what the file holds and its validators describe it.
    package private(set) var accepted = false
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

    /// The length of the latest response's body as libcurl reads it: none when the body is chunked (chunked
    /// coding overrides `Content-Length`, RFC 9112 §6.3), else the *last* `Content-Length` field (libcurl takes each
    /// in turn); `nil` when that is not plain decimal digits, which libcurl then checks itself.
    /// Asked several times a response, so it reads the fields in place: built as arrays of values and trimmed as
    /// `String`s, it cost the engine's thread more than the rest of a small download's headers.
    package var contentLength: Int64? {
        if headers.contains(lowercasedName: "transfer-encoding", where: { $0.lowercased().contains("chunked") }) {
            return nil
        }
        guard var value = headers.last(lowercasedName: "content-length") else { return nil }
        // A folded value (`continueLastValue`) may start with the space that joined it.
        return value.withUTF8 { OutsideNumber.decimal(bytes: Self.trimmed(UnsafeRawBufferPointer($0)[...])) }
    }

    /// The `ETag` of the latest response, when it is a usable validator (``usableValidator(_:)``).
    package var etag: String? { Self.usableValidator(headers["etag"]) }

    /// The `Last-Modified` of the latest response, when it is a usable validator (``usableValidator(_:)``).
    package var lastModified: String? { Self.usableValidator(headers["last-modified"]) }

    /// `value` when it can be stored and sent back in a request header (`If-Range`, `If-None-Match`,
    /// `If-Modified-Since`); `nil` when it is empty or holds a control character. A bare CR would end or split that
    /// header line, so the request could never be sent: such a validator is refused, never stored.
    package static func usableValidator(_ value: String?) -> String? {
        guard let value, !value.isEmpty, !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return value
    }

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

    /// Feeds one header line as libcurl delivers it, terminator included: a status line, a field, or the blank line
    /// that ends a block. Read as bytes: the engine's thread parses every line of every response, and reading them as
    /// `Character`s was a quarter of its time on small files.
    package mutating func receiveHeaderLine(_ rawLine: UnsafeRawBufferPointer) -> HeaderAction {
        switch phase {
        case .body:
            return .proceed  // a chunked trailer: the decision is made
        case .stopped(let stop, _):
            return .stop(stop)
        case .headers, .hop:
            break
        }
        var end = rawLine.endIndex
        while end > rawLine.startIndex, rawLine[end - 1] == ASCII.lineFeed || rawLine[end - 1] == ASCII.carriageReturn {
            end -= 1
        }
        let line = rawLine[..<end]
        if line.starts(with: "HTTP/".utf8) {
            // A new response: a redirect hop or 1xx came before it. Its headers must not leak into this one.
            headers.removeAll()
            phase = .headers
            let fields = line.split(separator: ASCII.space, maxSplits: 2, omittingEmptySubsequences: true)
            guard fields.count >= 2, let code = OutsideNumber.decimal(bytes: fields[1]), (100..<600).contains(code)
            else {
                return stop(
                    .malformed("unreadable status line \"\(String(decoding: line.prefix(80), as: UTF8.self))\"")
                )
            }
            status = Int(code)
            return .proceed
        }
        guard case .headers = phase else { return .proceed }  // stray bytes after a hop's headers
        if line.isEmpty {
            return endOfHeaders()
        }
        guard status != nil else { return stop(.malformed("a header field before the status line")) }
        if line.first == ASCII.space || line.first == ASCII.tab {
            headers.continueLastValue(String(decoding: Self.trimmed(line), as: UTF8.self))
        } else if let colon = line.firstIndex(of: ASCII.colon) {
            let name = Self.trimmed(line[..<colon])
            headers.append(
                lowercasedName: String(unsafeUninitializedCapacity: name.count) { buffer in
                    for (offset, byte) in name.enumerated() { buffer[offset] = ASCII.lowercased(byte) }
                    return name.count
                },
                value: String(decoding: Self.trimmed(line[(colon + 1)...]), as: UTF8.self)
            )
        }
        return .proceed
    }

    /// ``receiveHeaderLine(_:)-(UnsafeRawBufferPointer)`` of a line as text.
    package mutating func receiveHeaderLine(_ line: String) -> HeaderAction {
        var line = line
        return line.withUTF8 { receiveHeaderLine(UnsafeRawBufferPointer($0)) }
    }

    /// `bytes` without leading and trailing spaces and tabs (HTTP's optional whitespace).
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var (start, end) = (bytes.startIndex, bytes.endIndex)
        while start < end, bytes[start] == ASCII.space || bytes[start] == ASCII.tab { start += 1 }
        while end > start, bytes[end - 1] == ASCII.space || bytes[end - 1] == ASCII.tab { end -= 1 }
        return bytes[start..<end]
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
            bodyBytesReceived = bodyBytesReceived.saturatingAdd(Int64(count))
            let end = nextOffset.saturatingAdd(Int64(count))
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
            // The whole file is written afresh over the bytes kept, which free their space as the file is cut.
            if let free = configuration.freeSpace, let length = contentLength,
                length > free.saturatingAdd(configuration.resumeOffset)
            {
                return stop(.noSpace(needed: length, free: free.saturatingAdd(configuration.resumeOffset)))
            }
            phase = .body(nextOffset: 0, truncatePending: true)
            resumed = false
            accepted = true
            return .proceed
        case 416:
            // A 416 with a matching total completes a resume: only if it speaks of the same version of the file.
            if let change = versionChange { return stop(.rangeMismatch("the file changed on the server (\(change))")) }
            if let expected = configuration.expectedTotal, let total = totalLength, total != expected {
                return stop(
                    .rangeMismatch("the file is now \(total) bytes instead of \(expected), so it changed on the server")
                )
            }
            return stop(.rangeNotSatisfiable)
        default:
            let reason = stopping(.httpError(status))
            // A response without content is complete with its headers: libcurl then ends the transfer and keeps the
            // connection for the next one, where aborting it would close the connection (a refresh of 1,000 feeds
            // answering 304 opened 1,000 connections).
            return hasNoContent(status) ? .proceed : .stop(reason)
        }
    }

    /// A `304` never has content (RFC 9110, 15.4.5), nor a response that announces none.
    private func hasNoContent(_ status: Int) -> Bool {
        status == 304 || contentLength == 0
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
        if let change = versionChange {
            return stop(.rangeMismatch("the file changed on the server (\(change))"))
        }
        // Saturating: `bytes 0-9223372036854775807/*` is a lie, not a reason to trap.
        if let length = contentLength, length != (range.last - range.first).saturatingAdd(1) {
            return stop(
                .rangeMismatch(
                    "Content-Length \(length) does not match Content-Range \(range.first)-\(range.last)"
                )
            )
        }
        if let limit = configuration.maxFileSize, let total = range.total, total > limit {
            return stop(.tooLarge(announced: total))
        }
        let remaining = (range.last - range.first).saturatingAdd(1)
        if let free = configuration.freeSpace, remaining > free {
            return stop(.noSpace(needed: remaining, free: free))
        }
        phase = .body(nextOffset: offset, truncatePending: false)
        resumed = true
        accepted = true
        return .proceed
    }

    /// How the latest response shows another version of the file than the bytes already in it: a validator that
    /// differs from the one stored with them. `nil` when none differs; a validator the response leaves out proves
    /// nothing either way (the total and `If-Range` still guard the resume).
    private var versionChange: String? {
        // Weak comparison (RFC 9110 §8.8.3.2): some caches weaken the tag of what they pass on, which is no new version.
        func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
        if let stored = configuration.etag, let etag, opaque(etag) != opaque(stored) {
            return "ETag \(etag.prefix(80)) instead of \(stored.prefix(80))"
        }
        if let stored = configuration.lastModified, let lastModified, lastModified != stored {
            return "Last-Modified \(lastModified.prefix(80)) instead of \(stored.prefix(80))"
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}

/// The bytes a header line is read by.
private enum ASCII {
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
