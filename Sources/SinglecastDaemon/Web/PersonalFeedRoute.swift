import FoundationEssentials

/// `/feeds/<podcast-id>.xml`, `/feeds/all.xml` and `/feeds.opml`: the personal feeds, made afresh from the catalogue
/// and validated by the hash of their bytes, so a podcast app polling an unchanged feed gets 304.
///
/// Requests for the same document at the same time share one rendering (``RequestCoalescer``): podcast apps poll
/// together, and each rendering reads the catalogue, the queue and every listed file. Nothing is kept between
/// renderings, so a download completed or a file deleted shows at the next fetch.
package struct PersonalFeedRoute: WebRoute {
    let subscriptions: Subscriptions
    private let renderings = RequestCoalescer<Document, Rendering>()

    /// Which document, for which address the client used (the links in it start with that address).
    private struct Document: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            case opml
            /// One podcast's feed, or every podcast's (`nil`).
            case feed(Int64?)
        }

        var kind: Kind
        var baseURL: String
    }

    private enum Rendering: Sendable {
        case document([UInt8], EntityTag)
        case notFound
        case failed
    }

    package init(subscriptions: Subscriptions) {
        self.subscriptions = subscriptions
    }

    /// Renderings running now: for tests.
    package var renderingsRunning: Int { renderings.running }

    package func respond(to request: WebRequest) async -> WebResponse? {
        // Other documents under /feeds/ (a feed's QR code) are other routes'.
        guard
            request.rawPath == "/feeds.opml"
                || (request.rawPath.hasPrefix("/feeds/") && request.rawPath.hasSuffix(".xml"))
        else { return nil }
        guard WebAnswers.isGet(request) != nil else { return WebAnswers.methodNotAllowed() }
        let kind: Document.Kind
        if request.rawPath == "/feeds.opml" {
            kind = .opml
        } else {
            guard let segments = WebPath.segments(request.rawPath), segments.count == 2
            else { return WebAnswers.notFound() }
            let name = segments[1].dropLast(4)
            if name == "all" {
                kind = .feed(nil)
            } else if let id = WebPath.id(name) {
                kind = .feed(id)
            } else {
                return WebAnswers.notFound()
            }
        }
        let document = Document(kind: kind, baseURL: request.baseURL)
        switch await renderings.value(for: document, compute: { await render(document) }) {
        case .document(let bytes, let etag):
            let type = kind == .opml ? "text/x-opml; charset=utf-8" : "application/rss+xml; charset=utf-8"
            return Self.answer(bytes, etag: etag, type: type, ifNoneMatch: request.header("If-None-Match"))
        case .notFound:
            return WebAnswers.notFound()
        case .failed:
            return WebAnswers.failed("the feed could not be read")
        }
    }

    private func render(_ document: Document) async -> Rendering {
        let writer = PersonalFeedDocument(baseURL: document.baseURL)
        let bytes: [UInt8]
        switch document.kind {
        case .opml:
            bytes = writer.opml(await subscriptions.personalFeedPodcasts())
        case .feed(let podcast):
            do {
                guard let feed = try await subscriptions.personalFeed(of: podcast) else { return .notFound }
                bytes = writer.rss(feed, podcast: podcast)
            } catch {
                return .failed
            }
        }
        return .document(bytes, EntityTag.hashing(bytes))
    }

    /// 200 with the document, or 304 when the client holds these bytes already.
    static func answer(_ bytes: [UInt8], etag: EntityTag, type: String, ifNoneMatch: String?) -> WebResponse {
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
