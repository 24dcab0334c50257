import SinglecastSupport

/// `/feeds/<podcast-id>.svg`: the personal feed's URL as a QR code, for a phone's podcast app to scan. The
/// credentials go into the URL only when the page asks for them (`?credentials=1`), because anyone who sees the
/// code can then use them.
package struct FeedQRCodeRoute: WebRoute {
    /// Whether a subscription has this id.
    let podcastExists: @Sendable (Int64) async -> Bool
    /// The listener's Basic credentials, or `nil` when it asks for none.
    let credentials: @Sendable () async -> (user: String, password: String)?

    package init(
        podcastExists: @escaping @Sendable (Int64) async -> Bool,
        credentials: @escaping @Sendable () async -> (user: String, password: String)?
    ) {
        self.podcastExists = podcastExists
        self.credentials = credentials
    }

    package func respond(to request: WebRequest) async -> WebResponse? {
        guard let id = Self.podcastID(in: request.rawPath) else { return nil }
        guard request.method == .get || request.method == .head else {
            return WebResponse(status: 405, headers: [("Allow", "GET, HEAD")])
        }
        guard await podcastExists(id) else { return WebResponse(status: 404) }
        var feedURL = PersonalFeedDocument(baseURL: request.baseURL).feedURL(id)
        if request.query["credentials"] == "1", let secret = await credentials() {
            feedURL = Self.withCredentials(feedURL, user: secret.user, password: secret.password)
        }
        guard let image = QRCodeSVG.render(feedURL) else { return WebResponse(status: 414) }
        return WebResponse(
            status: 200,
            headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "no-store")],
            body: .bytes(image)
        )
    }

    /// The id in `/feeds/<id>.svg`, checked: digits only, within Int64.
    package static func podcastID(in path: String) -> Int64? {
        guard path.hasPrefix("/feeds/"), path.hasSuffix(".svg") else { return nil }
        let digits = path.dropFirst("/feeds/".count).dropLast(".svg".count)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return OutsideNumber.decimal(digits)
    }

    /// `scheme://user:password@host…`, the user information percent-encoded as RFC 3986 asks.
    package static func withCredentials(_ url: String, user: String, password: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let userInfo = "\(user.percentEncodedExceptUnreserved()):\(password.percentEncodedExceptUnreserved())@"
        return String(url[..<schemeEnd.upperBound]) + userInfo + String(url[schemeEnd.upperBound...])
    }
}
