import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Plain text from the HTML in feed descriptions.
package enum PlainText {
    /// Strips tags, decodes entities, collapses whitespace and keeps paragraph breaks.
    ///
    /// Whitespace runs become one space, as a browser renders them. Paragraph-like elements (`p`, `div`,
    /// headings, `blockquote`, `pre`, tables, lists) become a blank line, `<br>` and `</li>` a line break,
    /// `<li>` a line starting with `• `. `script`, `style` and comments are dropped. Lines are trimmed and
    /// never more than one blank line is kept.
    package static func fromHTML(_ html: String) -> String {
        var html = html
        return html.withUTF8 { fromHTML(bytes: $0) }
    }

    private static func fromHTML(bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let base = bytes.baseAddress else { return "" }
        var stripper = Stripper(bytes: bytes)
        let count = bytes.count
        var index = 0
        while index < count {
            guard let hit = memchr(base + index, 0x3C, count - index) else { break }
            index = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
            guard index + 1 < count else { break }
            let next = bytes[index + 1]
            if next == 0x21 {  // <!-- comment --> or <!DOCTYPE>
                stripper.flushText(upTo: index)
                index = skipDeclaration(bytes, from: index)
                stripper.textStart = index
                continue
            }
            let isEnd = next == 0x2F
            let nameStart = index + (isEnd ? 2 : 1)
            guard nameStart < count, isLetter(bytes[nameStart]) else {
                index += 1  // a lone '<' is text
                continue
            }
            stripper.flushText(upTo: index)
            var nameEnd = nameStart
            while nameEnd < count && (isLetter(bytes[nameEnd]) || isDigit(bytes[nameEnd])) { nameEnd += 1 }
            let tag = TagKind(bytes[nameStart..<nameEnd])
            index = tagEnd(bytes, from: nameEnd)
            if !isEnd && (tag == .script || tag == .style) {
                index = skipElement(named: tag == .script ? "</script" : "</style", bytes, from: index)
            } else {
                stripper.writer.tag(tag, isEnd: isEnd)
            }
            stripper.textStart = index
        }
        stripper.flushText(upTo: count)
        return stripper.writer.result
    }

    /// The text between tags, decoded and handed to the ``Writer``.
    private struct Stripper {
        let bytes: UnsafeBufferPointer<UInt8>
        var writer: Writer
        var scratch: [UInt8] = []
        var textStart = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            writer = Writer(capacity: bytes.count)
        }

        mutating func flushText(upTo end: Int) {
            guard end > textStart else { return }
            let run = UnsafeBufferPointer(rebasing: bytes[textStart..<end])
            if memchr(run.baseAddress!, 0x26, run.count) == nil {
                writer.text(run)
            } else {
                scratch.removeAll(keepingCapacity: true)
                XMLText.appendDecoded(run, to: &scratch, isAttribute: false)
                scratch.withUnsafeBufferPointer { writer.text($0) }
            }
        }
    }

    /// Whether the text contains something shaped like an HTML start tag (`<p>`, `<br/>`, `<a href…>`).
    package static func looksLikeHTML(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            var index = 0
            while index < bytes.count {
                guard let hit = memchr(base + index, 0x3C, bytes.count - index) else { return false }
                index = UnsafeRawPointer(hit) - UnsafeRawPointer(base) + 1
                guard index < bytes.count, isLetter(bytes[index]) else { continue }
                var probe = index + 1
                while probe < bytes.count && (isLetter(bytes[probe]) || isDigit(bytes[probe])) { probe += 1 }
                guard probe < bytes.count else { return false }
                let byte = bytes[probe]
                if byte == 0x3E { return true }
                if byte == 0x2F && probe + 1 < bytes.count && bytes[probe + 1] == 0x3E { return true }
                if isSpace(byte) && memchr(base + probe, 0x3E, bytes.count - probe) != nil { return true }
            }
            return false
        }
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
        // Most titles need nothing: no leading or trailing space, no run of spaces, no tab or line break.
        var previousIsSpace = true
        var clean = true
        for byte in text.utf8 {
            let space = isSpace(byte)
            if space && (previousIsSpace || byte != 0x20) {
                clean = false
                break
            }
            previousIsSpace = space
        }
        if clean && !previousIsSpace || text.isEmpty { return text }
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

    /// The tags that shape plain text.
    private enum TagKind {
        case paragraph
        case line
        case listItem
        case script
        case style
        case other

        init(_ name: Slice<UnsafeBufferPointer<UInt8>>) {
            if name.count > 8 {
                self =
                    name.count == 10 && TagKind.key(name.prefix(8)) == TagKind.key("blockquo".utf8)
                    ? .paragraph : .other
                return
            }
            // The names below, packed by `key` ("p" is 0x70, "div" is 0x646976…).
            switch TagKind.key(name) {
            case 0x70, 0x646976, 0x6831, 0x6832, 0x6833, 0x6834, 0x6835, 0x6836, 0x707265, 0x74_6162_6C65, 0x756C,
                0x6F6C, 0x646C, 0x73_6563_7469_6F6E, 0x61_7274_6963_6C65, 0x6865_6164_6572, 0x666F_6F74_6572,
                0x6669_6775_7265, 0x6872, 0x61_6464_7265_7373, 0x61_7369_6465, 0x6E6176, 0x6D61_696E:
                self = .paragraph
            case 0x6272, 0x7472, 0x6474, 0x6464: self = .line
            case 0x6C69: self = .listItem
            case 0x7363_7269_7074: self = .script
            case 0x73_7479_6C65: self = .style
            default: self = .other
            }
        }

        /// Up to eight ASCII-lowercased bytes packed into an integer, first byte highest.
        private static func key(_ name: some Sequence<UInt8>) -> UInt64 {
            var key: UInt64 = 0
            for byte in name { key = key << 8 | UInt64(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) }
            return key
        }
    }

    /// Collects text with pending breaks so that breaks never pile up and lines come out trimmed.
    private struct Writer {
        var out: [UInt8] = []
        var pendingBreaks = 0
        var pendingSpace = false

        init(capacity: Int) { out.reserveCapacity(capacity) }

        mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) {
            var index = 0
            let count = bytes.count
            while index < count {
                if bytes[index] <= 0x20 && isSpace(bytes[index]) {
                    pendingSpace = true
                    index += 1
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
                // Copy words separated by single spaces in one go; stop at any other whitespace.
                var end = index + 1
                while end < count {
                    let byte = bytes[end]
                    if byte > 0x20 {
                        end += 1
                    } else if byte == 0x20 && end + 1 < count && bytes[end + 1] > 0x20 {
                        end += 2
                    } else if isSpace(byte) {
                        break
                    } else {
                        end += 1
                    }
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                index = end
            }
        }

        mutating func tag(_ kind: TagKind, isEnd: Bool) {
            switch kind {
            case .listItem where !isEnd:
                breakLine(1)
                Array("•".utf8).withUnsafeBufferPointer { text($0) }
                pendingSpace = true
            case .listItem, .line: breakLine(1)
            case .paragraph: breakLine(2)
            default: break
            }
        }

        mutating func breakLine(_ count: Int) {
            pendingBreaks = max(pendingBreaks, count)
            pendingSpace = false
        }

        var result: String { String(decoding: out, as: UTF8.self) }
    }

    private static func tagEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
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

    private static func skipDeclaration(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
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

    private static func skipElement(named closing: String, _ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int
    {
        let closing = Array(closing.utf8)
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
