/// The web view: one page, its script and its style sheet, compiled into the daemon (no files to install, nothing
/// fetched at run time). The page drives the daemon through `/rpc` and `/events` like any other client.
package struct WebPageRoute: WebRoute {
    private struct Asset {
        var contentType: String
        var bytes: [UInt8]
    }

    private static let assets: [String: Asset] = [
        "/": Asset(contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        "/app.js": Asset(contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js),
        "/app.css": Asset(contentType: "text/css; charset=utf-8", bytes: PackageResources.app_css),
    ]

    /// The page runs only its own script and style sheet; images may come from podcast directories over https
    /// (search results' artwork); nothing may frame it.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    package init() {}

    package func respond(to request: WebRequest) async -> WebResponse? {
        guard let asset = Self.assets[request.rawPath == "/index.html" ? "/" : request.rawPath] else { return nil }
        let headers: [(name: String, value: String)] = [
            ("Content-Type", asset.contentType),
            ("Cache-Control", "no-cache"),
            ("Content-Security-Policy", Self.contentSecurityPolicy),
            ("Referrer-Policy", "no-referrer"),
        ]
        switch request.method {
        case .get, .head:
            // libmicrohttpd leaves the body out of a HEAD answer and keeps its length.
            return WebResponse(status: 200, headers: headers, body: .bytes(asset.bytes))
        case .post, .other:
            return WebResponse(status: 405, headers: [("Allow", "GET, HEAD")])
        }
    }
}
