import Foundation
import SinglecastStore
import Testing

/// What a refresh that found feeds unchanged stores of their podcasts.
@Suite struct RefreshTimesStoreTests {
    @Test func onlyTheRefreshTimesAndStateAreWritten() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            var (first, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a.xml", subscribedAt: 1)
            )
            first.title = "Stored title"
            first.lastError = "the server answered HTTP 500"
            first.gone = true
            try await store.savePodcast(first)
            var (second, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/b.xml", subscribedAt: 2)
            )

            first.refreshedAt = 1_000
            first.succeededAt = 1_000
            first.nextRefreshAt = 4_600
            first.lastError = nil
            first.gone = false
            first.title = "Changed in memory only"
            second.refreshedAt = 2_000
            second.succeededAt = 2_000
            second.nextRefreshAt = 5_600
            try await store.saveRefreshTimes([first, second], durability: .processCrash)

            let stored = Dictionary(uniqueKeysWithValues: try await store.podcasts().map { ($0.id, $0) })
            let a = try #require(stored[first.id])
            #expect(a.refreshedAt == 1_000)
            #expect(a.succeededAt == 1_000)
            #expect(a.nextRefreshAt == 4_600)
            #expect(a.lastError == nil)
            #expect(a.gone == false)
            #expect(a.title == "Stored title", "a field the refresh did not change stays as saved")
            let b = try #require(stored[second.id])
            #expect(b.refreshedAt == 2_000 && b.succeededAt == 2_000 && b.nextRefreshAt == 5_600)
        }
    }
}
