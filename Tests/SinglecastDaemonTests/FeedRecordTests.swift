import Foundation
import SinglecastFeeds
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// A feed episode as the store keeps it: dates and sizes from a stranger's feed pass the checked gate.
@Suite struct FeedRecordTests {
    /// A date whose milliseconds do not fit in an `Int64` trapped the refresh, and the next refresh after
    /// every restart: it is stored as no date.
    @Test(arguments: [1e300, -1e300, Double.infinity, Double.nan, 9.3e15])
    func aPublicationDateBeyondMillisecondsIsNoDate(seconds: Double) {
        var episode = Episode(title: "far")
        episode.published = Date(timeIntervalSince1970: seconds)
        #expect(FeedFetcher.record(of: episode, feedOrder: 0, now: 1).publishedAt == nil)
    }

    @Test func anOrdinaryDateIsKeptInMilliseconds() {
        var episode = Episode(title: "now")
        episode.published = Date(timeIntervalSince1970: 1_594_008_000.5)
        #expect(FeedFetcher.record(of: episode, feedOrder: 0, now: 1).publishedAt == 1_594_008_000_500)
    }

    /// A feed of one batch or less keeps its episodes from the first parse; a longer one reads its document again.
    /// Either way the store is handed the same records, in feed order, at most a batch at a time.
    @Test(arguments: [0, 3, Store.refreshBatchSize, Store.refreshBatchSize + 1, 2 * Store.refreshBatchSize + 7])
    func aParsedFeedHandsEveryEpisodeOnce(items: Int) throws {
        let body = (0..<items).map { "<item><title>E \($0)</title><guid>g\($0)</guid></item>" }.joined()
        // The first item again: kept once, as the parser keeps it (the only item of a feed of none).
        let document = Data("<rss><channel><title>T</title>\(body)<item><guid>g0</guid></item></channel></rss>".utf8)
        let url = "https://feeds.example.com/f"
        let expected = try FeedParser.parse(document, url: url).episodes.enumerated().map { order, episode in
            var record = FeedFetcher.record(of: episode, feedOrder: order, now: 5)
            record.podcastID = 9
            record.isNew = true
            return record
        }
        #expect(expected.count == max(items, 1))

        let parsed = try FeedFetcher.ParsedFeed(document, url: url)
        var batches: [[EpisodeRecord]] = []
        try parsed.episodes(of: 9, markNew: true, now: 5) { batches.append($0) }
        #expect(batches.joined().map { $0 } == expected)
        #expect(batches.allSatisfy { $0.count <= Store.refreshBatchSize })
        #expect(!parsed.offeredSidecars)
    }

    /// Only a feed whose stored episodes offer chapters or a transcript asks for a sidecar take-up, however many
    /// batches it came in, and wherever the offering episode stands.
    @Test(arguments: [(1, 0), (Store.refreshBatchSize + 1, Store.refreshBatchSize)])
    func aParsedFeedSaysWhetherAnEpisodeOfferedSidecars(items: Int, offering: Int) throws {
        let body = (0..<items).map { index in
            let transcript =
                index == offering
                ? "<podcast:transcript url=\"https://feeds.example.com/t\(index).vtt\" type=\"text/vtt\"/>" : ""
            return "<item><title>E \(index)</title><guid>g\(index)</guid>\(transcript)</item>"
        }.joined()
        let document = Data(
            ("<rss xmlns:podcast=\"https://podcastindex.org/namespace/1.0\"><channel><title>T</title>\(body)"
                + "</channel></rss>").utf8
        )
        let parsed = try FeedFetcher.ParsedFeed(document, url: "https://feeds.example.com/f")
        #expect(!parsed.offeredSidecars, "nothing is stored yet")
        try parsed.episodes(of: 9, markNew: false, now: 5) { _ in }
        #expect(parsed.offeredSidecars)
    }
}
