import Foundation
import SinglecastStore
import Testing

/// The sync outbox: every local change the phone must learn is written with the change itself, by the store's
/// triggers, and leaves only when the server acknowledged it.
@Suite("Sync outbox store")
struct SyncOutboxStoreTests {
    private func subscribeWithEpisode(
        _ store: Store,
        feed: String = "https://feeds.example.com/a"
    ) async throws
        -> (podcast: PodcastRecord, episode: EpisodeRecord)
    {
        let podcast = try await store.insertPodcast(PodcastRecord(feedURL: feed, subscribedAt: 1000)).podcast
        var record = EpisodeRecord(podcastID: 0, identity: "e1", title: "E1", firstSeenAt: 1)
        record.enclosureURL = "https://cdn.example.com/e1.mp3"
        record.guid = "guid-1"
        record.durationSeconds = 600
        let episode = record
        let ids = try await store.applyRefresh(podcast) { apply in try apply([episode]) }
        return (podcast, try #require(try await store.episodes(ids: ids).first))
    }

    @Test("nothing is recorded while sync is off")
    func offRecordsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, episode) = try await subscribeWithEpisode(store)
            _ = try await store.setPlayed([episode.id], at: 5000)
            try await store.deletePodcast(podcast.id)
            #expect(try await store.syncOutboxCount() == 0)
            try await store.close()
        }
    }

    @Test("subscribe, play, unplay, delete and unsubscribe are recorded in order with their URLs")
    func recordsLocalChanges() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            try await store.setSyncRecording(true)
            let (podcast, episode) = try await subscribeWithEpisode(store)
            _ = try await store.setPlayed([episode.id], at: 5000)
            _ = try await store.setPlayed([episode.id], at: nil)
            try await store.withConnection { connection throws(SQLiteError) in
                try connection.execute(
                    "UPDATE episodes SET file_deleted_at = 7000 WHERE id = ?",
                    [.integer(episode.id)]
                )
            }
            try await store.deletePodcast(podcast.id)
            let entries = try await store.syncOutbox()
            #expect(entries.map(\.kind) == [.add, .play, .new, .delete, .remove])
            #expect(entries.allSatisfy { $0.podcastURL == "https://feeds.example.com/a" })
            #expect(entries[1].episodeURL == "https://cdn.example.com/e1.mp3")
            #expect(entries[1].guid == "guid-1")
            #expect(entries[1].position == 600 && entries[1].total == 600)
            #expect(entries[1].at == 5000)
            #expect(entries[3].at == 7000)
            try await store.close()
        }
    }

    @Test("turning sync on records the episodes played before as plays, once, with their duration when known")
    func playedBeforeSyncIsRecordedOnce() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, episode) = try await subscribeWithEpisode(store)
            var unknown = EpisodeRecord(podcastID: 0, identity: "e2", title: "E2", firstSeenAt: 1)
            unknown.enclosureURL = "https://cdn.example.com/e2.mp3"
            let heard = unknown
            let ids = try await store.applyRefresh(podcast) { apply in try apply([heard]) }
            _ = try await store.setPlayed([episode.id], at: 5000)
            _ = try await store.setPlayed(ids, at: 6000)
            try await store.setSyncRecording(true)
            let entries = try await store.syncOutbox()
            #expect(entries.map(\.kind) == [.play, .play])
            #expect(entries.map(\.episodeURL) == ["https://cdn.example.com/e1.mp3", "https://cdn.example.com/e2.mp3"])
            #expect(entries.map(\.at) == [5000, 6000])
            #expect(entries[0].position == 600 && entries[0].total == 600)
            // No duration: the API's play without a position.
            #expect(entries[1].position == nil && entries[1].total == nil)
            // Every start turns recording on again: nothing more is recorded.
            try await store.setSyncRecording(true)
            #expect(try await store.syncOutboxCount() == 2)
            try await store.close()
        }
    }

    @Test("a feed that moved is recorded as the old URL removed and the new one added")
    func recordsMoves() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            try await store.setSyncRecording(true)
            var (podcast, _) = try await subscribeWithEpisode(store)
            podcast.feedURL = "https://feeds.example.com/moved"
            try await store.savePodcast(podcast)
            try await store.savePodcast(podcast)  // saved again unchanged: nothing more
            let entries = try await store.syncOutbox()
            #expect(entries.map(\.kind) == [.add, .remove, .add])
            #expect(
                entries.map(\.podcastURL) == [
                    "https://feeds.example.com/a", "https://feeds.example.com/a", "https://feeds.example.com/moved",
                ]
            )
            try await store.close()
        }
    }

    @Test("a completed download of an episode is recorded as a download action")
    func recordsCompletedDownload() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            try await store.setSyncRecording(true)
            let (_, episode) = try await subscribeWithEpisode(store)
            let queued = DownloadRecord(
                url: "https://cdn.example.com/e1.mp3",
                directory: "/srv/d",
                fileName: "e1.mp3",
                addedAt: 1
            )
            var download = try #require(try await store.enqueue([queued]).first).record
            try await store.setEpisodeDownloads([(episode: episode.id, download: download.id)])
            download.state = .completed
            download.completedAt = 9000
            try await store.save([download])
            try await store.save([download])  // saved again: still one action
            let entries = try await store.syncOutbox().filter { $0.kind == .download }
            #expect(entries.count == 1)
            #expect(entries.first?.episodeURL == "https://cdn.example.com/e1.mp3")
            #expect(entries.first?.at == 9000)
            try await store.close()
        }
    }

    @Test("acknowledged rows leave with the cursor in one step; echoes of applied changes are dropped")
    func acknowledgeAndEchoes() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/s.db"
            let store = try Store(path: path)
            try await store.setSyncRecording(true)
            let (_, episode) = try await subscribeWithEpisode(store)
            let mark = try await store.syncOutboxMark()
            _ = try await store.setPlayed([episode.id], at: 5000)
            let played = try #require(try await store.syncOutbox().last)
            try await store.dropSyncEchoes(after: mark, [played])
            #expect(try await store.syncOutbox().map(\.kind) == [.add])

            var cursor = SyncCursor()
            cursor.devicesSince = ["phone": 42, "tablet_2": 41]
            cursor.uploadedAll = true
            cursor.aliases = ["http://feeds.example/a": "HTTP://Feeds.Example/a"]
            cursor.actionsSince = 43
            cursor.lastSuccess = 44
            try await store.acknowledgeSyncOutbox(try await store.syncOutbox().map(\.id), cursor: cursor)
            try await store.close()

            let reopened = try Store(path: path)
            #expect(try await reopened.syncOutboxCount() == 0)
            #expect(try await reopened.syncCursor() == cursor)
            try await reopened.close()
        }
    }

    @Test("remote actions find episodes by feed and enclosure URL, else by guid")
    func matchesEpisodes() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (_, episode) = try await subscribeWithEpisode(store)
            let ids = try await store.episodeIDs(matching: [
                (podcast: "https://feeds.example.com/a", episode: "https://cdn.example.com/e1.mp3", guid: nil),
                (podcast: "https://feeds.example.com/a", episode: "https://other.example.com/x.mp3", guid: "guid-1"),
                (podcast: "https://feeds.example.com/b", episode: "https://cdn.example.com/e1.mp3", guid: nil),
            ])
            #expect(ids == [episode.id, episode.id, nil])
            try await store.close()
        }
    }

    @Test("turning recording off empties the outbox")
    func offEmpties() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            try await store.setSyncRecording(true)
            _ = try await subscribeWithEpisode(store)
            #expect(try await store.syncOutboxCount() == 1)
            try await store.setSyncRecording(false)
            #expect(try await store.syncOutboxCount() == 0)
            try await store.close()
        }
    }
}
