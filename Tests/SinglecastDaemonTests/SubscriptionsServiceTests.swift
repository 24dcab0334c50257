import Foundation
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastTestServers
import Synchronization
import Testing

@testable import SinglecastDaemon

/// Hands out feed documents from memory, as ``HTTPEngine/fetch(_:)`` would from a server, so the subscriptions' own
/// work (store, queue, rules, races between commands) is tested in milliseconds. The same paths run end to end
/// against nginx in the integration tests (PodcastTests, EpisodeRulesTests).
final class ScriptedFeedFetcher: SmallBodyFetching {
    let documents = Mutex<[String: String]>([:])
    /// How many fetches of each URL began.
    let fetches = Mutex<[String: Int]>([:])
    /// While true, a fetch waits (until its task is cancelled), as one of a slow server would.
    let held = Mutex(false)
    /// URLs answered with 304, as a server answers a conditional GET of a feed that did not change.
    let unchanged = Mutex<Set<String>>([])

    func fetch(_ request: FetchRequest) async throws(TransferError) -> FetchResult {
        fetches.withLock { $0[request.url, default: 0] += 1 }
        while held.withLock({ $0 }) {
            if Task.isCancelled { throw TransferError(code: .cancelled, message: "cancelled while held") }
            try? await Task.sleep(for: .milliseconds(1))
        }
        if unchanged.withLock({ $0.contains(request.url) }) {
            return FetchResult(response: TransferResponse(status: 304, finalURL: request.url), body: Data())
        }
        guard let document = documents.withLock({ $0[request.url] }) else {
            return FetchResult(response: TransferResponse(status: 404, finalURL: request.url), body: Data())
        }
        return FetchResult(response: TransferResponse(status: 200, finalURL: request.url), body: Data(document.utf8))
    }
}

/// A wall clock moved by hand.
final class HandClock: Sendable {
    let milliseconds = Mutex<Int64>(1_800_000_000_000)
    var now: @Sendable () -> Int64 { { self.milliseconds.withLock { $0 } } }
}

/// One daemon's podcast side on a real store and queue in a temporary directory, with scripted feeds and transfers.
struct PodcastHarness {
    let home: TemporaryDirectory
    let store: Store
    let queue: DownloadQueue
    let subscriptions: Subscriptions
    let feeds = ScriptedFeedFetcher()
    let clock = HandClock()
    let engine: ScriptedTransferEngine
    let events: EventBus

    static let feedURL = "https://feeds.example/show.xml"

    /// - Parameter episodes: Each episode's enclosure URL; the first is the newest.
    init(
        enclosures: [String],
        configure: (inout PodcastSettings, inout QueueSettings) -> Void = { _, _ in },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        stored: (Store) async throws -> Void = { _ in }
    ) async throws {
        home = try TemporaryDirectory(prefix: "singlecast-subscriptions")
        store = try Store(path: home.file("singlecast.sqlite3"))
        engine = ScriptedTransferEngine(
            bodies: Dictionary(uniqueKeysWithValues: enclosures.map { ($0, Self.body(for: $0)) })
        )
        let logger = Logger(level: .error)
        events = EventBus(logger: logger)
        var podcastSettings = PodcastSettings()
        var queueSettings = QueueSettings()
        queueSettings.scheduler.maximumConcurrent = 8
        queueSettings.scheduler.maximumPerHost = 8
        configure(&podcastSettings, &queueSettings)
        queue = DownloadQueue(
            store: store,
            engine: engine,
            events: events,
            logger: logger,
            settings: queueSettings,
            defaultDirectory: home.file("episodes"),
            distrustUncheckpointedBytes: false,
            now: clock.now
        )
        try await stored(store)
        try await queue.recover()
        subscriptions = Subscriptions(
            store: store,
            engine: feeds,
            queue: queue,
            events: events,
            logger: logger,
            settings: podcastSettings,
            downloadDirectory: home.file("episodes"),
            artworkDirectory: home.file("artwork"),
            now: clock.now,
            jitter: jitter,
            lookup: { _ in throw PodcastError.invalid("no directory here", parameter: "itunes_id") }
        )
        try await subscriptions.load()
        feeds.documents.withLock { $0[Self.feedURL] = Self.feed(enclosures) }
    }

