import FoundationEssentials
import SinglecastSupport

/// The URLs of the directory's endpoints, built from validated parts. Pure.
package enum DirectoryQuery {
    /// Without leading and trailing white space, and with every run of white space inside made one space.
    package static func normalizedTerm(_ term: String) -> String {
        term.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
    }

    /// The key a search is cached under: the same words in any case and spacing find the same podcasts.
    package static func searchKey(term: String, country: String, limit: Int) -> String {
        "search|\(normalizedTerm(term).lowercased())|\(country.uppercased())|\(limit)"
    }

    /// `<endpoint>/search?media=podcast&entity=podcast&term=…&limit=N&country=CC`.
    package static func searchURL(endpoint: String, term: String, country: String, limit: Int) -> String {
        "\(endpoint)/search?media=podcast&entity=podcast&term=\(normalizedTerm(term).percentEncodedExceptUnreserved())"
            + "&limit=\(limit)&country=\(country.uppercased())"
    }

    /// `<endpoint>/lookup?id=…&entity=podcast`.
    package static func lookupURL(endpoint: String, id: Int64) -> String {
        "\(endpoint)/lookup?id=\(id)&entity=podcast"
    }

    /// The chart feed's URL.
    ///
    /// An endpoint with `{country}` or `{limit}` is a template, filled in with the lower-case country and the limit
    /// (e.g. the legacy `https://itunes.apple.com/{country}/rss/toppodcasts/limit={limit}/json`); any other
    /// endpoint gets the current feed's path, `/api/v2/<country>/podcasts/top/<limit>/podcasts.json`.
    package static func chartURL(endpoint: String, country: String, limit: Int) -> String {
        let country = country.lowercased()
        if endpoint.contains("{country}") || endpoint.contains("{limit}") {
            return endpoint.replacing("{country}", with: country)
                .replacing("{limit}", with: String(limit))
        }
        return "\(endpoint)/api/v2/\(country)/podcasts/top/\(limit)/podcasts.json"
    }

    /// Whether `text` is an ISO 3166 alpha-2 code's shape: two ASCII letters.
    package static func isCountryCode(_ text: String) -> Bool {
        text.utf8.count == 2 && text.allSatisfy { $0.isASCII && $0.isLetter }
    }
}
