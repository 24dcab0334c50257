/// Plain text from the HTML in feed descriptions.
package enum PlainText {
    /// Strips tags, decodes entities, collapses whitespace and keeps paragraph breaks.
    ///
    /// Whitespace runs become one space, as a browser renders them. Paragraph-like elements (`p`, `div`,
    /// headings, `blockquote`, `pre`, tables, lists) become a blank line, `<br>` and `</li>` a line break,
    /// `<li>` a line starting with `• `. `script`, `style` and comments are dropped. Lines are trimmed and
    /// never more than one blank line is kept.
    package static func fromHTML(_ html: String) -> String {
        var writer = Writer()
        let bytes = Array(html.utf8)
        let count = bytes.count
        var index = 0
        var textStart = 0
        func flushText(upTo end: Int) {
            guard end > textStart else { return }
            var decoded: [UInt8] = []
            bytes.withUnsafeBufferPointer { buffer in
                XMLText.appendDecoded(
                    UnsafeBufferPointer(rebasing: buffer[textStart..<end]),
                    to: &decoded,
                    isAttribute: false
                )
            }
            writer.text(decoded)
        }
        while index < count {
            guard bytes[index] == 0x3C, index + 1 < count else {
                index += 1
                continue
            }
            let next = bytes[index + 1]
            if next == 0x21 {  // <!-- comment --> or <!DOCTYPE>
                flushText(upTo: index)
                index = skipDeclaration(bytes, from: index)
                textStart = index
                continue
            }
            let isEnd = next == 0x2F
            let nameStart = index + (isEnd ? 2 : 1)
            guard nameStart < count, isLetter(bytes[nameStart]) else {
                index += 1  // a lone '<' is text
                continue
            }
            flushText(upTo: index)
            var nameEnd = nameStart
            while nameEnd < count && (isLetter(bytes[nameEnd]) || isDigit(bytes[nameEnd])) { nameEnd += 1 }
            let name = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self).lowercased()
            index = tagEnd(bytes, from: nameEnd)
            if !isEnd && (name == "script" || name == "style") {
                index = skipElement(named: name, bytes, from: index)
            } else {
                writer.tag(name, isEnd: isEnd)
            }
            textStart = index
        }
        flushText(upTo: count)
        return writer.result
    }

    /// Whether the text contains something shaped like an HTML start tag (`<p>`, `<br/>`, `<a href…>`).
    package static func looksLikeHTML(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            defer { index += 1 }
            guard bytes[index] == 0x3C, index + 1 < bytes.count, isLetter(bytes[index + 1]) else { continue }
            var probe = index + 2
            while probe < bytes.count && (isLetter(bytes[probe]) || isDigit(bytes[probe])) { probe += 1 }
            guard probe < bytes.count else { return false }
            let byte = bytes[probe]
            if byte == 0x3E { return true }
            if byte == 0x2F && probe + 1 < bytes.count && bytes[probe + 1] == 0x3E { return true }
            if isSpace(byte) && bytes[probe...].contains(0x3E) { return true }
        }
        return false
    }

    /// Trims and collapses runs of spaces and tabs to one space, keeping line breaks.
    static func normalizingSpaces(_ text: String) -> String {
        var out: [UInt8] = []
        var pendingSpace = false
        for byte in text.utf8 {
            if byte == 0x20 || byte == 0x09 {
                pendingSpace = !out.isEmpty
            } else if byte == 0x0A || byte == 0x0D {
                while out.last == 0x20 { out.removeLast() }
                out.append(0x0A)
                pendingSpace = false
            } else {
                if pendingSpace && out.last != 0x0A { out.append(0x20) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self).trimmed
    }

    /// Trims and collapses every whitespace run, line breaks included, to one space (titles).
    static func collapsingWhitespace(_ text: String) -> String {
        var out: [UInt8] = []
        var pendingSpace = false
        for byte in text.utf8 {
            if isSpace(byte) {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Tags

    private static let paragraphTags: Set<String> = [
        "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "ul", "ol", "dl", "section",
        "article", "header", "footer", "figure", "hr", "address", "aside", "nav", "main",
    ]
    private static let lineTags: Set<String> = ["br", "tr", "dt", "dd", "li"]

    /// Collects text with pending breaks so that breaks never pile up and lines come out trimmed.
    private struct Writer {
        var out: [UInt8] = []
        var pendingBreaks = 0
        var pendingSpace = false

        mutating func text(_ bytes: [UInt8]) {
            for byte in bytes {
                if isSpace(byte) {
                    pendingSpace = true
                    continue
                }
                if !out.isEmpty {
                    if pendingBreaks > 0 {
                        out.append(contentsOf: repeatElement(0x0A, count: pendingBreaks))
                    } else if pendingSpace {
                        out.append(0x20)
                    }
                }
                pendingBreaks = 0
                pendingSpace = false
                out.append(byte)
            }
        }

        mutating func tag(_ name: String, isEnd: Bool) {
            if name == "li" && !isEnd {
                breakLine(1)
                text(Array("• ".utf8))
                pendingSpace = false
            } else if PlainText.paragraphTags.contains(name) {
                breakLine(2)
            } else if PlainText.lineTags.contains(name) {
                breakLine(1)
            }
        }

        mutating func breakLine(_ count: Int) {
            pendingBreaks = max(pendingBreaks, count)
            pendingSpace = false
        }

        var result: String { String(decoding: out, as: UTF8.self) }
    }

    private static func tagEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        var quote: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == 0x22 || byte == 0x27 {
                quote = byte
            } else if byte == 0x3E {
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }

    private static func skipDeclaration(_ bytes: [UInt8], from start: Int) -> Int {
        if bytes[start...].starts(with: [0x3C, 0x21, 0x2D, 0x2D]) {
            var index = start + 4
            while index + 2 < bytes.count {
                if bytes[index] == 0x2D && bytes[index + 1] == 0x2D && bytes[index + 2] == 0x3E { return index + 3 }
                index += 1
            }
            return bytes.count
        }
        return tagEnd(bytes, from: start)
    }

    private static func skipElement(named name: String, _ bytes: [UInt8], from start: Int) -> Int {
        let closing = Array("</\(name)".utf8)
        var index = start
        while index + closing.count <= bytes.count {
            if bytes[index] == 0x3C
                && zip(bytes[index..<index + closing.count], closing).allSatisfy({ lower($0) == $1 })
            {
                return tagEnd(bytes, from: index + closing.count)
            }
            index += 1
        }
        return bytes.count
    }

    private static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
    fileprivate static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