    /// An ID3v2 header first, so the media check takes it for the audio its name announces.
    static func body(for url: String) -> [UInt8] {
        [0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0] + Array("episode at \(url)\n".utf8)
    }

    /// A feed whose episodes are a day apart, the first the newest.
    static func feed(_ enclosures: [String]) -> String {
        let items = enclosures.enumerated().map { index, url in
            """
            <item><title>Episode \(enclosures.count - index)</title><guid>guid-\(url)</guid>
            <pubDate>\(String(format: "%02d", 28 - index)) Jan 2027 10:00:00 GMT</pubDate>
            <enclosure url="\(url)" length="\(body(for: url).count)"/></item>
            """
        }
        return """
            <?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>
            <link>https://example.com/</link><description>d</description>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """
    }

    /// Runs the queue while `body` runs.
    func whileRunning<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await SinglecastDaemonTests.whileRunning(queue, body)
    }

    /// Waits until `count` downloads are completed.
    func completed(_ count: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if await queue.counts().completed == count { return true }
            try await Task.sleep(for: .milliseconds(2))
        }
        print(await queue.list(state: nil))
        return false
    }

    /// The episodes of the one podcast, newest first.
    func episodes() async throws -> [EpisodeRecord] {
        try await store.episodes(of: try #require(try await store.podcasts().first).id)
    }
}

@Suite struct SubscriptionsServiceTests {
    private let enclosures = ["http://cdn.example/e3.mp3", "http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]

    /// Three downloaded episodes, and a plan made with `keep 1` that deletes the two older files.
    private func staleRetentionPlan(
        _ harness: PodcastHarness
    ) async throws -> (RetentionService.Evaluation, [EpisodeRecord]) {
        _ = try await harness.subscriptions.subscribe(
            SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(3))
        )
        #expect(try await harness.completed(3))
        let episodes = try await harness.episodes()
        #expect(episodes.allSatisfy { $0.downloadID != nil })
        let podcast = try #require(episodes.first).podcastID
        let evaluation = try await harness.subscriptions.retention.evaluate(rules: [podcast: Retention.Rules(keep: 1)])
        #expect(Set(evaluation.plan.deletions.map(\.file.episodeID)) == Set(episodes.dropFirst().map(\.id)))
        return (evaluation, episodes)
    }

