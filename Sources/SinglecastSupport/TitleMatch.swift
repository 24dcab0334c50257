/// How a name someone typed finds a podcast title: a substring of it, ignoring case, accents and other
/// diacritics (`é` is `e`, `ß` is `ss`), runs of white space and a leading "The", "A" or "An".
///
/// The one owner of the rule: the daemon resolves `PODCAST` arguments with it. Folding uses the standard library's
/// Unicode data only (no ICU): a Latin, Greek or Cyrillic letter "WITH" a mark is its base letter, which is what
/// canonical decomposition without the marks gives for those scripts, and a few letters that do not decompose
/// (ß, æ, œ, þ, ı) are spelled out.
package enum TitleMatch {
    /// `text` as matching compares it: lower case, without diacritics, white space runs as one space, no leading
    /// article.
    package static func folded(_ text: some StringProtocol) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in String(text).lowercased().unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
                continue
            }
            let generalCategory = scalar.properties.generalCategory
            if generalCategory == .nonspacingMark || generalCategory == .enclosingMark { continue }
            if pendingSpace {
                scalars.append(" ")
                pendingSpace = false
            }
            if scalar.isASCII {
                scalars.append(scalar)
            } else {
                scalars.append(contentsOf: base(of: scalar).unicodeScalars)
            }
        }
        var folded = String(scalars)
        for article in ["the ", "a ", "an "] where folded.hasPrefix(article) && folded.count > article.count {
            folded.removeFirst(article.count)
            break
        }
        return folded
    }

    /// Whether `query` names `title`: its folded form is part of the title's.
    package static func matches(_ query: String, title: String) -> Bool {
        let query = folded(query)
        return !query.isEmpty && folded(title).contains(query)
    }

    /// The letters a lower-case scalar folds to.
    private static func base(of scalar: Unicode.Scalar) -> String {
        if let spelled = spelledOut[scalar] { return spelled }
        return bases[scalar].map { String($0) } ?? String(scalar)
    }

    private static let spelledOut: [Unicode.Scalar: String] = [
        "ß": "ss", "æ": "ae", "œ": "oe", "þ": "th", "ð": "d", "ı": "i", "ĳ": "ij", "ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl",
        "ø": "o", "ł": "l", "đ": "d", "ħ": "h",
    ]

    /// Every lower-case letter "WITH" a mark in the Latin, Greek and Cyrillic blocks, to its base letter: built once
    /// from the scalars' names, `LATIN SMALL LETTER E WITH ACUTE` → `LATIN SMALL LETTER E`.
    private static let bases: [Unicode.Scalar: Unicode.Scalar] = {
        let blocks: [ClosedRange<UInt32>] = [0x00...0x024F, 0x0370...0x04FF, 0x1E00...0x1FFF]
        let scalars = blocks.flatMap { $0.compactMap(Unicode.Scalar.init) }
        var byName: [String: Unicode.Scalar] = [:]
        for scalar in scalars { if let name = scalar.properties.name { byName[name] = scalar } }
        var bases: [Unicode.Scalar: Unicode.Scalar] = [:]
        for scalar in scalars where scalar.properties.isLowercase {
            guard let name = scalar.properties.name, let with = name.firstRange(of: " WITH ") else { continue }
            if let base = byName[String(name[..<with.lowerBound])] { bases[scalar] = base }
        }
        return bases
    }()
}
