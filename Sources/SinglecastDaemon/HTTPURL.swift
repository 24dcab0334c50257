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
        let trimmed = text.trimmingWhitespace()
        guard var components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased() else {
            throw .unparsable
        }
        guard scheme == "http" || scheme == "https" else { throw .scheme(scheme) }
        guard let host = components.host, !host.isEmpty else { throw .noHost }
        let user = components.user?.percentDecoded() ?? components.user
        let password = components.password?.percentDecoded() ?? components.password
        components.user = nil
        components.password = nil
        components.scheme = scheme
        guard let string = components.string, let url = URL(string: string) else { throw .unparsable }
        self.string = string
        self.url = url
        self.user = user
        self.password = user == nil ? nil : (password ?? "")
    }

    /// Whether `text` is such a URL (a feed may name anything as an enclosure: `file:///etc/passwd`, `javascript:`).
    package static func isValid(_ text: String?) -> Bool {
        guard let text else { return false }
        return (try? HTTPURL(text)) != nil
    }

    /// The text for a message: the URL as given, its password replaced.
    package static func shown(_ text: String) -> String { redactedURL(text.trimmingWhitespace()) }
}
