import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A type that reads itself from JSON in one pass over the bytes, for values too large for `JSONDecoder`.
///
/// `JSONDecoder` first maps the whole text, then asks for every field by name through `Decoder`'s existentials:
/// for the 100,000 episodes of a large podcast that was most of a second of a release build's time. A conforming
/// type reads the same JSON its `Decodable` conformance reads, keyed by the same `CodingKeys`.
package protocol JSONByteReadable {
    /// Reads one value at the reader's position and leaves the reader after it.
    ///
    /// - Throws: ``JSONByteError`` when the text is not JSON or lacks a required field.
    init(reading reader: inout JSONByteReader) throws
}

/// A type that writes itself as JSON straight into bytes, as `WireCoding`'s encoder would write it (compact, keys
/// sorted, slashes unescaped), for values too large for `JSONEncoder`.
package protocol JSONByteWritable {
    func write(to writer: inout JSONByteWriter) throws
}

/// What went wrong reading JSON, and where.
package struct JSONByteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Byte offset in the text.
    package var offset: Int
    package var message: String

    package init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    package var description: String { "\(message) at byte \(offset)" }
}

/// The `CodingKeys` of a type, looked up by a key's bytes without making a `String` of them.
package struct JSONKeyTable<Key: CodingKey & CaseIterable>: Sendable {
    /// In the order the keys are written (``sorted``), so that the key after the last one found is tried first.
    private let entries: [(bytes: [UInt8], key: Key)]

    package init() {
        entries = Self.sorted.map { (Array($0.stringValue.utf8), $0) }
    }

    /// The key spelled `bytes`, or `nil` for a key the type does not know (a newer peer's field).
    ///
    /// - Parameter next: where to start looking, updated past the key found. Members come in the written order, so
    ///   one comparison usually finds each: this runs for every member of every episode.
    package func key(_ bytes: UnsafeBufferPointer<UInt8>, next: inout Int) -> Key? {
        let count = entries.count
        for step in 0..<count {
            let index = (next + step) % count
            let candidate = entries[index].bytes
            guard candidate.count == bytes.count else { continue }
            let equal = candidate.withUnsafeBufferPointer { candidate in
                candidate.isEmpty || memcmp(candidate.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
            if equal {
                next = index + 1
                return entries[index].key
            }
        }
        return nil
    }

    /// Every key in the order `.sortedKeys` writes them: by the bytes of their names.
    package static var sorted: [Key] {
        Key.allCases.sorted { $0.stringValue.utf8.lexicographicallyPrecedes($1.stringValue.utf8) }
    }
}

/// A forward-only reader of one JSON text.
///
/// Strings without escapes become a `String` in one copy; numbers are read as integers only, which is all the
/// types that read through it hold. Values a type does not know are skipped without being built.
package struct JSONByteReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Where the next byte is read.
    package private(set) var offset: Int

    /// Runs `body` with a reader at the start of `bytes`, which it may not keep.
    package static func read<T>(
        _ bytes: some ContiguousBytes,
        _ body: (inout JSONByteReader) throws -> T
    ) rethrows -> T {
        try bytes.withUnsafeBytes { raw in
            var reader = JSONByteReader(bytes: raw.bindMemory(to: UInt8.self), offset: 0)
            return try body(&reader)
        }
    }

    /// Reads a whole text as `T`: one value, then nothing but white space.
    package static func decode<T: JSONByteReadable>(_ type: T.Type, from bytes: some ContiguousBytes) throws -> T {
        try read(bytes) { reader in
            let value = try T(reading: &reader)
            try reader.expectEnd()
            return value
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    package func error(_ message: String) -> JSONByteError {
        JSONByteError(offset: offset, message: message)
    }

    /// The next byte that is not white space, without consuming it; `nil` at the end.
    private mutating func peek() -> UInt8? {
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): offset += 1
            default: return bytes[offset]
            }
        }
        return nil
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard peek() == byte else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
        offset += 1
    }

    /// Checks that only white space is left.
    package mutating func expectEnd() throws {
        if peek() != nil { throw error("unexpected text after the value") }
    }

    /// Consumes `null` if it comes next.
    package mutating func readNull() -> Bool {
        guard peek() == UInt8(ascii: "n"), matches("null") else { return false }
        offset += 4
        return true
    }

    private func matches(_ literal: StaticString) -> Bool {
        guard bytes.count - offset >= literal.utf8CodeUnitCount else { return false }
        return memcmp(bytes.baseAddress! + offset, literal.utf8Start, literal.utf8CodeUnitCount) == 0
    }

    /// Reads an object, calling `body` with each member's key; `body` must read or skip the member's value.
    package mutating func readObject(
        _ body: (inout JSONByteReader, _ key: UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        try expect(UInt8(ascii: "{"))
        if try isClosed(by: UInt8(ascii: "}"), first: true) { return }
        repeat {
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try readRawString()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
        } while try !isClosed(by: UInt8(ascii: "}"), first: false)
    }

    /// Reads an array, calling `body` for each element; `body` must read or skip it.
    package mutating func readArray(_ body: (inout JSONByteReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if try isClosed(by: UInt8(ascii: "]"), first: true) { return }
        repeat {
            try body(&self)
        } while try !isClosed(by: UInt8(ascii: "]"), first: false)
    }

    /// Consumes `close` and returns `true` when the object or array ends here. Before its first member (`first`)
    /// anything else is that member; after one, a comma must come.
    private mutating func isClosed(by close: UInt8, first: Bool) throws -> Bool {
        let next = peek()
        if next == close {
            offset += 1
            return true
        }
        if first { return false }
        guard next == UInt8(ascii: ",") else { throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'") }
        offset += 1
        return false
    }

    /// An array of `T`.
    package mutating func readArray<T: JSONByteReadable>(of type: T.Type) throws -> [T] {
        var elements: [T] = []
        try readArray { reader in elements.append(try T(reading: &reader)) }
        return elements
    }

    /// The bytes of a key between its quotes. A key with escapes is refused: the protocol's keys are plain ASCII.
    private mutating func readRawString() throws -> UnsafeBufferPointer<UInt8> {
        try expect(UInt8(ascii: "\""))
        guard let key = try readUpToQuote() else { throw error("escapes are not expected in a key") }
        return key
    }

    package mutating func readString() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
        guard let plain = try readUpToQuote() else { return try readEscapedString(from: start) }
        return String(decoding: plain, as: UTF8.self)
    }

    /// The bytes of a string up to its closing quote, which is consumed; `nil`, with the reader left where it was,
    /// when the string has a backslash.
    ///
    /// Found with `memchr`, which matters most in a debug build. A raw control character is let through here, as
    /// many readers do; the escaped path and `JSONDecoder` refuse it.
    private mutating func readUpToQuote() throws -> UnsafeBufferPointer<UInt8>? {
        guard let quote = find(Self.quote, from: offset, before: bytes.count) else {
            throw error("the text ends inside a string")
        }
        if find(Self.backslash, from: offset, before: quote) != nil { return nil }
        let text = UnsafeBufferPointer(rebasing: bytes[offset..<quote])
        offset = quote + 1
        return text
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// The index of the first `byte` in `start..<end`.
    private func find(_ byte: UInt8, from start: Int, before end: Int) -> Int? {
        guard start < end, let base = bytes.baseAddress, let found = memchr(base + start, Int32(byte), end - start)
        else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// The rest of a string that has escapes, from its first byte at `start`.
    private mutating func readEscapedString(from start: Int) throws -> String {
        var text = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { break }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHexUnit()
                    if (0xD800..<0xDC00).contains(scalar), matches("\\u") {
                        let mark = offset
                        offset += 2
                        let low = try readHexUnit()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                        } else {
                            offset = mark
                        }
                    }
                    // A lone surrogate has no UTF-8 form; it reads as U+FFFD, as invalid UTF-8 does.
                    text.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
                default:
                    throw error("an unknown escape")
                }
            case ..<0x20:
                throw error("a control character in a string")
            default:
                text.append(byte)
            }
        }
        throw error("the text ends inside a string")
    }

    private mutating func readHexUnit() throws -> UInt32 {
        guard bytes.count - offset >= 4 else { throw error("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    /// A whole number that fits in `Int64`; a fraction or an exponent is refused, as `JSONDecoder` refuses
    /// `1.5` for an integer.
    package mutating func readInt64() throws -> Int64 {
        guard let first = peek() else { throw error("expected a number") }
        let negative = first == UInt8(ascii: "-")
        if negative { offset += 1 }
        let start = offset
        var value: Int64 = 0
        while offset < bytes.count, case let digit = bytes[offset] &- UInt8(ascii: "0"), digit < 10 {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) =
                negative
                ? times10.subtractingReportingOverflow(Int64(digit)) : times10.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { throw error("a number out of range") }
            value = sum
            offset += 1
        }
        guard offset > start else { throw error("expected a number") }
        if offset < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[offset]) {
            throw error("expected a whole number")
        }
        return value
    }

    package mutating func readInt() throws -> Int {
        Int(try readInt64())
    }

    package mutating func readBool() throws -> Bool {
        if peek() == UInt8(ascii: "t"), matches("true") {
            offset += 4
            return true
        }
        if peek() == UInt8(ascii: "f"), matches("false") {
            offset += 5
            return false
        }
        throw error("expected true or false")
    }

    /// Skips one value of any kind, without checking more than it needs to find its end.
    package mutating func skipValue() throws {
        _ = try valueBytes()
    }

    /// The bytes of the next value, which the reader moves past; for handing a small part to `JSONDecoder`.
    package mutating func valueBytes() throws -> UnsafeBufferPointer<UInt8> {
        guard let first = peek() else { throw error("expected a value") }
        let start = offset
        switch first {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            repeat {
                guard offset < bytes.count else { throw error("the text ends inside a value") }
                switch bytes[offset] {
                case UInt8(ascii: "\""):
                    try skipString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                offset += 1
            } while depth > 0
        default:
            while offset < bytes.count {
                switch bytes[offset] {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                    UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "E"):
                    offset += 1
                    continue
                default: break
                }
                break
            }
            guard offset > start else { throw error("expected a value") }
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<offset])
    }

    private mutating func skipString() throws {
        var from = offset + 1
        // The string ends at the first quote that an even number of backslashes precede.
        while let quote = find(Self.quote, from: from, before: bytes.count) {
            var backslashes = 0
            while quote - backslashes - 1 > offset, bytes[quote - backslashes - 1] == Self.backslash {
                backslashes += 1
            }
            if backslashes % 2 == 0 {
                offset = quote + 1
                return
            }
            from = quote + 1
        }
        throw error("the text ends inside a string")
    }

    /// The next value decoded by `JSONDecoder`: for the small parts of a large value that keep their `Decodable`.
    package mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try valueBytes()
        return try JSONDecoder().decode(type, from: Data(buffer: value))
    }

    /// Reads `T` or `null`.
    package mutating func readOptional<T>(_ read: (inout JSONByteReader) throws -> T) throws -> T? {
        readNull() ? nil : try read(&self)
    }

    // The common optionals without a closure, which costs as much as the read itself in a debug build.

    package mutating func readOptionalString() throws -> String? {
        readNull() ? nil : try readString()
    }

    package mutating func readOptionalInt64() throws -> Int64? {
        readNull() ? nil : try readInt64()
    }

    package mutating func readOptionalInt() throws -> Int? {
        readNull() ? nil : try readInt()
    }
}

