import Foundation
import SinglecastStore
import Synchronization
import Testing

/// Retention's deletion, checked against its plan and done in one transaction.
@Suite("Retiring episode files")
struct RetireEpisodeFilesTests {
    /// A podcast with three episodes, each linked to a completed download; the third shares the second's download.
    private func setUp(_ store: Store) async throws -> (episodes: [EpisodeRecord], downloads: [Int64]) {
        let (podcast, _) = try await store.insertPodcast(
            PodcastRecord(feedURL: "https://feeds.example/a", subscribedAt: 1)
        )
        _ = try await store.applyRefresh(podcast) { apply in
            try apply(
                (1...3).map { index in
                    var record = EpisodeRecord(
                        podcastID: podcast.id,
                        identity: "e\(index)",
                        title: "e\(index)",
                        firstSeenAt: 1
                    )
                    record.enclosureURL = "https://cdn.example/e\(index).mp3"
                    return record
                }
            )
        }
        let outcomes = try await store.enqueue(
            (1...2).map {
                DownloadRecord(
                    url: "https://cdn.example/e\($0).mp3",
                    directory: "/d",
                    fileName: "e\($0).mp3",
                    addedAt: 1
                )
            }
        )
        var records = outcomes.map(\.record)
        for index in records.indices { records[index].state = .completed }
        try await store.save(records)
        var episodes = try await store.episodes(of: podcast.id).sorted { $0.identity < $1.identity }
        try await store.setEpisodeDownloads([
            (episodes[0].id, records[0].id), (episodes[1].id, records[1].id), (episodes[2].id, records[1].id),
        ])
        episodes = try await store.episodes(ids: episodes.map(\.id)).sorted { $0.identity < $1.identity }
        return (episodes, records.map(\.id))
    }

    @Test("an unchanged episode's own file goes; a shared file and a changed episode stay")
    func checksBeforeDeleting() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episodes, downloads) = try await setUp(store)
            let planned = episodes.map { Store.PlannedRelease($0, download: $0.downloadID!) }
            // Pinned after the plan was made: it stays.
            _ = try await store.setPinned([episodes[0].id], true)
            let handed = Mutex<[Int64]>([])
            let retired = try await store.retireEpisodeFiles(Array(planned.prefix(2)), at: 5, reason: "keep 1") {
                owned in
                handed.withLock { $0 = owned }
                return ((), [])
            }
            #expect(retired.episodes == [episodes[1].id])
            // The second download is the third episode's too: its file is not disposed of, its row stays.
            #expect(handed.withLock { $0 }.isEmpty)
            #expect(retired.downloads.isEmpty && retired.shared == [downloads[1]])
            let after = try await store.episodes(ids: episodes.map(\.id)).sorted { $0.identity < $1.identity }
            #expect(after.map(\.downloadID) == [downloads[0], nil, downloads[1]])
            #expect(after[1].fileDeletedReason == "keep 1")
            #expect(Set(try await store.downloads().map(\.id)) == Set(downloads))
        }
    }

    @Test("episodes letting go of their last link dispose of the file and delete the row in one step")
    func deletesOwnedDownloads() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episodes, downloads) = try await setUp(store)
            let planned = episodes.map { Store.PlannedRelease($0, download: $0.downloadID!) }
            let retired = try await store.retireEpisodeFiles(planned, at: 5, reason: "max_storage") { ($0, []) }
            #expect(retired.disposed == downloads)
            #expect(retired.downloads == downloads)
            #expect(try await store.downloads().isEmpty)
            #expect(try await store.downloadedEpisodes().isEmpty)
        }
    }

    @Test("a file the disposal refused keeps its download row and its episode's link")
    func keepsARefusedFile() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episodes, downloads) = try await setUp(store)
            let planned = episodes.map { Store.PlannedRelease($0, download: $0.downloadID!) }
            let retired = try await store.retireEpisodeFiles(planned, at: 5, reason: "max_storage") {
                owned in (owned, [downloads[0]])
            }
            #expect(retired.downloads == downloads.filter { $0 != downloads[0] })
            #expect(!retired.episodes.contains(episodes[0].id))
            #expect(try await store.downloads().map(\.id) == [downloads[0]])
            let kept = try await store.episodes(ids: [episodes[0].id]).first
            #expect(kept?.downloadID == downloads[0] && kept?.fileDeletedAt == nil)
        }
    }

    @Test("an episode linked to another download since the plan keeps that link")
    func keepsANewLink() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episodes, downloads) = try await setUp(store)
            let planned = Store.PlannedRelease(episodes[0], download: downloads[0])
            try await store.setEpisodeDownloads([(episodes[0].id, 77)])
            try await store.releaseEpisodeFiles([(episodes[0].id, downloads[0])], at: 5, reason: "deleted on request")
            let retired = try await store.retireEpisodeFiles([planned], at: 5, reason: "keep 1") { ($0, []) }
            #expect(retired.episodes.isEmpty && retired.disposed.isEmpty)
            #expect(try await store.episodes(ids: [episodes[0].id]).first?.downloadID == 77)
        }
    }
}