    @Test func aPinAnsweredAfterRetentionPlannedSavesTheFile() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            let (plan, episodes) = try await staleRetentionPlan(harness)
            let pinned = episodes[1]
            let file = try #require(await harness.queue.infos([pinned.downloadID!])[pinned.downloadID!]).file
            _ = try await harness.subscriptions.pin(.episodes([pinned.id]), pinned: true)
            await harness.subscriptions.retention.carryOut(plan, titles: [:])
            #expect(FileManager.default.fileExists(atPath: file), "the pinned episode's file was deleted")
            #expect(try await harness.store.episodes(ids: [pinned.id]).first?.downloadID == pinned.downloadID)
            // The episode the plan still holds for went.
            #expect(try await harness.store.episodes(ids: [episodes[2].id]).first?.downloadID == nil)
        }
    }

    @Test func aRedownloadAfterRetentionPlannedKeepsItsNewDownload() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            let (plan, episodes) = try await staleRetentionPlan(harness)
            let episode = episodes[1]
            let again = try await harness.subscriptions.redownload(episodes: [episode.id])
            let newDownload = try #require(again.first).id
            #expect(newDownload != episode.downloadID)
            await harness.subscriptions.retention.carryOut(plan, titles: [:])
            #expect(try await harness.store.episodes(ids: [episode.id]).first?.downloadID == newDownload)
            #expect(try await harness.completed(2))
            let file = try #require(await harness.queue.infos([newDownload])[newDownload]).file
            #expect(FileManager.default.fileExists(atPath: file))
        }
    }

    @Test func theStorageBudgetCountsOnlyFilesThatExist() async throws {
        let size = Int64(PodcastHarness.body(for: enclosures[0]).count)
        let harness = try await PodcastHarness(enclosures: enclosures) { podcasts, _ in
            // Room for the three files, not for a fourth.
            podcasts.maxStorage = size * 3 + size / 2
        }
        try await harness.whileRunning {
            _ = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(3))
            )
            #expect(try await harness.completed(3))
            let episodes = try await harness.episodes()
            // The oldest file deleted by hand, and its episode downloaded again: one old row and one new file.
            let gone = try #require(await harness.queue.infos([episodes[2].downloadID!])[episodes[2].downloadID!])
            #expect(unlink(gone.file) == 0)
            let again = try await harness.subscriptions.enqueue(EpisodeEnqueueCommand(episodes: [episodes[2].id]))
            #expect(again.first?.existing == false)
            #expect(
                try await eventually {
                    await harness.queue.infos([again[0].id]).first?.value.state == .completed
                }
            )
            // A file of the newest episode deleted by hand, which no rule can delete again.
            let deleted = try #require(await harness.queue.infos([episodes[0].downloadID!])[episodes[0].downloadID!])
            #expect(unlink(deleted.file) == 0)
            let evaluation = try await harness.subscriptions.retention.evaluate(rules: [:])
            #expect(evaluation.plan.deletions.isEmpty, "deletions for a budget the disk meets: \(evaluation.plan)")
        }
    }

    @Test func oneRefusedEnclosureIsSkippedAndTheOthersAreQueued() async throws {
        let https = "https://cdn.example/e2.mp3"
        let plain = "http://cdn.example/e1.mp3"
        let harness = try await PodcastHarness(enclosures: [https, plain]) { podcasts, queue in
            podcasts.transfer.requireHTTPS = true
            queue.transfer.requireHTTPS = true
        }
        try await harness.whileRunning {
            let result = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(2))
            )
            #expect(result.queued.count == 1)
            #expect(try await harness.completed(1))
            let episodes = try await harness.episodes()
            #expect(episodes.first { $0.enclosureURL == https }?.downloadID != nil)
            #expect(episodes.first { $0.enclosureURL == plain }?.downloadID == nil)
            let shown = try await harness.subscriptions.episodes(EpisodeQuery(podcast: "Show"))
            let skipped = shown.episodes.first { $0.record.enclosureURL == plain }?.skipped
            #expect(skipped?.contains("plain http") == true, "skipped: \(skipped ?? "nil")")
        }
    }
}

