import SinglecastDaemon
import SinglecastFeeds
import SinglecastStore
import Testing

/// What a fetch does to a podcast's record: the URL moves, 410 and failures, with no network and no store.
@Suite struct FeedUpdateTests {
    private var podcast: PodcastRecord {
        var podcast = PodcastRecord(feedURL: "https://feeds.example/a.xml", subscribedAt: 0)
        podcast.id = 1
        podcast.title = "Harbour"
        podcast.lastError = "HTTP 503"
        return podcast
    }

    private func feed(title: String = "Harbour Lights", newFeedURL: String? = nil) -> Feed {
        var feed = Feed(title: title)
        feed.description = "Tides"
        feed.newFeedURL = newFeedURL
        return feed
    }

    private func apply(_ fetch: FeedUpdate.Fetch, taken: Set<String> = []) -> FeedUpdate.Change {
        FeedUpdate.apply(fetch, to: podcast, now: 1_000, nextRefreshAt: 5_000) { taken.contains($0) }
    }

    @Test func aNewVersionUpdatesTheChannelAndClearsTheError() {
        let change = apply(.updated(feed(), etag: "\"e2\"", lastModified: nil, movedTo: nil))
        #expect(change.outcome == .updated)
        #expect(change.failure == nil)
        #expect(change.podcast.title == "Harbour Lights")
        #expect(change.podcast.etag == "\"e2\"")
        #expect(change.podcast.lastError == nil)
        #expect(change.podcast.succeededAt == 1_000 && change.podcast.nextRefreshAt == 5_000)
        // A feed without a title keeps the one known.
        #expect(apply(.updated(feed(title: ""), etag: nil, lastModified: nil, movedTo: nil)).podcast.title == "Harbour")
    }

    @Test func aPermanentRedirectOrAnAnnouncedURLMovesThePodcast() {
        let redirected = apply(.updated(feed(), etag: nil, lastModified: nil, movedTo: "https://new.example/a.xml"))
        #expect(redirected.outcome == .moved)
        #expect(redirected.podcast.feedURL == "https://new.example/a.xml")
        #expect(redirected.log.map(\.level) == [.notice])
        let announced = apply(
            .updated(feed(newFeedURL: "https://other.example/feed"), etag: nil, lastModified: nil, movedTo: nil)
        )
        #expect(announced.outcome == .moved)
        #expect(announced.podcast.feedURL == "https://other.example/feed")
        let notModified = apply(.notModified(movedTo: "https://new.example/a.xml"))
        #expect(notModified.outcome == .moved)
        #expect(notModified.podcast.feedURL == "https://new.example/a.xml")
        #expect(apply(.notModified(movedTo: nil)).outcome == .notModified)
    }

    @Test func aMoveToAnotherSubscriptionsURLOrANonHTTPURLIsNotTaken() {
        let taken: Set = ["https://new.example/a.xml", "https://other.example/feed"]
        for fetch: FeedUpdate.Fetch in [
            .updated(feed(), etag: nil, lastModified: nil, movedTo: "https://new.example/a.xml"),
            .updated(feed(newFeedURL: "https://other.example/feed"), etag: nil, lastModified: nil, movedTo: nil),
            .notModified(movedTo: "https://new.example/a.xml"),
        ] {
            let change = apply(fetch, taken: taken)
            #expect(change.podcast.feedURL == "https://feeds.example/a.xml")
            #expect(change.outcome != .moved)
        }
        let hostile = apply(
            .updated(feed(newFeedURL: "file:///etc/passwd"), etag: nil, lastModified: nil, movedTo: nil)
        )
        #expect(hostile.podcast.feedURL == "https://feeds.example/a.xml")
        #expect(hostile.outcome == .updated)
    }

    @Test func credentialsInAnAnnouncedURLAreNotKept() {
        let change = apply(
            .updated(
                feed(newFeedURL: "https://eve:secret@other.example/feed"),
                etag: nil,
                lastModified: nil,
                movedTo: nil
            )
        )
        #expect(change.podcast.feedURL == "https://other.example/feed")
        #expect(!change.log.contains { $0.message.contains("secret") })
    }

    /// A 410 may be a mistake the server mends: the feed is asked again a day later, not retired for good, and any
    /// answer that is not 410 (a new version, or 304) makes it a feed like any other again.
    @Test func aGoneFeedIsAskedAgainADayLaterAndAnyGoodAnswerRevivesIt() {
        let gone = apply(.gone)
        #expect(gone.podcast.nextRefreshAt == Int64(1_000 + 86_400_000))
        for answer: FeedUpdate.Fetch in [
            .notModified(movedTo: nil), .updated(feed(), etag: nil, lastModified: nil, movedTo: nil),
        ] {
            let revived = FeedUpdate.apply(answer, to: gone.podcast, now: 2_000, nextRefreshAt: 6_000) { _ in false }
            #expect(!revived.podcast.gone && revived.podcast.lastError == nil)
            #expect(revived.podcast.nextRefreshAt == 6_000)
        }
    }

    @Test func goneAndFailedAreRecordedNextToTheLastGoodChannel() {
        let gone = apply(.gone)
        #expect(gone.outcome == .gone)
        #expect(gone.podcast.gone)
        #expect(gone.failure == "the feed is gone (HTTP 410); it is checked again once a day")
        let failed = apply(.failed("the server answered HTTP 500"))
        #expect(failed.outcome == .failed)
        #expect(failed.podcast.lastError == "the server answered HTTP 500")
        #expect(failed.podcast.title == "Harbour")
        #expect(failed.podcast.refreshedAt == 1_000 && failed.podcast.succeededAt == nil)
    }
}
