import SinglecastSupport

/// What part of a file a GET answers with, from its `Range` and `If-Range` headers (RFC 9110 §13.1.5, §14).
///
/// Both headers are a stranger's bytes: anything that is not a well-formed `bytes` range set is ignored, as
/// RFC 9110 asks, and the whole file is sent; every number goes through ``OutsideNumber``.
package enum ByteRanges {
    package enum Outcome: Sendable, Hashable {
        /// 200 with the whole file.
        case full
        /// 206 with `length` bytes from `offset`.
        case partial(offset: UInt64, length: UInt64)
        /// 416: none of the ranges asked for lies in the file.
        case unsatisfiable
    }

    /// One `range-spec`.
    package enum Spec: Sendable, Hashable {
        /// `first-last`, or `first-` (`last` is `nil`). A number too large for `Int64` is `Int64.max`: it still means
        /// "beyond the end".
        case from(first: Int64, last: Int64?)
        /// `-count`: the last `count` bytes.
        case suffix(Int64)
    }

    /// The outcome of a GET of `length` bytes whose current validators are `etag` and `lastModified`.
    ///
    /// - Parameters:
    ///   - range: The `Range` header, if any; only GET has ranges (a HEAD is answered as its GET without them).
    ///   - ifRange: The `If-Range` header: the ranges count only when it names the current representation, by a
    ///     strong match of the entity tag or by the exact `Last-Modified` date; otherwise the whole file is sent.
    package static func decide(
        range: String?,
        ifRange: String?,
        length: UInt64,
        etag: EntityTag,
        lastModified: String
    ) -> Outcome {
        guard let range, let specs = parse(range) else { return .full }
        if let ifRange, !validates(ifRange, etag: etag, lastModified: lastModified) { return .full }
        let satisfiable = specs.compactMap { resolve($0, length: length) }
        switch satisfiable.count {
        case 0:
            // A suffix of an empty file is satisfiable but has no bytes to name: the (empty) whole file.
            return length == 0 && specs.contains { if case .suffix(let count) = $0 { count > 0 } else { false } }
                ? .full : .unsatisfiable
        case 1: return satisfiable[0]
        // Several ranges would need multipart/byteranges; RFC 9110 lets a server send the whole file instead.
        default: return .full
        }
    }

    /// The `If-Range` condition: `true` when the validator names the representation that would be sent.
    package static func validates(_ ifRange: String, etag: EntityTag, lastModified: String) -> Bool {
        let value = ifRange.trimmingOWS
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard let tag = EntityTag(parsing: value) else { return false }
            return tag.strongMatch(etag)
        }
        return value == lastModified
    }

    /// The range set of a `bytes` range header; `nil` when the header is malformed or of another unit.
    package static func parse(_ header: String) -> [Spec]? {
        let value = header.trimmingOWS
        guard let equals = value.firstIndex(of: "="),
            value[..<equals].lowercased() == "bytes"
        else { return nil }
        var specs: [Spec] = []
        // `1#range-spec`: empty list elements are allowed and ignored (RFC 9110 §5.6.1.2).
        for element in value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let text = element.trimmingOWS
            if text.isEmpty { continue }
            guard let spec = spec(text) else { return nil }
            specs.append(spec)
        }
        return specs.isEmpty ? nil : specs
    }

    private static func spec(_ text: Substring) -> Spec? {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let first = text[..<dash].utf8
        let last = text[text.index(after: dash)...].utf8
        if first.isEmpty {
            return number(last).map(Spec.suffix)
        }
        guard let start = number(first) else { return nil }
        if last.isEmpty { return .from(first: start, last: nil) }
        guard let end = number(last), end >= start else { return nil }
        return .from(first: start, last: end)
    }

    /// Digits only; a run too long for `Int64` is `Int64.max`.
    private static func number(_ digits: Substring.UTF8View) -> Int64? {
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return OutsideNumber.decimal(digits) ?? .max
    }

    /// The bytes a satisfiable spec names in a file of `length` bytes.
    private static func resolve(_ spec: Spec, length: UInt64) -> Outcome? {
        switch spec {
        case .from(let first, let last):
            let start = UInt64(first)
            guard start < length else { return nil }
            let end = min(last.map(UInt64.init) ?? (length - 1), length - 1)
            return .partial(offset: start, length: end - start + 1)
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            let taken = min(UInt64(count), length)
            return .partial(offset: length - taken, length: taken)
        }
    }

    /// `Content-Range` of a 206.
    package static func contentRange(offset: UInt64, length: UInt64, of total: UInt64) -> String {
        "bytes \(offset)-\(offset + length - 1)/\(total)"
    }
}

extension StringProtocol {
    /// Without the optional whitespace (spaces and tabs) HTTP allows around field values and list elements.
    var trimmingOWS: Substring {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = Substring(self)
        guard let start = text.firstIndex(where: { !isOWS($0) }) else { return text[text.endIndex...] }
        let end = text.lastIndex(where: { !isOWS($0) })!
        return text[start...end]
    }
}
