import FoundationEssentials

/// `/feeds/<podcast-id>.xml`, `/feeds/all.xml` and `/feeds.opml`: the personal feeds, made afresh from the catalogue
/// at each request and validated by the hash of their bytes, so a podcast app polling an unchanged feed gets 304.
package struct PersonalFeedRoute: WebRoute {
    let subscriptions: Subscriptions

    package init(subscriptions: Subscriptions) {
        self.subscriptions = subscriptions
    }

    package func respond(to request: WebRequest) async -> WebResponse? {
        // Other documents under /feeds/ (a feed's QR code) are other routes'.
        guard
            request.rawPath == "/feeds.opml"
                || (request.rawPath.hasPrefix("/feeds/") && request.rawPath.hasSuffix(".xml"))
        else { return nil }
        guard WebAnswers.isGet(request) != nil else { return WebAnswers.methodNotAllowed() }
        let document = PersonalFeedDocument(baseURL: request.baseURL)
        if request.rawPath == "/feeds.opml" {
            let bytes = document.opml(await subscriptions.personalFeedPodcasts())
            return Self.answer(bytes, type: "text/x-opml; charset=utf-8", ifNoneMatch: request.header("If-None-Match"))
        }
        guard let segments = WebPath.segments(request.rawPath), segments.count == 2
        else { return WebAnswers.notFound() }
        let name = segments[1].dropLast(4)
        let podcast: Int64?
        if name == "all" {
            podcast = nil
        } else if let id = WebPath.id(name) {
            podcast = id
        } else {
            return WebAnswers.notFound()
        }
        let feed: PersonalFeed
        do {
            guard let found = try await subscriptions.personalFeed(of: podcast) else { return WebAnswers.notFound() }
            feed = found
        } catch {
            return WebAnswers.failed("the feed could not be read")
        }
        return Self.answer(
            document.rss(feed, podcast: podcast),
            type: "application/rss+xml; charset=utf-8",
            ifNoneMatch: request.header("If-None-Match")
        )
    }

    /// 200 with the document, or 304 when the client holds these bytes already.
    static func answer(_ bytes: [UInt8], type: String, ifNoneMatch: String?) -> WebResponse {
        let etag = EntityTag.hashing(bytes)
        let headers = [("ETag", etag.header), ("Cache-Control", "no-cache")]
        if let ifNoneMatch, EntityTag.noneMatch(ifNoneMatch, current: etag) {
            return WebResponse(status: 304, headers: headers)
        }
        return WebResponse(
            status: 200,
            headers: [("Content-Type", type)] + headers,
            body: .bytes(bytes)
        )
    }
}
