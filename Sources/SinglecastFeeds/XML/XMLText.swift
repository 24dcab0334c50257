import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Character references and entity references in text and attribute values.
enum XMLText {
    /// Appends `raw` to `out` with references decoded.
    ///
    /// The five predefined entities and numeric references (`&#233;`, `&#xE9;`) are decoded; other names
    /// come from the HTML 4 table (feeds use `&nbsp;` without a DTD); an unknown name or a `&` that starts
    /// no reference is kept as text. A reference to an invalid code point becomes U+FFFD. Nothing is ever
    /// expanded recursively: a decoded `&` is just a byte in the output.
    ///
    /// - Parameter isAttribute: normalize literal tabs and newlines to spaces (XML 1.0 §3.3.3).
    static func appendDecoded(_ raw: UnsafeBufferPointer<UInt8>, to out: inout [UInt8], isAttribute: Bool) {
        guard let base = raw.baseAddress, !raw.isEmpty else { return }
        let count = raw.count
        var index = 0
        while index < count {
            let amp: Int
            if let hit = memchr(base + index, 0x26, count - index) {
                amp = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
            } else {
                amp = count
            }
            if amp > index {
                let run = UnsafeBufferPointer(start: base + index, count: amp - index)
                if isAttribute {
                    for byte in run { out.append(byte == 0x09 || byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
                } else {
                    out.append(contentsOf: run)
                }
            }
            if amp >= count { return }
            index = amp + 1 + decodeReference(base + amp + 1, available: count - amp - 1, into: &out)
        }
    }

    /// Decodes the reference after a `&`; returns how many bytes it used (the `;` included).
    ///
    /// Returns 0 and appends the `&` itself when the bytes do not form a known reference.
    private static func decodeReference(_ start: UnsafePointer<UInt8>, available: Int, into out: inout [UInt8]) -> Int {
        guard let reference = reference(start, available: available) else {
            out.append(0x26)
            return 0
        }
        appendUTF8(reference.scalar, to: &out)
        return reference.length
    }

    /// The character the reference after a `&` stands for, and how many bytes it takes (the `;` included);
    /// `nil` when the bytes do not form a known reference (the `&` is then text).
    static func reference(_ start: UnsafePointer<UInt8>, available: Int) -> (scalar: UInt32, length: Int)? {
        let limit = min(available, 40)
        var semicolon = -1
        var index = 0
        while index < limit {
            let byte = start[index]
            if byte == 0x3B {
                semicolon = index
                break
            }
            let isNameByte =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x23
            if !isNameByte { break }
            index += 1
        }
        guard semicolon > 0 else { return nil }
        let name = UnsafeBufferPointer(start: start, count: semicolon)
        if name[0] == 0x23 {
            guard let scalar = numericReference(name) else { return nil }
            return (scalar, semicolon + 1)
        }
        switch semicolon {
        case 2 where name[0] == 0x6C && name[1] == 0x74: return (0x3C, 3)
        case 2 where name[0] == 0x67 && name[1] == 0x74: return (0x3E, 3)
        case 3 where name[0] == 0x61 && name[1] == 0x6D && name[2] == 0x70: return (0x26, 4)
        default:
            let key = String(decoding: name, as: UTF8.self)
            if key == "quot" { return (0x22, 5) }
            if key == "apos" { return (0x27, 5) }
            guard let value = HTMLEntities.table[key] else { return nil }
            return (value, semicolon + 1)
        }
    }

    /// `#NNN` or `#xHHH`, mapped to U+FFFD when the value is not a character XML allows.
    private static func numericReference(_ name: UnsafeBufferPointer<UInt8>) -> UInt32? {
        guard name.count >= 2 else { return nil }
        var value: UInt32 = 0
        let isHex = name[1] == 0x78 || name[1] == 0x58
        let digits = name.dropFirst(isHex ? 2 : 1)
        guard !digits.isEmpty else { return nil }
        for byte in digits {
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x61...0x66 where isHex: digit = UInt32(byte - 0x61 + 10)
            case 0x41...0x46 where isHex: digit = UInt32(byte - 0x41 + 10)
            default: return nil
            }
            value = value &* (isHex ? 16 : 10) &+ digit
            if value > 0x10FFFF { return 0xFFFD }
        }
        let allowed =
            value == 0x09 || value == 0x0A || value == 0x0D || (value >= 0x20 && value < 0xD800)
            || (value >= 0xE000 && value <= 0xFFFD) || value >= 0x10000
        return allowed ? value : 0xFFFD
    }

    static func appendUTF8(_ value: UInt32, to out: inout [UInt8]) {
        switch value {
        case 0..<0x80:
            out.append(UInt8(value))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | (value >> 6)))
            out.append(UInt8(0x80 | (value & 0x3F)))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | (value >> 12)))
            out.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (value & 0x3F)))
        default:
            out.append(UInt8(0xF0 | (value >> 18)))
            out.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
            out.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (value & 0x3F)))
        }
    }
}
