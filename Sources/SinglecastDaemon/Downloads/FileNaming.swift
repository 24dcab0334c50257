import FoundationEssentials
import SinglecastSupport

/// Turns URLs and user-given names into safe file names inside the download directory.
package enum FileNaming {
    /// The longest file name most Linux file systems accept, in bytes.
    package static let maximumLength = 255
    /// Room kept for the ` (NN)` a collision adds and the `.part` suffix of the partial file.
    private static let reserved = 12

    /// A file name for `url`: its last path component, percent-decoded, without the query, sanitized.
    package static func name(for url: URL) -> String {
        let component = url.path(percentEncoded: true).split(separator: "/").last.map(String.init) ?? ""
        return sanitize(component.percentDecoded() ?? component, fallback: url.host.map { "\($0) download" })
    }

    /// Makes `name` safe: no `/`, no NUL or control characters, no leading dots (no hidden files, no `..`),
    /// at most 255 bytes including room for suffixes, extension kept when shortened.
    package static func sanitize(_ name: String, fallback: String? = nil) -> String {
        if isPlainAndSafe(name) { return name }  // what the rest would return, without Foundation's string calls
        var cleaned = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { scalar -> Unicode.Scalar in
                    if scalar == "/" || scalar == "\\" { return "_" }
                    if scalar.properties.generalCategory == .control || scalar.value == 0x7F { return "_" }
                    return scalar
                }
            )
        ).trimmingWhitespace()
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        cleaned = cleaned.trimmingWhitespace()
        if cleaned.isEmpty || cleaned.allSatisfy({ $0 == "_" }) {
            guard let fallback else { return "download" }
            return sanitize(fallback)
        }
        return truncate(cleaned, to: maximumLength - reserved)
    }

    /// Printable ASCII without `/` or `\\`, not starting with a dot or a space, not ending with a space, not only
    /// underscores, and short enough: a name ``sanitize(_:fallback:)`` leaves as it is. Most episode titles are
    /// such names, and an enqueue of 10,000 episodes sanitizes 20,000 of them.
    private static func isPlainAndSafe(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, let last = bytes.last, bytes.count <= maximumLength - reserved,
            first != UInt8(ascii: "."), first != UInt8(ascii: " "), last != UInt8(ascii: " ")
        else { return false }
        var onlyUnderscores = true
        for byte in bytes {
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "/"), byte != UInt8(ascii: "\\") else { return false }
            if byte != UInt8(ascii: "_") { onlyUnderscores = false }
        }
        return !onlyUnderscores
    }

    /// A sanitized name that FAT and exFAT accept too, as players and SD cards need: `"*:<>?|` become `_`,
    /// trailing dots and spaces go (Windows drops them, and two names would meet), and a DOS device name (`CON`,
    /// `NUL`, `COM1`, … with any extension) gets a `_`.
    package static func portable(_ name: String) -> String {
        var cleaned = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { "\"*:<>?|".unicodeScalars.contains($0) ? "_" : $0 }
            )
        )
        while let last = cleaned.last, last == "." || last == " " { cleaned.removeLast() }
        if cleaned.isEmpty { cleaned = "_" }
        let stem = cleaned.split(separator: ".", maxSplits: 1).first.map { $0.uppercased() } ?? ""
        if deviceNames.contains(stem.trimmingWhitespace()) { cleaned = "_" + cleaned }
        return cleaned
    }

    private static let deviceNames = Set(["CON", "PRN", "AUX", "NUL"] + (1...9).flatMap { ["COM\($0)", "LPT\($0)"] })

    /// `base (2).ext`, `base (3).ext`, … — the first of `name` and those that `isTaken` says is free.
    package static func unique(_ name: String, isTaken: (String) -> Bool) -> String {
        guard isTaken(name) else { return name }
        let (base, suffix) = split(name)
        var counter = 2
        while true {
            let candidate = "\(base) (\(counter))\(suffix)"
            if !isTaken(candidate) { return candidate }
            counter += 1
        }
    }

    /// Splits `episode.mp3` into `episode` and `.mp3`; a name without a sensible extension has none.
    private static func split(_ name: String) -> (base: String, suffix: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        let suffix = String(name[dot...])
        guard suffix.utf8.count <= 12, !suffix.contains(" ") else { return (name, "") }
        return (String(name[..<dot]), suffix)
    }

    /// Shortens to at most `limit` UTF-8 bytes on a character boundary, keeping the extension.
    private static func truncate(_ name: String, to limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        let (base, suffix) = split(name)
        var shortened = ""
        for character in base {
            if shortened.utf8.count + character.utf8.count + suffix.utf8.count > limit { break }
            shortened.append(character)
        }
        return shortened + suffix
    }
}
