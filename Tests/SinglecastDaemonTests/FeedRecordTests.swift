import Foundation
import SinglecastFeeds
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
}
