import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport
import Synchronization

/// Fetches a podcast's feed (conditionally when asked) under the overall deadline and the fetch limits, and parses
/// it off the caller's actor: what `subscribe` and a refresh learn of a feed before anything is stored. Also the
/// mapping of a feed's episodes to the records the store keeps.
///
/// Made afresh for each use from the current settings, so a reload's limits apply at once.
struct FeedFetcher: Sendable {
    var fetch: @Sendable (FetchRequest) async throws(TransferError) -> FetchResult
    var maxFeedBytes: Int64
    /// The limiter every refresh shares and the budget configured now: a document is parsed only within it.
    var memory: (limiter: FeedMemoryLimiter, budget: Int64)
    /// Where each feed's last document size is kept across restarts.
    var store: Store
    /// How long one feed's fetch may take in all, however steadily its server trickles bytes.
    var deadline: Duration
    var transfer: TransferOptions

    /// A feed that parsed: its channel, and the document, read again for the episodes as they are stored (a
    /// 100,000-item feed's episodes are never all in memory), then let go of.
    struct ParsedFeed: Sendable {
        var feed: Feed
        /// The URL the document came from, which relative links are resolved against.
        var url: String
        /// The document's size in bytes (it stays known once the document is let go of).
        let documentSize: Int
        private let held: Held

        /// Parses a feed for its channel and to know that it parses, before anything is stored. The episodes of a
        /// feed that fits in one batch are kept for ``episodes(of:markNew:now:into:)``; a longer feed's are dropped
        /// batch by batch and read again there.
        init(_ document: Data, url: String, reservation: FeedMemoryLimiter.Reservation? = nil) throws(FeedError) {
            // Most feeds have fewer items than a batch: parsing them twice was a third of an OPML import's CPU
            // (docs/ARCHITECTURE.md, Refreshing many feeds). One batch is bounded, as the parser's batches are.
            var batches = 0
            var first: [Episode] = []
            feed = try FeedParser.parse(document, url: url, batchSize: Store.refreshBatchSize) { batch in
                batches += 1
                first = batches == 1 ? batch : []
            }
            self.url = url
            documentSize = document.count
            held = Held(document, reservation, episodes: batches <= 1 ? first : nil)
        }

        /// The document and its share of the feed memory budget, shared by every copy of the parsed feed: let go of
        /// as soon as the episodes are stored, not when the last copy is (a refresh goes on to queue downloads and
        /// fetch artwork, and the next big feed waits for the budget meanwhile).
        private final class Held: Sendable {
            private let state:
                Mutex<(document: Data, reservation: FeedMemoryLimiter.Reservation?, episodes: [Episode]?)?>
            /// Whether an episode handed to the store offered chapters or a transcript.
            let offeredSidecars = Atomic(false)

            /// - Parameter episodes: Every episode of the document, when the first parse kept them.
            init(_ document: Data, _ reservation: FeedMemoryLimiter.Reservation?, episodes: [Episode]?) {
                state = Mutex((document, reservation, episodes))
            }

            /// The episodes kept from the first parse, else the document to read them from; asking once it is let go
            /// of is a mistake of the caller's.
            func toRead() -> (document: Data, episodes: [Episode]?) {
                guard let held = state.withLock({ $0.map { ($0.document, $0.episodes) } }) else {
                    preconditionFailure("a parsed feed's episodes were read twice; the document was let go of")
                }
                return held
            }

            /// Drops the document and gives its reservation back (the reservation last, so the budget is given back
            /// only once the document's memory is).
            func release() {
                guard
                    var held = state.withLock({ state in
                        defer { state = nil }
                        return state
                    })
                else { return }
                held.document = Data()
                // The reservation outlives the document's bytes, however the optimizer orders the releases.
                withExtendedLifetime(held) {}
            }
        }

        /// What holding and parsing a document of `bytes` costs at its peak, as reserved from the budget.
        ///
        /// Five times its size: the daemon (release build) peaked 4.7 times a document's size above its start when
        /// subscribing to a feed of nothing but `<item><guid>N</guid></item>`, the most items, so the most memory, per
        /// byte (see docs/ARCHITECTURE.md, Subscriptions).
        static func estimatedCost(ofDocument bytes: Int) -> Int64 {
            Int64(bytes).saturatingMultiply(peakFactor)
        }

        static let peakFactor: Int64 = 5

