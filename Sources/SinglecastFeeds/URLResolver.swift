/// Resolves URL references found in feeds (RFC 3986 §5.2), without Foundation's `URL`.
///
/// Feeds are full of URLs Foundation's `URL` refuses or rewrites (spaces, `[]`, odd schemes), and a
/// feed with 5000 items resolves 10 000+ of them, so this works on strings and keeps the reference as
/// written when it already has a scheme.
package enum URLResolver {
    /// Resolves `reference` (trimmed) against `base`.
    ///
    /// A reference with a scheme is returned as it is; without a usable base it is returned trimmed.
    package static func resolve(_ reference: String, against base: String?) -> String {
        let reference = reference.trimmed
        if hasScheme(reference) { return reference }
        guard let base, let baseParts = Parts(base), baseParts.scheme != nil else { return reference }
        let scheme = baseParts.scheme!
        if reference.hasPrefix("//") { return scheme + ":" + reference }
        let ref = Parts(reference) ?? Parts(scheme: nil, authority: nil, path: reference, query: nil, fragment: nil)
        var result = Parts(scheme: scheme, authority: baseParts.authority, path: "", query: nil, fragment: ref.fragment)
        if ref.path.isEmpty {
            result.path = baseParts.path
            result.query = ref.query ?? baseParts.query
        } else {
            if ref.path.hasPrefix("/") {
                result.path = removeDotSegments(ref.path)
            } else if baseParts.authority != nil && baseParts.path.isEmpty {
                result.path = removeDotSegments("/" + ref.path)
            } else if let slash = baseParts.path.lastIndex(of: "/") {
                result.path = removeDotSegments(String(baseParts.path[...slash]) + ref.path)
            } else {
                result.path = removeDotSegments(ref.path)
            }
            result.query = ref.query
        }
        return result.string
    }

    /// Lowercases the scheme and host and writes an empty path as `/` (`HTTP://Example.COM` →
    /// `http://example.com/`), so one file's URL compares equal however a feed spells it.
    package static func normalized(_ url: String) -> String {
        if isNormalHTTP(url) { return url }
        guard var parts = Parts(url), let scheme = parts.scheme else { return url }
        parts.scheme = scheme.lowercased()
        if let authority = parts.authority {
            if let at = authority.lastIndex(of: "@") {
                parts.authority = String(authority[...at]) + authority[authority.index(after: at)...].lowercased()
            } else {
                parts.authority = authority.lowercased()
            }
            if parts.path.isEmpty { parts.path = "/" }
        }
        let result = parts.string
        return result == url ? url : result
    }

    /// Whether the URL is `http://` or `https://` with a lowercase host and a non-empty path (the usual case).
    private static func isNormalHTTP(_ url: String) -> Bool {
        let utf8 = url.utf8
        var index: String.UTF8View.Index
        if url.hasPrefix("https://") {
            index = utf8.index(utf8.startIndex, offsetBy: 8)
        } else if url.hasPrefix("http://") {
            index = utf8.index(utf8.startIndex, offsetBy: 7)
        } else {
            return false
        }
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == 0x2F { return true }
            if byte == 0x3F || byte == 0x23 || byte == 0x40 || (byte >= 0x41 && byte <= 0x5A) { return false }
            index = utf8.index(after: index)
        }
        return false
    }

    /// Whether the string starts with `scheme:` (a letter, then letters, digits, `+`, `-`, `.`).
    static func hasScheme(_ text: String) -> Bool {
        // Every URL of a feed is asked this: its bytes are read where they lie, not through the generic UTF-8 view.
        text.utf8.withContiguousStorageIfAvailable { hasScheme(bytes: $0) } ?? hasScheme(bytes: text.utf8)
    }

    private static func hasScheme(bytes: some Sequence<UInt8>) -> Bool {
        var first = true
        for byte in bytes {
            let isLetter = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            if byte == 0x3A { return !first }
            if first {
                guard isLetter else { return false }
                first = false
            } else {
                let isDigit = byte >= 0x30 && byte <= 0x39
                guard isLetter || isDigit || byte == 0x2B || byte == 0x2D || byte == 0x2E else { return false }
            }
        }
        return false
    }

    private static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            if segment == "." {
                if isLast { output.append("") }
            } else if segment == ".." {
                if output.count > 1 || (output.count == 1 && !output[0].isEmpty) { output.removeLast() }
                if isLast { output.append("") }
            } else {
                output.append(segment)
            }
        }
        var joined = output.joined(separator: "/")
        if path.hasPrefix("/") && !joined.hasPrefix("/") { joined = "/" + joined }
        return joined
    }

    /// The five components of a URI reference.
    private struct Parts {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?

        init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
            self.scheme = scheme
            self.authority = authority
            self.path = path
            self.query = query
            self.fragment = fragment
        }

        init?(_ text: String) {
            var rest = Substring(text)
            if let hash = rest.firstIndex(of: "#") {
                fragment = String(rest[rest.index(after: hash)...])
                rest = rest[..<hash]
            }
            if let question = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: question)...])
                rest = rest[..<question]
            }
            if URLResolver.hasScheme(String(rest)), let colon = rest.firstIndex(of: ":") {
                scheme = String(rest[..<colon])
                rest = rest[rest.index(after: colon)...]
            }
            if rest.hasPrefix("//") {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex(of: "/") ?? rest.endIndex
                authority = String(rest[..<end])
                rest = rest[end...]
            }
            path = String(rest)
        }

        var string: String {
            var out = ""
            if let scheme { out += scheme + ":" }
            if let authority { out += "//" + authority }
            out += path
            if let query { out += "?" + query }
            if let fragment { out += "#" + fragment }
            return out
        }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    var trimmed: String {
        // Nearly every value needs nothing; its ends are read from its contiguous bytes, without index arithmetic.
        let clean = utf8.withContiguousStorageIfAvailable { bytes in
            guard let first = bytes.first, let last = bytes.last else { return true }
            return !Self.isSpace(first) && !Self.isSpace(last)
        }
        if clean == true { return self }
        let utf8 = self.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end && Self.isSpace(utf8[start]) { start = utf8.index(after: start) }
        while end > start && Self.isSpace(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return String(self[start..<end])
    }

    /// `nil` when the trimmed string is empty.
    var trimmedOrNil: String? {
        let value = trimmed
        return value.isEmpty ? nil : value
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }
}
