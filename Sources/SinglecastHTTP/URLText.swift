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
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        return scheme.lowercased()
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
