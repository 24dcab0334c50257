import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Turns a document's bytes into UTF-8 with `\n` line ends, the only form ``XMLReader`` reads.
///
/// UTF-8 without carriage returns (nearly every feed) is used in place, without a copy. UTF-16 (by its
/// byte order mark or its first bytes), ISO-8859-1, ISO-8859-15 and windows-1252 (by the XML declaration)
/// are converted. ISO-8859-1 is read as windows-1252, as browsers do: feeds that declare Latin-1 use
/// Windows' curly quotes in 0x80–0x9F. Invalid UTF-8 is not an error: each bad sequence later becomes
/// U+FFFD when text is turned into a `String`.
enum DocumentBytes {
    private enum Encoding {
        case utf8
        case utf16(bigEndian: Bool, skip: Int)
        case windows1252
        case latin9
    }

    /// Calls `body` with the document as UTF-8.
    static func withUTF8<Result>(
        _ data: Data,
        _ body: (UnsafeBufferPointer<UInt8>) throws(FeedError) -> Result
    ) throws(FeedError) -> Result {
        try withUTF8(data, lineEndsCheckedByReader: false) { (bytes, _) throws(FeedError) in try body(bytes) }
    }

    /// Calls `body` with the document as UTF-8 and whether its line ends are still unchecked.
    ///
    /// With `lineEndsCheckedByReader`, a UTF-8 document is handed over in place without the pass over all its bytes
    /// that looks for a carriage return (`true`): the reader looks for them as it goes
    /// (``XMLReader/init(_:maxDepth:checkingLineEnds:)``), while the bytes are in the cache anyway, and when it
    /// finds one the caller reads ``normalizingLineEnds(_:)`` of the document instead. A converted document is
    /// already normalized (`false`).
    static func withUTF8<Result>(
        _ data: Data,
        lineEndsCheckedByReader: Bool,
        _ body: (UnsafeBufferPointer<UInt8>, _ lineEndsUnchecked: Bool) throws(FeedError) -> Result
    ) throws(FeedError) -> Result {
        let outcome: Swift.Result<Result, FeedError> = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do throws(FeedError) {
                switch try encoding(of: bytes) {
                case .utf8:
                    let start = hasUTF8BOM(bytes) ? 3 : 0
                    let content = UnsafeBufferPointer(rebasing: bytes[start...])
                    if lineEndsCheckedByReader { return .success(try body(content, true)) }
                    if !hasCarriageReturn(content) { return .success(try body(content, false)) }
                    let converted = normalizingLineEnds(content)
                    return .success(
                        try converted.withUnsafeBufferPointer { (buffer) throws(FeedError) in try body(buffer, false) }
                    )
                case .utf16(let bigEndian, let skip):
                    let converted = normalizingLineEnds(utf16(bytes, bigEndian: bigEndian, skip: skip))
                    return .success(
                        try converted.withUnsafeBufferPointer { (buffer) throws(FeedError) in try body(buffer, false) }
                    )
                case .windows1252:
                    let converted = normalizingLineEnds(singleByte(bytes, table: windows1252High))
                    return .success(
                        try converted.withUnsafeBufferPointer { (buffer) throws(FeedError) in try body(buffer, false) }
                    )
                case .latin9:
                    let converted = normalizingLineEnds(singleByte(bytes, table: latin9High))
                    return .success(
                        try converted.withUnsafeBufferPointer { (buffer) throws(FeedError) in try body(buffer, false) }
                    )
                }
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private static func hasUTF8BOM(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
    }

    private static func encoding(of bytes: UnsafeBufferPointer<UInt8>) throws(FeedError) -> Encoding {
        if hasUTF8BOM(bytes) { return .utf8 }
        if bytes.count >= 4 {
            if (bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0xFE && bytes[3] == 0xFF)
                || (bytes[0] == 0xFF && bytes[1] == 0xFE && bytes[2] == 0 && bytes[3] == 0)
            {
                throw FeedError(
                    code: .unsupportedEncoding,
                    message: "The document is UTF-32, which is not supported; feeds are UTF-8 or UTF-16."
                )
            }
        }
        if bytes.count >= 2 {
            if bytes[0] == 0xFE && bytes[1] == 0xFF { return .utf16(bigEndian: true, skip: 2) }
            if bytes[0] == 0xFF && bytes[1] == 0xFE { return .utf16(bigEndian: false, skip: 2) }
        }
        if bytes.count >= 4 {
            if bytes[0] == 0x3C && bytes[1] == 0 && bytes[2] == 0x3F && bytes[3] == 0 {
                return .utf16(bigEndian: false, skip: 0)
            }
            if bytes[0] == 0 && bytes[1] == 0x3C && bytes[2] == 0 && bytes[3] == 0x3F {
                return .utf16(bigEndian: true, skip: 0)
            }
        }
        guard let label = declaredEncoding(bytes) else { return .utf8 }
        switch label {
        case "utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968", "utf-16", "utf16":
            // A document that reads "<?xml … utf-16" in single bytes is not UTF-16, whatever it says.
            return .utf8
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "ibm819",
            "windows-1252", "cp1252", "x-cp1252", "win-1252":
            return .windows1252
        case "iso-8859-15", "iso8859-15", "iso_8859-15", "latin9", "latin-9", "l9":
            return .latin9
        default:
            if isValidUTF8(bytes) { return .utf8 }
            throw .unsupportedEncoding(label)
        }
    }

    /// The lowercased `encoding` of a leading XML declaration.
    private static func declaredEncoding(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let head = bytes.prefix(256)
        guard head.starts(with: Array("<?xml".utf8)) else { return nil }
        guard let end = head.firstIndex(of: 0x3E) else { return nil }
        let declaration = String(decoding: head[..<end], as: UTF8.self)
        guard let key = declaration.firstRange(of: "encoding") else { return nil }
        var rest = declaration[key.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\t" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        guard let close = rest.firstIndex(of: quote) else { return nil }
        return String(rest[..<close]).trimmed.lowercased()
    }

    private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Whether the bytes hold a carriage return (`\r`, alone or before `\n`).
    static func hasCarriageReturn(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, 0x0D, bytes.count) != nil
    }

    /// The bytes with every `\r\n` and every lone `\r` replaced by `\n` (XML 1.0 §2.11).
    static func normalizingLineEnds(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == 0x0D {
                out.append(0x0A)
                if index + 1 < count && bytes[index + 1] == 0x0A { index += 1 }
            } else {
                out.append(byte)
            }
            index += 1
        }
        return out
    }

    private static func normalizingLineEnds(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(0x0D) else { return bytes }
        return bytes.withUnsafeBufferPointer { normalizingLineEnds($0) }
    }

    private static func utf16(_ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool, skip: Int) -> [UInt8] {
        var units: [UInt16] = []
        units.reserveCapacity((bytes.count - skip) / 2)
        var index = skip
        while index + 1 < bytes.count {
            let high = UInt16(bytes[bigEndian ? index : index + 1])
            let low = UInt16(bytes[bigEndian ? index + 1 : index])
            units.append(high << 8 | low)
            index += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    private static func singleByte(_ bytes: UnsafeBufferPointer<UInt8>, table: [UInt32]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        for byte in bytes {
            if byte < 0x80 {
                out.append(byte)
            } else {
                XMLText.appendUTF8(table[Int(byte) - 0x80], to: &out)
            }
        }
        return out
    }

    /// windows-1252 bytes 0x80–0xFF; the five undefined bytes map to the C1 control of the same value.
    private static let windows1252High: [UInt32] = {
        let c1: [UInt32] = [
            0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
            0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
            0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
        ]
        return c1 + (0xA0...0xFF).map { UInt32($0) }
    }()

    /// ISO-8859-15: Latin-1 with eight code points replaced (the euro sign among them).
    private static let latin9High: [UInt32] = {
        var table = (0x80...0xFF).map { UInt32($0) }
        let changes: [(Int, UInt32)] = [
            (0xA4, 0x20AC), (0xA6, 0x0160), (0xA8, 0x0161), (0xB4, 0x017D), (0xB8, 0x017E), (0xBC, 0x0152),
            (0xBD, 0x0153), (0xBE, 0x0178),
        ]
        for (byte, scalar) in changes { table[byte - 0x80] = scalar }
        return table
    }()
}
