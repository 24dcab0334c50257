import FoundationEssentials
import SinglecastSupport

/// The pure reading of a URL's text that the engine needs below the daemon: its scheme, which schemes are fetched,
/// and its host.
///
/// `HTTPURL` (in the daemon) is the one owner the rest of the daemon calls, and it answers through these; nothing
/// else parses a scheme or a host.
package enum URLText {
    /// The lower-cased scheme of a URL (`https` in `HTTPS://host/`), or `nil` when it has none.
    package static func scheme(of url: String) -> String? {
        // As bytes: every fetch and download asks, and Characters (grapheme breaking) were 1 % of a refresh's CPU.
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = bytes[..<colon]
        func isLetter(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        }
        guard let first = scheme.first, isLetter(first),
            scheme.allSatisfy({
                isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            })
        else { return nil }
        // Letters lower-cased; digits, "+", "-" and "." stay.
        return String(decoding: scheme.map { isLetter($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether `url` holds `://` anywhere, read as bytes.
    package static func containsSchemeSeparator(_ url: String) -> Bool {
        var last2: (UInt8, UInt8) = (0, 0)
        for byte in url.utf8 {
            if byte == UInt8(ascii: "/") && last2 == (UInt8(ascii: ":"), UInt8(ascii: "/")) { return true }
            last2 = (last2.1, byte)
        }
        return false
    }

    /// Whether a lower-cased scheme is one that is fetched: http and https, nothing else.
    package static func isFetched(scheme: String) -> Bool { scheme == "http" || scheme == "https" }

    /// Whether a URL (white space around it aside) is https rather than anything else: what `require_https` asks.
    package static func isHTTPS(_ url: String) -> Bool { scheme(of: url.trimmingWhitespace()) == "https" }

    /// A URL's host, lower-cased (white space around the URL aside), or `nil` when it names none.
    package static func host(of url: String) -> String? {
        guard let host = URLComponents(string: url.trimmingWhitespace())?.host, !host.isEmpty else { return nil }
        return host.lowercased()
    }
}
