// Text helpers that Foundation's NSString layer provided. The daemon's modules use FoundationEssentials
// only, which leaves out that layer (and ICU, CoreFoundation and their start-up cost); these are all the
// daemon needs of it.

extension StringProtocol {
    /// The text without leading and trailing white space: spaces, tabs, line breaks, and the zero-width space
    /// that Foundation's `whitespacesAndNewlines` also counts.
    package func trimmingWhitespace() -> String {
        // Most text has nothing to trim: printable ASCII at both ends is neither white space nor U+200B.
        let text = String(self)
        if let first = text.utf8.first, let last = text.utf8.last, (0x21...0x7E).contains(first),
            (0x21...0x7E).contains(last)
        {
            return text
        }
        let scalars = unicodeScalars
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar == "\u{200B}" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// Whether the text holds a CR or LF anywhere. Checked on bytes: `"\r\n"` is a single `Character`, which
    /// `contains("\n")` on a `String` does not find.
    package var containsLineBreak: Bool {
        utf8.contains { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    /// The text with every line feed replaced by `replacement`, the one in a CRLF pair included (the CR stays).
    /// `replacing("\n", with:)` compares `Character`s and leaves `"\r\n"` alone.
    /// Every log line goes through it: inlinable, so that it is specialized for `String`.
    @inlinable
    package func replacingLineFeeds(with replacement: String) -> String {
        replacingEvery("\n", with: replacement)
    }

    /// The text with every `scalar` replaced by `replacement`, wherever it stands: unlike `replacing(_:with:)`,
    /// which compares `Character`s, this also finds a quote that a combining mark follows.
    @inlinable
    package func replacingEvery(_ scalar: Unicode.Scalar, with replacement: String) -> String {
        // An ASCII scalar is one byte in UTF-8 and no byte of another scalar's encoding equals it: the bytes tell
        // whether it is there without decoding the text (most text has nothing to replace).
        let present =
            scalar.isASCII ? utf8.contains(UInt8(truncatingIfNeeded: scalar.value)) : unicodeScalars.contains(scalar)
        guard present else { return String(self) }
        var result = String.UnicodeScalarView()
        for each in unicodeScalars {
            if each == scalar {
                result.append(contentsOf: replacement.unicodeScalars)
            } else {
                result.append(each)
            }
        }
        return String(result)
    }

    /// Every byte of the UTF-8 form percent-encoded except RFC 3986's unreserved characters
    /// (`A-Z a-z 0-9 - . _ ~`): safe in a query value, a path segment and a URL's user information alike.
    package func percentEncodedExceptUnreserved() -> String {
        var encoded = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(hex[Int(byte >> 4)])
                encoded.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return encoded
    }

    /// Decodes `%XX` escapes as UTF-8, like `removingPercentEncoding`: `nil` when a `%` is not followed by
    /// two hex digits or the decoded bytes are not UTF-8.
    package func percentDecoded() -> String? {
        let utf8 = Array(self.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return String(self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                index += 1
                continue
            }
            guard index + 2 < utf8.count, let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            else { return nil }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// The directory a path is in: `"/a/b"` → `"/a"`, `"/a"` → `"/"`, `"a"` → `"."`; trailing slashes are ignored.
/// Cut at the byte, as the kernel reads a path: a slash followed by a combining mark is one `Character`.
package func parentDirectory(of path: String) -> String {
    let slash = UInt8(ascii: "/")
    var trimmed = Substring(path).utf8
    while trimmed.count > 1 && trimmed.last == slash { trimmed = trimmed.dropLast() }
    guard let last = trimmed.lastIndex(of: slash) else { return "." }
    if last == trimmed.startIndex { return "/" }
    var parent = trimmed[..<last]
    while parent.count > 1 && parent.last == slash { parent = parent.dropLast() }
    return String(Substring(parent))
}