/// Writes JSON as `WireCoding`'s `JSONEncoder` does: compact, `/` unescaped, control characters as `\n` or
/// `\u001f`, everything else as UTF-8.
package struct JSONByteWriter {
    package private(set) var bytes: [UInt8] = []
    /// Whether the object being written has a member yet, so the next one needs a comma.
    private var hasMember: [Bool] = []

    /// `capacity`: the bytes to reserve, so that a small document (an event, a download) is not copied each time
    /// its buffer doubles.
    package init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Ends a line of the line-delimited protocol.
    package mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
    }

    package mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        hasMember.append(false)
    }

    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        hasMember.removeLast()
    }

    /// Writes a member's key and colon; the caller writes its value next.
    package mutating func key(_ key: some CodingKey) {
        if hasMember[hasMember.count - 1] { bytes.append(UInt8(ascii: ",")) }
        hasMember[hasMember.count - 1] = true
        // The protocol's keys are snake_case ASCII, with nothing to escape.
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: key.stringValue.utf8)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Members whose value is `nil` are left out, as `encodeIfPresent` leaves them out.
    package mutating func member(_ key: some CodingKey, _ value: String?) {
        guard let value else { return }
        self.key(key)
        write(value)
    }

    package mutating func member(_ key: some CodingKey, _ value: Int64?) {
        guard let value else { return }
        self.key(key)
        write(value)
    }

    /// An integer's decimal digits, without making a `String` of them (a listing writes hundreds of thousands).
    private mutating func write(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 digits at most, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count += 1
                buffer[buffer.count - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(buffer.count - count)...])
        }
    }

    package mutating func member(_ key: some CodingKey, _ value: Int?) {
        member(key, value.map(Int64.init))
    }

    package mutating func member(_ key: some CodingKey, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    package mutating func member(_ key: some CodingKey, _ value: Bool?) {
        guard let value else { return }
        member(key, value)
    }

    /// A number as `JSONEncoder` writes a `Double`: its `description`, without a trailing `.0`.
    ///
    /// - Throws: ``JSONByteError`` for NaN and the infinities, which JSON cannot hold (the encoder refuses them too).
    package mutating func member(_ key: some CodingKey, _ value: Double?) throws {
        guard let value else { return }
        guard value.isFinite else { throw JSONByteError(offset: bytes.count, message: "\(value) is not a JSON number") }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        self.key(key)
        bytes.append(contentsOf: text.utf8)
    }

    /// A member whose value writes itself; left out when `nil`.
    package mutating func member(_ key: some CodingKey, _ value: (some JSONByteWritable)?) throws {
        guard let value else { return }
        self.key(key)
        try value.write(to: &self)
    }

    /// Writes `values` as an array of strings.
    package mutating func strings(_ values: [String]) {
        list(values) { writer, value in writer.write(value) }
    }

    /// Writes `values` as an array of integers.
    package mutating func integers(_ values: [Int64]) {
        list(values) { writer, value in writer.write(value) }
    }

    private mutating func list<Element>(_ values: [Element], _ element: (inout Self, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            element(&self, value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes `{"key":[…]}`: an answer whose one member is a list of objects that write themselves.
    package mutating func object(_ key: some CodingKey, array values: [some JSONByteWritable]) throws {
        beginObject()
        self.key(key)
        try array(values)
        endObject()
    }

    /// Writes `{"key":…}`: params whose one member is an object that writes itself.
    package mutating func object(_ key: some CodingKey, _ value: some JSONByteWritable) throws {
        beginObject()
        self.key(key)
        try value.write(to: &self)
        endObject()
    }

    /// Writes `values` as an array of objects that write themselves.
    package mutating func array(_ values: [some JSONByteWritable]) throws {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            let start = bytes.count
            try value.write(to: &self)
            if index == 0 {
                // Elements are alike in size: room for all of them at once instead of a doubling copy per step.
                bytes.reserveCapacity(bytes.count + (bytes.count - start + 1) * (values.count - 1) * 5 / 4)
            }
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes `value` with `WireCoding`'s encoder: for the small parts of a large value.
    package mutating func encode(_ value: some Encodable) throws {
        bytes.append(contentsOf: try WireCoding.encoder().encode(value))
    }

    /// A string in quotes, escaped as `JSONEncoder` escapes it.
    package mutating func write(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            // Runs without anything to escape, nearly every string, are copied whole.
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscaped(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        let short: UInt8? =
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
            case 0x08: UInt8(ascii: "b")
            case 0x09: UInt8(ascii: "t")
            case 0x0A: UInt8(ascii: "n")
            case 0x0C: UInt8(ascii: "f")
            case 0x0D: UInt8(ascii: "r")
            default: nil
            }
        bytes.append(UInt8(ascii: "\\"))
        if let short {
            bytes.append(short)
        } else {
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: Array("u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}