        /// Reads the episodes again and hands them to `store` as records of podcast `id`, one parser batch at a time,
        /// then lets go of the document and gives its reservation back: call it once.
        ///
        /// - Throws: The first error of `store` (the rest of the document is then read but not stored), or the
        ///   parser's, which a document that parsed once does not raise.
        func episodes(
            of id: Int64,
            markNew: Bool,
            now: Int64,
            into store: ([EpisodeRecord]) throws(SQLiteError) -> Void
        ) throws {
            var feedOrder = 0
            var failure: SQLiteError?
            // The document's last use: it and its reservation go as soon as it is read.
            defer { held.release() }
            func hand(_ batch: [Episode]) {
                guard failure == nil else { return }
                let records = batch.map { episode in
                    var record = FeedFetcher.record(of: episode, feedOrder: feedOrder, now: now)
                    record.podcastID = id
                    record.isNew = markNew
                    feedOrder += 1
                    return record
                }
                if records.contains(where: { !$0.sidecarOffers.isEmpty }) {
                    held.offeredSidecars.store(true, ordering: .relaxed)
                }
                do throws(SQLiteError) { try store(records) } catch { failure = error }
            }
            // The document is only read inside this statement, not held by a local past the release.
            if let kept = held.toRead().episodes {
                hand(kept)
            } else {
                _ = try FeedParser.parse(
                    held.toRead().document,
                    url: url,
                    batchSize: Store.refreshBatchSize,
                    episodes: hand
                )
            }
            if let failure { throw failure }
        }

        /// Whether an episode ``episodes(of:markNew:now:into:)`` stored offered chapters or a transcript: only then can
        /// the store have noted offers to take up.
        var offeredSidecars: Bool { held.offeredSidecars.load(ordering: .relaxed) }
    }

    /// What a fetch of a feed came to.
    enum Fetched: Sendable {
        case updated(ParsedFeed, TransferResponse, movedTo: String?)
        case notModified(TransferResponse, movedTo: String?)
        case gone
        case failed(FeedProblem, message: String)
        /// A web page, not a feed, that names feeds in its `<link rel="alternate">` tags (the first RSS one first).
        case page(feeds: [String])

        /// The fetch as ``FeedUpdate`` takes it.
        var update: FeedUpdate.Fetch {
            switch self {
            case .updated(let parsed, let response, let movedTo):
                .updated(parsed.feed, etag: response.etag, lastModified: response.lastModified, movedTo: movedTo)
            case .notModified(_, let movedTo): .notModified(movedTo: movedTo)
            case .gone: .gone
            case .failed(_, let message): .failed(message)
            case .page(let feeds):
                .failed(
                    "the feed URL answers a web page, not a feed; the page names the feed \(feeds.first ?? "")"
                        + " ('singlecastctl set PODCAST --feed-url URL' moves the podcast there)"
                )
            }
        }
    }

    /// Fetches and parses `podcast`'s feed; with `conditional`, with the validators of its last version.
    ///
    /// `@concurrent`: parsing a large feed takes a while, and runs on the global executor, not the caller's actor.
    @concurrent
    func fetch(_ podcast: PodcastRecord, conditional: Bool) async -> Fetched {
        let request = FetchRequest(
            url: podcast.feedURL,
            headers: ["Accept: application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5"],
            basicAuthUser: podcast.authUser,
            basicAuthPassword: podcast.authPassword,
            ifNoneMatch: conditional ? podcast.etag : nil,
            ifModifiedSince: conditional ? podcast.lastModified : nil,
            maxBytes: maxFeedBytes,
            options: transfer
        )
        // A feed seen before (since the start, or kept in the store from before it) reserves what its last document
        // cost before fetching, so big feeds refreshed together take turns before their documents are even fetched;
        // a new one reserves once its size is known, holding its document while it waits, and a grown one grows its
        // reservation.
        var reservation: FeedMemoryLimiter.Reservation?
        // A subscription's feed is fetched before its podcast is stored: the store has no size to give or keep yet.
        let stored = podcast.id != 0
        let known = await lastDocumentSize(of: podcast.feedURL, inStore: stored)
        if let size = known {
            reservation = await memory.limiter.reserve(
                ParsedFeed.estimatedCost(ofDocument: size),
                within: memory.budget
            )
            if reservation == nil { return Self.stoppedWhileWaiting }
        }
        let result: FetchResult
        // The deadline rides with the request (``FetchDeadline``): no timer task per feed. Past it, the fetch fails
        // with "<url> did not finish within N s".
        var limited = request
        limited.deadline = FetchDeadline(deadline)
        do throws(TransferError) {
            result = try await fetch(limited)
        } catch {
            return .failed(.unreachable, message: error.message)
        }
        let status = result.response.status
        switch status {
        case 304:
            return .notModified(result.response, movedTo: result.permanentRedirect)
        case 410:
            return .gone
        case 200...299:
            // Within the memory budget from here until the stored refresh lets go of the document.
            if result.body.count != known {
                await remember(result.body.count, of: podcast.feedURL, inStore: stored)
            }
            let cost = ParsedFeed.estimatedCost(ofDocument: result.body.count)
            if let held = reservation {
                // Grown (by an item, usually): it grows in place or waits first in line; giving it back to ask
                // again let every feed waiting behind it fetch its document meanwhile.
                if held.bytes < cost, await !memory.limiter.grow(held, to: cost, within: memory.budget) {
                    return Self.stoppedWhileWaiting
                }
            } else {
                reservation = await memory.limiter.reserve(cost, within: memory.budget)
                if reservation == nil { return Self.stoppedWhileWaiting }
            }
            do throws(FeedError) {
                let parsed = try ParsedFeed(result.body, url: result.response.finalURL, reservation: reservation)
                return .updated(parsed, result.response, movedTo: result.permanentRedirect)
            } catch {
                // A web page may name its feed (autodiscovery), which `subscribe` then follows.
                let page = FeedLinks.scan(result.body, pageURL: result.response.finalURL)
                if !page.feeds.isEmpty { return .page(feeds: page.feeds.map(\.url)) }
                if page.isHTML {
                    return .failed(
                        .invalid,
                        message: "\(redactedURL(result.response.finalURL)) is a web page that names no feed (it has no "
                            + "<link rel=\"alternate\" type=\"application/rss+xml\">); give the feed's own URL"
                    )
                }
                return .failed(.invalid, message: error.message)
            }
        default:
            return .failed(
                .unreachable,
                message: "the server answered HTTP \(status) for \(redactedURL(result.response.finalURL))"
            )
        }
    }

