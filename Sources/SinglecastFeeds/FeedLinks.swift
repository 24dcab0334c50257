/// Feed autodiscovery: the feeds a web page names in its `<link rel="alternate" type="application/rss+xml"
/// href="…">` (or `application/atom+xml`) tags, as browsers and podcast apps find them.
///
/// A small scanner, not an HTML parser: it reads tags, skipping comments and the text of `<script>` and `<style>`
/// (where a `<link` is no tag), honours the first `<base href>`, and resolves each `href` against it or the page's
/// own URL. The bytes come from any server, so nothing here traps or loops on them.
package enum FeedLinks {
    package enum Kind: String, Sendable, Hashable {
        case rss = "application/rss+xml"
        case atom = "application/atom+xml"
    }

    package struct Link: Sendable, Hashable {
        /// Absolute, resolved against the page (or its `<base href>`).
        package var url: String
        package var kind: Kind
        package var title: String?
    }

    /// What a document says about itself.
    package struct Page: Sendable, Hashable {
        /// It looks like HTML (a doctype, or an `<html>`, `<head>` or `<body>` tag).
        package var isHTML: Bool
        /// The feeds it names, the first RSS feed first, then the others in document order, without repeats.
        package var feeds: [Link]
    }

    /// Tags read at most: a real page has a few hundred; a hostile one gets no more time than that.
    static let tagLimit = 100_000

    /// Scans `bytes`, fetched from `pageURL`.
    package static func scan(_ bytes: some Collection<UInt8>, pageURL: String) -> Page {
        let bytes = Array(bytes)
        var index = 0
        var isHTML = false
        var base: String?
        var found: [Link] = []
        var tags = 0
        while index < bytes.count, tags < tagLimit {
            guard let open = firstIndex(of: UInt8(ascii: "<"), in: bytes, from: index) else { break }
            index = open + 1
            if hasPrefix(bytes, at: index, "!--") {
                index = firstRange(of: Array("-->".utf8), in: bytes, from: index + 3).map { $0 + 3 } ?? bytes.count
                continue
            }
            tags += 1
            let (name, nameEnd) = tagName(bytes, from: index)
            if name == "!doctype" {
                isHTML = isHTML || lowercased(bytes[nameEnd..<min(bytes.count, nameEnd + 6)]).contains("html")
            }
            if name == "html" || name == "head" || name == "body" { isHTML = true }
            guard name == "link" || name == "base" || name == "script" || name == "style" else { continue }
            let (attributes, end) = self.attributes(bytes, from: nameEnd)
            index = end
            switch name {
            case "script", "style":
                // Their text is not markup: skip to the closing tag.
                let closing = Array("</\(name)".utf8)
                index = firstRange(of: closing, in: bytes, from: index, caseInsensitive: true) ?? bytes.count
            case "base":
                if base == nil, let href = attributes["href"], !href.isEmpty {
                    base = URLResolver.resolve(href, against: pageURL)
                }
            default:
                let rel = (attributes["rel"] ?? "").lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" })
                let type = (attributes["type"] ?? "").split(separator: ";").first.map {
                    String($0).trimmed.lowercased()
                }
                guard rel.contains("alternate"), let kind = type.flatMap(Kind.init(rawValue:)),
                    let href = attributes["href"], !href.isEmpty
                else { continue }
                found.append(Link(url: href, kind: kind, title: attributes["title"]))
            }
        }
        // `<base>` applies to every link of the page, also those before it.
        var feeds: [Link] = []
        for var link in found {
            link.url = URLResolver.resolve(link.url, against: base ?? pageURL)
            if !feeds.contains(where: { $0.url == link.url }) { feeds.append(link) }
        }
        if let rss = feeds.firstIndex(where: { $0.kind == .rss }) { feeds.insert(feeds.remove(at: rss), at: 0) }
        return Page(isHTML: isHTML, feeds: feeds)
    }

    // MARK: - Reading tags

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map(lower), as: UTF8.self)
    }

    /// The tag's name, lowercased (`!doctype` included), and where it ends.
    private static func tagName(_ bytes: [UInt8], from start: Int) -> (String, Int) {
        var end = start
        while end < bytes.count, end - start < 16, !isSpace(bytes[end]), bytes[end] != UInt8(ascii: ">"),
            bytes[end] != UInt8(ascii: "/") || end == start
        {
            end += 1
        }
        return (lowercased(bytes[start..<end]), end)
    }

    /// The attributes from `start` to the tag's `>` (names lowercased, values with character references read), and
    /// the index after the `>`. A quoted value may hold `>`.
    private static func attributes(_ bytes: [UInt8], from start: Int) -> ([String: String], Int) {
        var attributes: [String: String] = [:]
        var index = start
        while index < bytes.count {
            while index < bytes.count, isSpace(bytes[index]) || bytes[index] == UInt8(ascii: "/") { index += 1 }
            guard index < bytes.count, bytes[index] != UInt8(ascii: ">") else { break }
            let nameStart = index
            while index < bytes.count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: "="),
                bytes[index] != UInt8(ascii: ">"), bytes[index] != UInt8(ascii: "/") || index == nameStart
            {
                index += 1
            }
            let name = lowercased(bytes[nameStart..<index])
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            var value = ""
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                let valueStart: Int
                let valueEnd: Int
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                    let quote = bytes[index]
                    valueStart = index + 1
                    valueEnd = firstIndex(of: quote, in: bytes, from: valueStart) ?? bytes.count
                    index = min(bytes.count, valueEnd + 1)
                } else {
                    valueStart = index
                    while index < bytes.count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: ">") { index += 1 }
                    valueEnd = index
                }
                var decoded: [UInt8] = []
                bytes[valueStart..<valueEnd].withUnsafeBufferPointer {
                    XMLText.appendDecoded($0, to: &decoded, isAttribute: true)
                }
                value = String(decoding: decoded, as: UTF8.self)
            }
            // The first of a repeated attribute counts, as in HTML.
            if !name.isEmpty, attributes[name] == nil { attributes[name] = value }
        }
        return (attributes, min(bytes.count, index + 1))
    }

    private static func hasPrefix(_ bytes: [UInt8], at index: Int, _ prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return index + prefix.count <= bytes.count && Array(bytes[index..<index + prefix.count]) == prefix
    }

    private static func firstIndex(of byte: UInt8, in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes[start...].firstIndex(of: byte)
    }

    private static func firstRange(
        of needle: [UInt8],
        in bytes: [UInt8],
        from start: Int,
        caseInsensitive: Bool = false
    ) -> Int? {
        guard let first = needle.first, needle.count <= bytes.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            guard
                let candidate = bytes[index...].firstIndex(where: { caseInsensitive ? lower($0) == first : $0 == first }
                )
            else { return nil }
            guard candidate + needle.count <= bytes.count else { return nil }
            if zip(bytes[candidate..<candidate + needle.count], needle).allSatisfy({
                caseInsensitive ? lower($0) == $1 : $0 == $1
            }) {
                return candidate
            }
            index = candidate + 1
        }
        return nil
    }
}
