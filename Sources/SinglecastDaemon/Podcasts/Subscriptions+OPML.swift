import FoundationEssentials
import SinglecastFeeds
import SinglecastProtocol

/// OPML: subscribing to a list of feeds, and writing the subscriptions as one.
extension Subscriptions {
    package func importOPML(_ params: ImportParams) async throws -> ImportResult {
        let outlines: [OPMLOutline]
        do {
            outlines = try OPML.parse(Data(params.opml.utf8))
        } catch {
            let detail = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
            throw PodcastError.invalid("the OPML document cannot be read: \(detail)", parameter: "opml")
        }
        // Four feeds at a time: a long list should not take one feed's time per entry.
        var results = [ImportResult.Entry?](repeating: nil, count: outlines.count)
        await withTaskGroup(of: (Int, ImportResult.Entry).self) { group in
            var next = 0
            func addNext() {
                guard next < outlines.count else { return }
                let (index, outline) = (next, outlines[next])
                next += 1
                group.addTask { (index, await self.importOne(outline)) }
            }
            for _ in 0..<4 { addNext() }
            for await (index, entry) in group {
                results[index] = entry
                addNext()
            }
        }
        return ImportResult(feeds: results.compactMap { $0 })
    }

    private func importOne(_ outline: OPMLOutline) async -> ImportResult.Entry {
        // The answer names the feed without credentials an OPML file may carry (`https://user:pass@host/…`); the
        // subscription keeps them apart from the URL, as subscribe does.
        let shown = (try? HTTPURL(outline.feedURL).string) ?? HTTPURL.shown(outline.feedURL)
        do {
            let result = try await subscribe(SubscribeParams(url: outline.feedURL))
            return ImportResult.Entry(
                url: shown,
                title: outline.title ?? result.podcast.title,
                outcome: result.existing ? "already" : "subscribed",
                podcastID: result.podcast.id,
                error: nil
            )
        } catch {
            return ImportResult.Entry(
                url: shown,
                title: outline.title,
                outcome: "failed",
                podcastID: nil,
                error: Self.message(of: error)
            )
        }
    }

    /// A failed entry's error: the refusal's own message. The JSON-RPC error (code, reason, decoration) is the
    /// router's business, for a whole request; an entry of an import is not one.
    private static func message(of error: any Error) -> String {
        switch error {
        case let error as PodcastError: error.message
        case let error as DownloadQueueError: error.message
        default: String(describing: error)
        }
    }

    package func exportOPML() -> ExportResult {
        let outlines = podcasts.values.sorted { $0.id < $1.id }.map {
            OPMLOutline(title: $0.title.isEmpty ? nil : $0.title, feedURL: $0.feedURL, htmlURL: $0.link)
        }
        let document = OPML.document(title: "singlecast subscriptions", outlines: outlines, created: .now)
        return ExportResult(opml: String(decoding: document, as: UTF8.self), count: outlines.count)
    }
}