@Suite struct OPMLImportTests {
    /// An entry that fails says why in the domain's words: the JSON-RPC decoration is for whole requests.
    /// A crash (or `kill -9`) after `subscribe` stored the podcast and before it stored the feed leaves a podcast
    /// that never stored one. Its first refresh finishes the subscription: the back catalogue is not new, and
    /// `all-new` queues none of it.
    @Test func aSubscriptionACrashInterruptedIsFinishedWithoutQueueingTheArchive() async throws {
        let enclosures = ["http://cdn.example/e3.mp3", "http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]
        let harness = try await PodcastHarness(
            enclosures: enclosures,
            stored: { store in
                var podcast = PodcastRecord(feedURL: PodcastHarness.feedURL, subscribedAt: 1)
                podcast.autoDownload = EpisodePolicy.Fetch.allNew.stored
                _ = try await store.insertPodcast(podcast)
            }
        )
        let reports = try await harness.subscriptions.refresh(nil)
        #expect(reports.map(\.outcome) == [.updated])
        #expect(reports.first?.queued == [], "the back catalogue was queued as new")
        let episodes = try await harness.episodes()
        #expect(episodes.count == 3)
        #expect(episodes.allSatisfy { !$0.isNew })
        #expect(await harness.queue.counts().queued == 0)
        // Finished: what appears from now on is new, and all-new takes it.
        harness.feeds.documents.withLock {
            $0[PodcastHarness.feedURL] = PodcastHarness.feed(["http://cdn.example/e4.mp3"] + enclosures)
        }
        let next = try await harness.subscriptions.refresh(nil)
        #expect(next.first?.newEpisodes == 1 && next.first?.queued.count == 1)
    }

    /// A new subscription's feed is fetched before its podcast is stored, so the store has no size to give or keep
    /// for it: asking anyway was two trips to the store's thread for each feed of an OPML import. The size it learnt
    /// reaches the store with the first refresh.
    @Test func aNewSubscriptionAsksTheStoreNothingOfItsFeedsSize() async throws {
        let enclosures = ["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]
        let harness = try await PodcastHarness(enclosures: enclosures)
        await harness.store.recordUses()
        _ = try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(PodcastHarness.feedURL)))
        let uses = await harness.store.uses ?? []
        #expect(uses.contains("subscribing"))
        #expect(!uses.contains("reading a feed's size"))
        #expect(!uses.contains("recording a feed's size"))
        #expect(try await harness.store.feedDocumentSize(of: PodcastHarness.feedURL) == nil)

        _ = try await harness.subscriptions.refresh(nil)
        let size = PodcastHarness.feed(enclosures).utf8.count
        #expect(try await harness.store.feedDocumentSize(of: PodcastHarness.feedURL) == Int64(size))
    }

