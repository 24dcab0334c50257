import Foundation
import SinglecastStore
import Testing

/// ``Store/syncCommitted()``: what an OPML import and a client's refresh rely on before they answer.
@Suite("Store durability")
struct StoreDurabilityTests {
    /// The database file alone, as a power cut leaves it when the WAL was never synced: a copy opened without its WAL.
    private func podcastsInDatabaseFile(_ directory: String) async throws -> [PodcastRecord] {
        let copy = directory + "/copy-\(UUID().uuidString).db"
        try Data(contentsOf: URL(fileURLWithPath: directory + "/s.db")).write(to: URL(fileURLWithPath: copy))
        let store = try Store(path: copy)
        let podcasts = try await store.podcasts()
        try await store.close()
        return podcasts
    }

    @Test("syncCommitted puts commits that skipped their fsync into the synced database file")
    func syncCommittedCheckpoints() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1),
                durability: .processCrash
            )
            let ids = try await store.applyRefresh(podcast, durability: .processCrash) { apply in
                try apply([EpisodeRecord(podcastID: podcast.id, identity: "e1", title: "One", firstSeenAt: 1)])
            }
            #expect(ids.count == 1)
            // Only in the WAL so far, which nothing synced.
            #expect(try await podcastsInDatabaseFile(directory).isEmpty)

            try await store.syncCommitted()
            #expect(try await podcastsInDatabaseFile(directory).map(\.feedURL) == [podcast.feedURL])
            // Nothing left to copy: a second sync has nothing to do and succeeds.
            try await store.syncCommitted()
            try await store.close()
        }
    }
}
