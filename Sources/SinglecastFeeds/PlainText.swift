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
        var scratch: [UInt8] = []
        return fromHTML(html, scratch: &scratch)
    }

    /// ``fromHTML(_:)`` that writes the text into `scratch` first, a buffer the caller keeps from one call to the
    /// next: converting thousands of descriptions then allocates only the strings it returns.
    static func fromHTML(_ html: String, scratch: inout [UInt8]) -> String {
        var html = html
        var writer = Writer()
        swap(&writer.out, &scratch)
        writer.out.removeAll(keepingCapacity: true)
        html.withUTF8 { convert($0, into: &writer) }
        let text = String(decoding: writer.out, as: UTF8.self)
        swap(&writer.out, &scratch)
        return text
    }

    /// One pass over the HTML: text between tags goes to the ``Writer`` in runs, tags as ``TagKind``s.
    ///
    /// A run is copied whole up to the next byte that needs a decision: white space other than a single space
    /// between two characters of text, `<` or `&`. Those are looked for eight bytes at a time
    /// (``nextStop(_:from:to:)``), so a paragraph of prose costs a few instructions per eight bytes.
    private static func convert(_ bytes: UnsafeBufferPointer<UInt8>, into writer: inout Writer) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var runStart = 0
        var index = 0
        while true {
            if index == runStart && index < count && isSpace(base[index]) {
                // White space before a run separates it from what came before; it is never part of the run.
                writer.space()
                index += 1
                while index < count && isSpace(base[index]) { index += 1 }
                runStart = index
            }
            index = nextStop(base, from: index, to: count)
            guard index < count else { break }
            let byte = base[index]
            if byte == 0x20 {
                if index > runStart && index + 1 < count && isPlain(base[index + 1]) {
                    index += 2  // one space between words: the run goes on
                    continue
                }
                writer.content(bytes, from: runStart, to: index)
                runStart = index  // the white space is read at the top of the loop
            } else if byte == 0x3C {  // <
                guard index + 1 < count else { break }  // a final '<' is text
                let next = base[index + 1]
                if next == 0x21 {  // <!-- comment --> or <!DOCTYPE>
                    writer.content(bytes, from: runStart, to: index)
                    index = skipDeclaration(bytes, from: index)
                    runStart = index
                    continue
                }
                let isEnd = next == 0x2F
                let nameStart = index + (isEnd ? 2 : 1)
                guard nameStart < count, isLetter(base[nameStart]) else {
                    index += 1  // a lone '<' is text
                    continue
                }
                writer.content(bytes, from: runStart, to: index)
                var nameEnd = nameStart
                while nameEnd < count && (isLetter(base[nameEnd]) || isDigit(base[nameEnd])) { nameEnd += 1 }
                let tag = TagKind(bytes[nameStart..<nameEnd])
                index = tagEnd(bytes, from: nameEnd)
                if !isEnd && (tag == .script || tag == .style) {
                    index = skipElement(named: tag == .script ? "</script" : "</style", bytes, from: index)
                } else {
                    writer.tag(tag, isEnd: isEnd)
                }
                runStart = index
            } else if byte == 0x26 {  // &
                guard let reference = XMLText.reference(base + index + 1, available: count - index - 1) else {
                    index += 1  // a '&' that starts no reference is text
                    continue
                }
                writer.content(bytes, from: runStart, to: index)
                writer.character(reference.scalar)
                index += 1 + reference.length
                runStart = index
            } else if isSpace(byte) {
                writer.content(bytes, from: runStart, to: index)
                runStart = index  // the white space is read at the top of the loop
            } else {
                index += 1  // another byte that only looked like a stop, or a control character: text
            }
        }
        writer.content(bytes, from: runStart, to: count)
    }

    /// The index of the first byte in `start..<end` that may end a run of text (``convert(_:into:)`` decides):
    /// white space, `<` or `&`, except a space followed by a byte that is none of these; `end` when there is none.
    @inline(__always)
    private static func nextStop(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        var index = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        while end - index >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            // The high bit of each byte says "below 0x21", "is '<'", "is '&'", "is ' '" (the SWAR tests of
            // "Bit Twiddling Hacks"). A borrow may mark a byte above a marked one wrongly ('!', '=' or '\'', never a
            // real stop), never one below, so the lowest stop found is never past the first real one.
            let lessThan = word ^ (ones &* 0x3C)
            let ampersand = word ^ (ones &* 0x26)
            let space = word ^ (ones &* 0x20)
            let marks =
                ((word &- ones &* 0x21) & ~word | (lessThan &- ones) & ~lessThan | (ampersand &- ones) & ~ampersand)
                & highBits
            let spaces = (space &- ones) & ~space & highBits
            // A space stops the run only before another mark, or at the end of the word, whose next byte is unknown.
            let stops = marks & ~spaces | spaces & (marks >> 8 | 0x80 << 56)
            if stops != 0 { return index + stops.trailingZeroBitCount >> 3 }
            index += 8
        }
        while index < end {
            let byte = base[index]
            if byte <= 0x20 || byte == 0x3C || byte == 0x26 { return index }
            index += 1
        }
        return end
    }

    /// Text that a run may take in after a single space: not white space, not the start of a tag or reference.
    @inline(__always)
    private static func isPlain(_ byte: UInt8) -> Bool { byte > 0x20 && byte != 0x3C && byte != 0x26 }

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
        // Most descriptions need nothing, and were a sixth of a parse copied byte by byte through the generic
        // UTF-8 view: their bytes are checked where they lie, and the text is returned as it is.
        let clean =
            text.utf8.withContiguousStorageIfAvailable { bytes in
                guard let first = bytes.first, let last = bytes.last else { return true }
                if isSpace(first) || isSpace(last) { return false }
                var previous: UInt8 = 0
                for byte in bytes {
                    if byte > 0x20 {
                        previous = byte
                        continue
                    }
                    switch byte {
                    case 0x09, 0x0D: return false
                    // A space is dropped beside another, or after a line break; before one, by the trim below.
                    case 0x20: if previous == 0x20 || previous == 0x0A { return false }
                    case 0x0A: if previous == 0x20 { return false }
                    default: break
                    }
                    previous = byte
                }
                return true
            } ?? false
        return clean ? text : spacesNormalizedByteByByte(text)
    }

    /// ``normalizingSpaces(_:)``'s rule itself, applied to every byte: what its shortcut must agree with.
    static func spacesNormalizedByteByByte(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
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
        // Most titles need nothing: no leading or trailing space, no run of spaces, no tab or line break. Their
        // bytes are read where they lie, not through the generic UTF-8 view.
        let clean =
            text.utf8.withContiguousStorageIfAvailable { bytes in
                var previousIsSpace = true
                for byte in bytes {
                    let space = isSpace(byte)
                    if space && (previousIsSpace || byte != 0x20) { return false }
                    previousIsSpace = space
                }
                return !previousIsSpace
            } ?? false
        if clean || text.isEmpty { return text }
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

        /// White space: one space before the next text, unless a break is pending.
        mutating func space() { pendingSpace = true }

        /// Text without white space at its ends, `bytes[start..<end]` (nothing when empty).
        @inline(__always)
        mutating func content(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
            guard end > start else { return }
            separate()
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }

        /// A decoded character reference: white space or text.
        mutating func character(_ scalar: UInt32) {
            if scalar == 0x20 || scalar == 0x09 || scalar == 0x0A || scalar == 0x0D {
                pendingSpace = true
                return
            }
            separate()
            XMLText.appendUTF8(scalar, to: &out)
        }

        /// Writes what is pending before more text: the breaks, else a space; nothing at the start.
        @inline(__always)
        private mutating func separate() {
            if !out.isEmpty {
                if pendingBreaks > 0 {
                    for _ in 0..<pendingBreaks { out.append(0x0A) }
                } else if pendingSpace {
                    out.append(0x20)
                }
            }
            pendingBreaks = 0
            pendingSpace = false
        }

        mutating func tag(_ kind: TagKind, isEnd: Bool) {
            switch kind {
            case .listItem where !isEnd:
                breakLine(1)
                separate()
                out.append(0xE2)  // •, U+2022
                out.append(0x80)
                out.append(0xA2)
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
    }

    /// The index after the `>` that ends the tag, skipping quoted attribute values; the end when none does.
    private static func tagEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        let count = bytes.count
        var index = start
        while index < count {
            let byte = base[index]
            if byte == 0x3E { return index + 1 }
            if byte == 0x22 || byte == 0x27 {
                let valueStart = index + 1
                guard valueStart < count, let close = memchr(base + valueStart, Int32(byte), count - valueStart) else {
                    return count
                }
                index = UnsafeRawPointer(close) - UnsafeRawPointer(base)
            }
            index += 1
        }
        return count
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
