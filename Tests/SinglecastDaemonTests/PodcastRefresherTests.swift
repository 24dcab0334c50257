import Foundation
import SinglecastProtocol
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// The refresher over a real catalogue and SQLite store, with a hand-moved clock, a fixed jitter and feeds served
/// from memory (``PodcastHarness``).
@Suite struct PodcastRefresherTests {
    private let hour: Int64 = 3_600_000

    /// A harness whose refreshes come exactly one interval apart, subscribed to its one feed.
    private func subscribed() async throws -> (PodcastHarness, id: Int64, at: Int64) {
        let harness = try await PodcastHarness(enclosures: ["http://cdn.example/e1.mp3"], jitter: { 0.5 })
        let at = harness.clock.now()
        let result = try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(PodcastHarness.feedURL)))
        #expect(fetches(harness) == 1, "subscribing fetches the feed once")
        return (harness, result.podcast.record.id, at)
    }

    private func fetches(_ harness: PodcastHarness) -> Int {
        harness.feeds.fetches.withLock { $0[PodcastHarness.feedURL] ?? 0 }
    }

    private func setClock(_ harness: PodcastHarness, _ milliseconds: Int64) {
        harness.clock.milliseconds.withLock { $0 = milliseconds }
    }

    /// A refresh of many feeds that did not change saves their refresh times together, not one transaction each, and
    /// all of them before it answers. (How many feeds a save gathers depends on how fast they arrive; bench/refresh
    /// measures that against a real server.)
    @Test func unchangedFeedsAreSavedTogetherBeforeTheRefreshAnswers() async throws {
        let urls = (0..<40).map { "https://feeds.example/show-\($0).xml" }
        let harness = try await PodcastHarness(
            enclosures: [],
            stored: { store in
                for url in urls {
                    var podcast = PodcastRecord(feedURL: url, subscribedAt: 1)
                    podcast.succeededAt = 1
                    _ = try await store.insertPodcast(podcast)
                }
            }
        )
        harness.feeds.unchanged.withLock { $0 = Set(urls) }
        await harness.store.recordUses()
        let reports = try await harness.subscriptions.refresh(nil)
        #expect(reports.count == urls.count)
        #expect(reports.allSatisfy { $0.outcome == .notModified })
        let saves = (await harness.store.uses ?? []).filter { $0 == "saving refresh times" }.count
        #expect((1..<urls.count / 2).contains(saves), "\(saves) transactions for \(urls.count) unchanged feeds")
        let now = harness.clock.now()
        let stored = try await harness.store.podcasts()
        #expect(stored.count == urls.count)
        #expect(stored.allSatisfy { $0.refreshedAt == now && $0.succeededAt == now && $0.nextRefreshAt ?? 0 > now })
    }

    @Test func aDuePodcastRefreshesOncePerInterval() async throws {
        let (harness, id, at) = try await subscribed()
        let refresher = harness.subscriptions.refresher
        setClock(harness, at + hour - 1)
        await refresher.refreshDue()
        #expect(fetches(harness) == 1, "refreshed before its time")
        setClock(harness, at + hour)
        await refresher.refreshDue()
        #expect(fetches(harness) == 2)
        await refresher.refreshDue()
        #expect(fetches(harness) == 2, "refreshed twice in one interval")
        let stored = try #require(try await harness.store.podcasts().first { $0.id == id })
        #expect(stored.nextRefreshAt == at + 2 * hour)
    }

    @Test func theRunningServiceRefreshesWhenWokenAfterTheTimeHasCome() async throws {
        let (harness, _, at) = try await subscribed()
        let refresher = harness.subscriptions.refresher
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await refresher.run() }
            defer { refresher.shutdown() }
            setClock(harness, at + hour)
            refresher.wake()
            #expect(try await eventually { fetches(harness) == 2 })
            try await Task.sleep(for: .milliseconds(50))
            #expect(fetches(harness) == 2, "refreshed again within the interval")
        }
    }

    @Test func aSecondRefreshJoinsTheOneRunning() async throws {
        let (harness, id, _) = try await subscribed()
        harness.feeds.held.withLock { $0 = true }
        async let first = harness.subscriptions.refresh("Show")
        #expect(try await eventually(every: .milliseconds(1)) { fetches(harness) == 2 })
        async let second = harness.subscriptions.refresh("Show")
        #expect(
            try await eventually(every: .milliseconds(1)) { await harness.subscriptions.refresher.waiters(of: id) == 1 }
        )
        harness.feeds.held.withLock { $0 = false }
        let (one, two) = try await (first, second)
        #expect(one == two)
        #expect(one.map(\.id) == [id])
        #expect(one.first?.error == nil)
        #expect(fetches(harness) == 2, "the joined refresh fetched again")
    }

    @Test func aStoppedRefreshAnswersAndStoresNothing() async throws {
        let (harness, id, at) = try await subscribed()
        let before = try await harness.store.podcasts()
        harness.feeds.documents.withLock {
            $0[PodcastHarness.feedURL] = PodcastHarness.feed(["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"])
        }
        setClock(harness, at + 60_000)
        harness.feeds.held.withLock { $0 = true }
        async let refreshed = harness.subscriptions.refresh("Show")
        #expect(try await eventually(every: .milliseconds(1)) { fetches(harness) == 2 })
        await harness.subscriptions.refresher.stopAndWait(id)
        let entry = try #require(try await refreshed.first)
        #expect(entry.outcome == .failed)
        #expect(entry.error == "stopped before it finished")
        harness.feeds.held.withLock { $0 = false }
        #expect(try await harness.store.podcasts() == before, "the stopped refresh changed the podcast")
        #expect(try await harness.episodes().count == 1, "the stopped refresh stored episodes")
    }

    @Test func anUnsubscribeStopsTheRunningRefresh() async throws {
        let (harness, id, _) = try await subscribed()
        harness.feeds.held.withLock { $0 = true }
        async let refreshed = harness.subscriptions.refresh("Show")
        #expect(try await eventually(every: .milliseconds(1)) { fetches(harness) == 2 })
        // Returns while the fetch is still held: the unsubscribe stopped it rather than waiting for the server.
        let gone = try await harness.subscriptions.unsubscribe(UnsubscribeCommand(podcast: "Show"))
        #expect(gone.podcast.record.id == id)
        let entry = try #require(try await refreshed.first)
        #expect(entry.error == "stopped before it finished")
        #expect(try await harness.store.podcasts().isEmpty)
        #expect(try await harness.store.episodes(of: id).isEmpty)
        harness.feeds.held.withLock { $0 = false }
    }

    @Test func aReloadedIntervalSchedulesTheNextRefresh() async throws {
        let (harness, id, at) = try await subscribed()
        var settings = PodcastSettings()
        settings.refreshInterval = .seconds(600)
        await harness.subscriptions.update(settings)
        let refresher = harness.subscriptions.refresher
        // Due as it was scheduled before the reload; its next refresh follows the new interval.
        setClock(harness, at + hour)
        await refresher.refreshDue()
        #expect(fetches(harness) == 2)
        let stored = try #require(try await harness.store.podcasts().first { $0.id == id })
        #expect(stored.nextRefreshAt == at + hour + 600_000)
        setClock(harness, at + hour + 600_000)
        await refresher.refreshDue()
        #expect(fetches(harness) == 3)
    }
}

