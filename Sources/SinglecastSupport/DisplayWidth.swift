/// How many terminal columns text takes, and text cut to fit a number of columns.
///
/// East Asian Wide and Fullwidth characters (CJK, Hangul, kana, fullwidth forms) and emoji shown as emoji take two
/// columns, combining marks and format characters none, everything else one — what `wcwidth` answers for the
/// characters titles hold, from the standard library's Unicode properties and a small range table (no ICU).
/// A character is a grapheme: a flag, an emoji joined by ZWJ or a letter with its accents is measured, and cut,
/// as one.
package enum DisplayWidth {
    /// The columns `text` takes on a terminal.
    package static func of(_ text: some StringProtocol) -> Int {
        // Nearly every id, date and state, and most titles, are ASCII: no grapheme breaks to find.
        let utf8 = text.utf8
        if utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return utf8.count }
        return text.reduce(0) { $0 + of($1) }
    }

    /// The columns one character (grapheme) takes: an emoji sequence (a flag, a ZWJ family, a symbol with VS16) is
    /// one picture two columns wide; otherwise its scalars' widths add up (a letter and its marks 1, halfwidth
    /// ﾊ and its ﾟ 2, as terminals show them).
    package static func of(_ character: Character) -> Int {
        var sum = 0
        for scalar in character.unicodeScalars {
            if scalar.value == 0xFE0F || scalar.properties.isEmojiPresentation { return 2 }
            sum += of(scalar)
        }
        return sum
    }

    /// The columns one scalar takes on its own: 0, 1 or 2.
    package static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x7F { return value < 0x20 ? 0 : 1 }
        if value < 0xA0 { return 0 }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        // Hangul medial vowels and final consonants join the syllable their leading consonant starts.
        if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return 0 }
        if properties.isEmojiPresentation { return 2 }
        return wide.contains { $0.contains(value) } ? 2 : 1
    }

    /// `text` cut to at most `columns` columns with `…` as its last one when it does not fit, else `text` whole.
    /// It is cut between characters, never inside one.
    package static func truncated(_ text: String, to columns: Int) -> String {
        guard of(text) > columns else { return text }
        guard columns > 0 else { return "" }
        var used = 0
        var result = ""
        for character in text {
            let width = of(character)
            if used + width > columns - 1 { break }
            used += width
            result.append(character)
        }
        return result + "…"
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges outside the emoji, from Unicode's `EastAsianWidth.txt`.
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul leading consonants
        0x2329...0x232A,  // angle brackets
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // kana, Bopomofo, Hangul compatibility jamo, Kanbun, CJK strokes, enclosed, compatibility
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x16FE0...0x16FE4, 0x17000...0x18CFF,  // Tangut, Khitan
        0x1AFF0...0x1B2FF,  // kana supplement and extensions, Nüshu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD, 0x30000...0x3FFFD,  // CJK extensions B and beyond
    ]
}