    /// The size of the last document fetched from `url`: known since the last start, or kept in the store from
    /// before it (then known from now on). Without it, the first refresh after a restart of every big feed would
    /// fetch at once and hold all their documents while they waited their turn.
    ///
    /// - Parameter inStore: Whether the podcast is stored; without, the store is not asked (a new subscription).
    private func lastDocumentSize(of url: String, inStore: Bool) async -> Int? {
        if let known = memory.limiter.lastDocumentSize(of: url) {
            // A subscription's size could not be stored before its podcast was: it is now.
            if !known.stored && inStore { await remember(known.bytes, of: url, inStore: true) }
            return known.bytes
        }
        guard inStore, let stored = try? await store.feedDocumentSize(of: url), let size = Int(exactly: stored) else {
            return nil
        }
        memory.limiter.remember(documentSize: size, of: url, stored: true)
        return size
    }

    /// Records the size of a document fetched from `url`, in memory and in the store when a podcast has that feed
    /// (`inStore`: stored already; a new subscription's size is stored by its first refresh).
    private func remember(_ size: Int, of url: String, inStore: Bool) async {
        let stored = inStore ? ((try? await store.setFeedDocumentSize(Int64(size), of: url)) ?? false) : false
        memory.limiter.remember(documentSize: size, of: url, stored: stored)
    }

    private static let stoppedWhileWaiting = Fetched.failed(
        .unreachable,
        message: "the refresh was stopped while it waited for memory to parse its feed"
    )

    /// An episode as the store keeps it; the podcast and the new flag are filled in when it is stored.
    static func record(of episode: Episode, feedOrder: Int, now: Int64) -> EpisodeRecord {
        var record = EpisodeRecord(podcastID: 0, identity: episode.identity, title: episode.title, firstSeenAt: now)
        record.guid = episode.guid
        record.description = episode.description
        record.link = episode.link
        // A date whose milliseconds do not fit is no date (it trapped the refresh, and every one after a restart).
        record.publishedAt = episode.published.flatMap {
            OutsideNumber.milliseconds(fromSeconds: $0.timeIntervalSince1970)
        }
        record.durationSeconds = episode.durationSeconds
        record.enclosureURL = episode.enclosure?.url
        record.enclosureType = episode.enclosure?.type
        record.enclosureLength = episode.enclosure?.length.map { Int64($0) }
        record.season = episode.season
        record.episodeNumber = episode.episodeNumber
        record.chaptersURL = episode.chaptersURL
        record.transcriptURL = episode.transcripts.first?.url
        record.sidecarOffers = SidecarPlan.offers(of: episode)
        record.integrity = episode.integrity.map { "\($0.type) \($0.value)" }
        record.episodeType = episode.episodeType
        record.feedOrder = feedOrder
        return record
    }
}