    /// The README's first flow: rules given with `subscribe` are in force before its first download, and
    /// subscribing again with a policy queues what the policy asks for, as `set` does.
    @Test func subscribeTakesRulesAtOnceAndSubscribingAgainQueuesTheNewPolicy() async throws {
        let enclosures = ["http://cdn.example/e3.mp3", "http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]
        let harness = try await PodcastHarness(enclosures: enclosures)
        let first = try await harness.subscriptions.subscribe(
            SubscribeCommand(
                feed: .url(PodcastHarness.feedURL),
                autoDownload: .latest(1),
                rules: ["title_exclude": "Episode 3"]
            )
        )
        let queued = await harness.queue.infos(first.queued)
        #expect(queued.values.map(\.url) == ["http://cdn.example/e2.mp3"], "the excluded newest was downloaded")
        let again = try await harness.subscriptions.subscribe(
            SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(2))
        )
        #expect(again.existing)
        #expect(await harness.queue.infos(again.queued).values.map(\.url) == ["http://cdn.example/e1.mp3"])
        #expect(again.podcast.autoDownload == .latest(2))
        let refused = await #expect(throws: PodcastError.self) {
            try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url("https://feeds.example/other.xml"), rules: ["no_such_rule": "1"])
            )
        }
        #expect(refused?.message.contains("no rule 'no_such_rule'") == true)
        #expect(harness.feeds.fetches.withLock { $0["https://feeds.example/other.xml"] } == nil, "fetched anyway")
    }

    /// An import answers with each feed's name and outcome, so a new podcast's episodes are counted only for a
    /// watcher of the `subscribed` event, whose podcast carries its counts as `subscribe`'s answer does.
    @Test func anImportCountsANewPodcastsEpisodesOnlyForAWatcher() async throws {
        let enclosures = ["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>
            <outline type="rss" text="Show" xmlUrl="\(PodcastHarness.feedURL)"/>
            </body></opml>
            """
        let unwatched = try await PodcastHarness(enclosures: enclosures)
        await unwatched.store.recordUses()
        #expect(ImportResult(try await unwatched.subscriptions.importOPML(opml)).feeds.map(\.outcome) == ["subscribed"])
        let uses = await unwatched.store.uses ?? []
        #expect(uses.contains("subscribing"))
        #expect(!uses.contains("counting episodes"), "counted for no one: \(uses)")

        struct Line: Decodable {
            struct Params: Decodable {
                struct Podcast: Decodable {
                    let episodes: Int
                    let newEpisodes: Int
                    enum CodingKeys: String, CodingKey {
                        case episodes
                        case newEpisodes = "new_episodes"
                    }
                }
                let podcast: Podcast
            }
            let method: String
            let params: Params
        }
        let watched = try await PodcastHarness(enclosures: enclosures)
        let (id, subscription) = watched.events.subscribe()
        watched.events.setTopics([.podcasts], for: id)
        defer { watched.events.remove(id) }
        _ = try await watched.subscriptions.importOPML(opml)
        var iterator = subscription.makeAsyncIterator()
        let line = try JSONDecoder().decode(Line.self, from: try #require(await iterator.next()))
        #expect(line.method == "podcast.subscribed")
        #expect(line.params.podcast.episodes == 2)
        #expect(line.params.podcast.newEpisodes == 0)

        let answered = try await PodcastHarness(enclosures: enclosures)
        let result = try await answered.subscriptions.subscribe(SubscribeCommand(feed: .url(PodcastHarness.feedURL)))
        #expect(result.podcast.counts == EpisodeCounts(total: 2, new: 0), "subscribe answers with the counts")
    }

    @Test func aFailedEntrySaysWhyWithoutTheWiresDecoration() async throws {
        let harness = try await PodcastHarness(enclosures: [])
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>
            <outline type="rss" text="Show" xmlUrl="\(PodcastHarness.feedURL)"/>
            <outline type="rss" text="Other" xmlUrl="ftp://feeds.example/other.xml"/>
            </body></opml>
            """
        let result = ImportResult(try await harness.subscriptions.importOPML(opml))
        #expect(result.feeds.map(\.outcome) == ["subscribed", "failed"])
        #expect(result.feeds.last?.error == "'ftp://feeds.example/other.xml' is not an http or https feed URL")
    }
}

@Suite struct UnsubscribeRaceTests {
    /// A refresh that queues a new episode while the podcast is unsubscribed with `--delete-files`: whatever the
    /// order, no download is left that no episode owns, and no file of the podcast stays.
    @Test(arguments: 0..<12) func anUnsubscribeRacingARefreshLeavesNoDownloadBehind(round: Int) async throws {
        let older = "http://cdn.example/old.mp3"
        let newer = "http://cdn.example/new-\(round).mp3"
        let harness = try await PodcastHarness(enclosures: [newer, older])
        harness.feeds.documents.withLock { $0[PodcastHarness.feedURL] = PodcastHarness.feed([older]) }
        try await harness.whileRunning {
            _ = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .allNew)
            )
            harness.feeds.documents.withLock { $0[PodcastHarness.feedURL] = PodcastHarness.feed([newer, older]) }
            async let refreshed = harness.subscriptions.refresh(nil)
            // Started a little later each round, so the unsubscribe meets the refresh at every step of it.
            for _ in 0..<round { await Task.yield() }
            let unsubscribed = try await harness.subscriptions.unsubscribe(
                UnsubscribeCommand(podcast: "Show", deleteFiles: true)
            )
            _ = try await refreshed
            _ = unsubscribed
            #expect(try await harness.store.podcasts().isEmpty)
            // A download cancelled while it was finishing leaves the queue when that attempt ends.
            let deadline = ContinuousClock.now + .seconds(5)
            var left = await harness.queue.list(state: nil)
            while !left.isEmpty && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
                left = await harness.queue.list(state: nil)
            }
            #expect(left.isEmpty, "downloads no episode owns: \(left.map { "\($0.url) \($0.state)" })")
        }
    }
}
