import FoundationEssentials
import SinglecastHTTP
import SinglecastSupport

/// An http or https URL with a host, with credentials written into it (`https://user:pass@host/…`) moved out.
///
/// The one rule for a URL the daemon stores and fetches, enclosures and feeds alike: nothing else decides which
/// schemes are allowed, and no stored or printed URL carries a password.
package struct HTTPURL: Sendable, Hashable {
    /// Why a text is not such a URL.
    package enum Problem: Error, Equatable, Sendable {
        case unparsable
        case scheme(String)
        case noHost
    }

    /// The URL without user information, its scheme lower-cased.
    package var string: String
    package var url: URL
    package var user: String?
    /// Set whenever `user` is (empty when the URL named only a user).
    package var password: String?

    package init(_ text: String) throws(Problem) {
        // The shape of nearly every URL, already as the full parse would write it: one parse (`URL`) instead of
        // three (`URLComponents`, its `string` written again, `URL`), about 12 k instructions of each enqueued URL.
        if Self.isPlain(text), Self.isWrittenAsParsed(text), let url = URL(string: text) {
            self.init(string: text, url: url, user: nil, password: nil)
        } else {
            try self.init(parsing: text)
        }
    }

    private init(string: String, url: URL, user: String?, password: String?) {
        (self.string, self.url, self.user, self.password) = (string, url, user, password)
    }

    /// The full parse, for any text.
    init(parsing text: String) throws(Problem) {
        let trimmed = text.trimmingWhitespace()
        guard var components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased() else {
            throw .unparsable
        }
        guard URLText.isFetched(scheme: scheme) else { throw .scheme(scheme) }
        guard let host = components.host, !host.isEmpty else { throw .noHost }
        let user = components.user?.percentDecoded() ?? components.user
        let password = components.password?.percentDecoded() ?? components.password
        components.user = nil
        components.password = nil
        components.scheme = scheme
        guard let string = components.string, let url = URL(string: string) else { throw .unparsable }
        self.init(string: string, url: url, user: user, password: user == nil ? nil : (password ?? ""))
    }

    /// Whether `text` is such a URL (a feed may name anything as an enclosure: `file:///etc/passwd`, `javascript:`).
    package static func isValid(_ text: String?) -> Bool {
        guard let text else { return false }
        return isPlain(text) || (try? HTTPURL(text)) != nil
    }

    /// Whether `text`, a valid URL (``isValid(_:)``), is https rather than plain http: what `require_https` asks.
    package static func isHTTPS(_ text: String) -> Bool { URLText.isHTTPS(text) }

    /// Whether two URLs name one host (case aside); `false` when either names none.
    package static func sameHost(_ left: String, _ right: String) -> Bool {
        guard let host = host(of: left) else { return false }
        return host == self.host(of: right)
    }

    /// A URL's host, lower-cased; `nil` when it names none.
    static func host(of text: String) -> String? { URLText.host(of: text) }

    /// A quick yes for the shape nearly every enclosure has, `http(s)://host[:port][/path][?query][#fragment]` in
    /// plain URL characters, without user information or white space; anything else is decided by the full parse
    /// in ``init(_:)``. The rules ask this of every episode of a podcast, and the parse took 7 µs each.
    static func isPlain(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            func lower(_ byte: UInt8) -> UInt8 { byte | 0x20 }
            var index = 0
            guard bytes.count > 7, lower(bytes[0]) == UInt8(ascii: "h"), lower(bytes[1]) == UInt8(ascii: "t"),
                lower(bytes[2]) == UInt8(ascii: "t"), lower(bytes[3]) == UInt8(ascii: "p")
            else { return false }
            index = 4
            if lower(bytes[index]) == UInt8(ascii: "s") { index += 1 }
            guard index + 3 <= bytes.count, bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
                bytes[index + 2] == UInt8(ascii: "/")
            else { return false }
            index += 3
            // The host: letters, digits, dots and hyphens, then an optional port of digits.
            let hostStart = index
            while index < bytes.count, Self.isHostByte(bytes[index]) { index += 1 }
            guard index > hostStart else { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                index += 1
                let portStart = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > portStart, index - portStart <= 5 else { return false }
            }
            guard
                index == bytes.count || bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?")
                    || bytes[index] == UInt8(ascii: "#")
            else { return false }
            // Path, query and fragment: RFC 3986's characters, escapes well formed, one '#'.
            var sawFragment = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    guard index + 2 < bytes.count, Self.isHex(bytes[index + 1]), Self.isHex(bytes[index + 2]) else {
                        return false
                    }
                    index += 3
                    continue
                }
                if byte == UInt8(ascii: "#") {
                    if sawFragment { return false }
                    sawFragment = true
                } else if !Self.isPathByte(byte) {
                    return false
                }
                index += 1
            }
            return true
        }
    }

    /// Whether a plain URL (``isPlain(_:)``) is already written as the full parse writes it: its scheme lower-cased,
    /// its port without leading zeros (the parse writes `:080` as `:80`).
    private static func isWrittenAsParsed(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.prefix(while: { $0 != UInt8(ascii: ":") }).allSatisfy({ $0 >= UInt8(ascii: "a") }) else {
            return false
        }
        let authority = utf8.drop { $0 != UInt8(ascii: "/") }.dropFirst(2).prefix {
            $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#")
        }
        let port = authority.drop { $0 != UInt8(ascii: ":") }.dropFirst()
        return port.count < 2 || port.first != UInt8(ascii: "0")
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Unreserved characters, sub-delimiters, and `:`, `@`, `/`, `?`.
    private static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
            UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","),
            UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"),
            UInt8(ascii: "?"):
            true
        default: false
        }
    }

    /// The text for a message: the URL as given, its password replaced.
    package static func shown(_ text: String) -> String { redactedURL(text.trimmingWhitespace()) }
}