/// Artwork fetched by the refresher while its podcast is being unsubscribed.
@Suite struct RefresherArtworkTests {
    static let artworkURL = "https://feeds.example/art.gif"

    /// An image finishing at every step of an unsubscribe: whatever the order, no image of the podcast stays.
    @Test(arguments: 0..<12) func anImageFetchedWhileUnsubscribingDoesNotStay(round: Int) async throws {
        let harness = try await PodcastHarness(enclosures: ["http://cdn.example/e1.mp3"])
        let feed = PodcastHarness.feed(["http://cdn.example/e1.mp3"])
            .replacingOccurrences(
                of: "<rss version=\"2.0\">",
                with: "<rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\">"
            )
            .replacingOccurrences(
                of: "<title>Show</title>",
                with: "<title>Show</title><itunes:image href=\"\(Self.artworkURL)\"/>"
            )
        harness.feeds.documents.withLock {
            $0[PodcastHarness.feedURL] = feed
            $0[Self.artworkURL] = "GIF89a\u{1}\u{0}\u{1}\u{0}\u{0}\u{0}\u{0};"
        }
        let id = try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(PodcastHarness.feedURL))).podcast
            .record.id
        #expect(try await harness.store.podcasts().first?.artworkURL == Self.artworkURL)
        harness.feeds.held.withLock { $0 = true }
        let refresher = harness.subscriptions.refresher
        async let fetched: Void = refresher.refreshArtwork(id)
        #expect(
            try await eventually(every: .milliseconds(1)) {
                harness.feeds.fetches.withLock { $0[Self.artworkURL] ?? 0 } == 1
            }
        )
        async let gone = harness.subscriptions.unsubscribe(UnsubscribeCommand(podcast: "Show"))
        try await Task.sleep(for: .microseconds(250 * round))
        harness.feeds.held.withLock { $0 = false }
        _ = try await gone
        await fetched
        let left = (try? FileManager.default.contentsOfDirectory(atPath: harness.home.file("artwork"))) ?? []
        #expect(left.isEmpty, "images of an unsubscribed podcast: \(left)")
    }
}

/// The joining rule alone.
@Suite struct RefreshJoinTests {
    @Test func theFirstCallerRunsAndLaterOnesWaitForItsAnswer() {
        var join = RefreshJoin<String, Int>()
        let first = join.start(1, stop: "one")
        let second = join.start(1, stop: "again")
        #expect((first, second) == (.run, .join))
        let waited = [join.wait(for: 1, 10), join.wait(for: 1, 11), join.wait(for: 2, 20)]
        #expect(waited == [true, true, false], "a waiter for a refresh that does not run is refused")
        let other = join.start(2, stop: "two")
        #expect(other == .run)
        let answered = join.finish(1)
        let again = join.finish(1)
        #expect(answered == [10, 11])
        #expect(again.isEmpty)
        let later = join.start(1, stop: "later")
        #expect(later == .run)
    }

    @Test func aStopIsSignalledOnceToTheOneRunning() {
        var join = RefreshJoin<String, Int>()
        let idle = join.stop(1)
        _ = join.start(1, stop: "one")
        _ = join.start(2, stop: "two")
        let stops = [join.stop(1), join.stop(1)]
        #expect(idle == nil)
        #expect(stops == ["one", nil])
        #expect(join.isRunning(1))
        let all = join.stopAll()
        #expect(all == ["two"])
        _ = join.finish(1)
        _ = join.finish(2)
        #expect(join.isIdle)
    }
}
