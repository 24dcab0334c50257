import Foundation
import SinglecastStore
import Testing

/// The size of each feed's last document, kept so that a restart does not forget what a big feed costs to parse.
@Suite struct FeedSizeStoreTests {
    @Test func aFeedsSizeIsKeptWithItsPodcastAndSavingThePodcastLeavesIt() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let url = "https://feeds.example.com/big.xml"
            // A subscription's feed is fetched before its podcast is stored: nothing to keep it with yet.
            #expect(try await store.setFeedDocumentSize(40 << 20, of: url) == false)
            #expect(try await store.feedDocumentSize(of: url) == nil)

            var (podcast, _) = try await store.insertPodcast(PodcastRecord(feedURL: url, subscribedAt: 1))
            #expect(try await store.feedDocumentSize(of: url) == nil)
            #expect(try await store.setFeedDocumentSize(40 << 20, of: url))
            #expect(try await store.feedDocumentSize(of: url) == 40 << 20)

            // A podcast read before the fetch and saved after it does not put back an older size.
            podcast.title = "Renamed"
            try await store.savePodcast(podcast)
            #expect(try await store.feedDocumentSize(of: url) == 40 << 20)

            // Reopened, as after a restart.
            try await store.close()
            let reopened = try Store(path: directory + "/s.db")
            #expect(try await reopened.feedDocumentSize(of: url) == 40 << 20)
            #expect(try await reopened.feedDocumentSize(of: "https://feeds.example.com/other.xml") == nil)
        }
    }
}
