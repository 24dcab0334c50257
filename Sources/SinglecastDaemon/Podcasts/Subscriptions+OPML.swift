import FoundationEssentials
import SinglecastFeeds

/// OPML: subscribing to a list of feeds, and writing the subscriptions as one.
extension Subscriptions {
    /// Subscribes to every feed of an OPML document, eight at a time, and syncs them once before it answers.
    package func importOPML(_ document: String) async throws -> [ImportedFeed] {
        let outlines: [OPMLOutline]
        do {
            outlines = try OPML.parse(Data(document.utf8))
        } catch {
            let detail = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
            throw PodcastError.invalid("the OPML document cannot be read: \(detail)", parameter: "opml")
        }
        // Eight feeds at a time: a long list should not take one feed's time per entry. Eight rather than four kept
        // both cores busy while some of them wait for the store's thread (1,000 feeds: 3.6–5.1 s against 5.1–6.5 s).
        var results = [ImportedFeed?](repeating: nil, count: outlines.count)
        await withTaskGroup(of: (Int, ImportedFeed).self) { group in
            var next = 0
            func addNext() {
                guard next < outlines.count else { return }
                let (index, outline) = (next, outlines[next])
                next += 1
                group.addTask { (index, await self.importOne(outline)) }
            }
            for _ in 0..<8 { addNext() }
            for await (index, entry) in group {
                results[index] = entry
                addNext()
            }
        }
        // Each subscription committed without its fsync (three a feed, most of an import's time, were the store's
        // thread waiting for the disk); one sync makes them all durable before the client is told.
        try await syncCommitted()
        await refresher.trimHeapAfterBatch()
        return results.compactMap { $0 }
    }

    private func importOne(_ outline: OPMLOutline) async -> ImportedFeed {
        // The answer names the feed without credentials an OPML file may carry (`https://user:pass@host/…`); the
        // subscription keeps them apart from the URL, as subscribe does.
        let shown = (try? HTTPURL(outline.feedURL).string) ?? HTTPURL.shown(outline.feedURL)
        do {
            let result = try await subscribe(
                SubscribeCommand(feed: .url(outline.feedURL)),
                durability: .processCrash,
                counted: false
            )
            let id = result.podcast.record.id
            return ImportedFeed(
                url: shown,
                title: outline.title ?? result.podcast.record.title,
                outcome: result.existing ? .already(podcast: id) : .subscribed(podcast: id)
            )
        } catch {
            return ImportedFeed(url: shown, title: outline.title, outcome: .failed(Self.message(of: error)))
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

    package func exportOPML() -> OPMLExport {
        let outlines = podcasts.values.sorted { $0.id < $1.id }.map {
            OPMLOutline(title: $0.title.isEmpty ? nil : $0.title, feedURL: $0.feedURL, htmlURL: $0.link)
        }
        let document = OPML.document(title: "singlecast subscriptions", outlines: outlines, created: .now)
        return OPMLExport(document: String(decoding: document, as: UTF8.self), count: outlines.count)
    }
}
