import Foundation
import SinglecastStore
import Testing

@Suite("download rows")
struct DownloadStoreTests {
    private func record(_ url: String, name: String = "f.mp3") -> DownloadRecord {
        DownloadRecord(url: url, directory: "/srv/d", fileName: name, addedAt: 1000, headers: ["X-A: 1", "X-B: 2"])
    }

    @Test("a record is a value: a changed copy leaves the original as it was, and equal fields are equal records")
    func recordsAreValues() {
        let original = record("https://a/1")
        var copy = original
        copy.state = .completed
        copy.headers.append("X-C: 3")
        copy.bytesDone = 65_536
        #expect(original.state == .queued && original.headers == ["X-A: 1", "X-B: 2"] && original.bytesDone == 0)
        #expect(copy.state == .completed && copy.headers.count == 3 && copy.bytesDone == 65_536)
        #expect(copy != original)

        var same = record("https://a/1")
        #expect(same == original && same.hashValue == original.hashValue)
        same.etag = "\"v1\""
        #expect(same != original)
        same.etag = nil
        #expect(Set([same, original]).count == 1)
    }

    @Test("enqueue assigns ids and positions, and returns the live download for a repeated URL")
    func enqueueDeduplicates() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/db.sqlite3")
            let first = try await store.enqueue([record("https://a/1"), record("https://a/2")])
            #expect(first.map(\.existing) == [false, false])
            #expect(first[1].record.position == first[0].record.position + 1)
            let again = try await store.enqueue([record("https://a/2"), record("https://a/3")])
            #expect(again[0].existing)
            #expect(again[0].record.id == first[1].record.id)
            #expect(!again[1].existing)
            #expect(again[1].record.position == first[1].record.position + 1, "an existing one takes no position")
            // A URL twice in one batch: the second finds the first, inserted in the same transaction.
            let twice = try await store.enqueue([record("https://a/4"), record("https://a/4")])
            #expect(twice.map(\.existing) == [false, true])
            #expect(twice[0].record == twice[1].record)

            // A completed download no longer blocks queueing its URL again.
            var done = first[0].record
            done.state = .completed
            try await store.save([done])
            let redo = try await store.enqueue([record("https://a/1")])
            #expect(!redo[0].existing)
            #expect(try await store.downloads().count == 5)
            try await store.close()
        }
    }

    /// The store keeps the highest position instead of reading `MAX(position)` for each enqueue; a new download must
    /// still come after every row, whatever a `move` saved, and after a reopen.
    @Test("a new download's position is above every row's, after a save moved one and after a reopen")
    func positionsStayAboveEveryRow() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite3"
            let store = try Store(path: path)
            let first = try await store.enqueue([record("https://a/1"), record("https://a/2")])
            var moved = first[0].record
            moved.position = 100
            try await store.save([moved])
            let second = try await store.enqueue([record("https://a/3")])
            #expect(second[0].record.position == 101)
            // Only existing downloads: nothing is given a position, and the next one still counts from the top.
            #expect(try await store.enqueue([record("https://a/3")])[0].existing)
            try await store.deleteDownloads([second[0].record.id])
            let third = try await store.enqueue([record("https://a/4")])
            #expect(third[0].record.position > 100)
            try await store.close()

            let reopened = try Store(path: path)
            let fourth = try await reopened.enqueue([record("https://a/5")])
            #expect(fourth[0].record.position == third[0].record.position + 1)
            let positions = try await reopened.downloads().map(\.position)
            #expect(Set(positions).count == positions.count)
            try await reopened.close()
        }
    }

    @Test("the id of a removed download is never given to another, not even after a reopen")
    func idsAreNotReused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite3"
            let store = try Store(path: path)
            let first = try await store.enqueue([record("https://a/1"), record("https://a/2")])
            try await store.deleteDownloads([first[1].record.id])
            let second = try await store.enqueue([record("https://a/3")])
            #expect(second[0].record.id == first[1].record.id + 1)
            try await store.deleteDownloads([second[0].record.id])
            try await store.close()

            let reopened = try Store(path: path)
            let third = try await reopened.enqueue([record("https://a/4")])
            #expect(third[0].record.id == second[0].record.id + 1)
            try await reopened.close()
        }
    }

    @Test("every field survives a save and a reopen")
    func roundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/db.sqlite3"
            let store = try Store(path: path)
            var saved = try await store.enqueue([record("https://a/1")])[0].record
            saved.finalURL = "https://cdn/1"
            saved.state = .paused
            saved.pauseReason = "disk_full"
            saved.priority = 5
            saved.bytesDone = 123
            saved.bytesTotal = 456
            saved.etag = "\"abc\""
            saved.lastModified = "Sun, 29 Nov 2026 12:00:00 GMT"
            saved.attempts = 3
            saved.errorCode = "http_status"
            saved.errorMessage = "HTTP 503"
            saved.errorHTTPStatus = 503
            saved.nextAttemptAt = 99
            saved.completedAt = nil
            saved.authUser = "ada"
            saved.authPassword = "s3cret"
            saved.deletePartial = true
            try await store.save([saved])
            try await store.close()

            let reopened = try Store(path: path)
            let loaded = try await reopened.downloads()
            #expect(loaded == [saved])
            #expect(try await reopened.downloads(in: .paused).count == 1)
            #expect(try await reopened.downloads(in: .queued).isEmpty)
            try await reopened.deleteDownloads([saved.id])
            #expect(try await reopened.downloads().isEmpty)
            try await reopened.close()
        }
    }

    @Test("forgetting downloads releases their episodes in the same transaction; start-up releases dangling links")
    func forgettingReleasesEpisodes() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/db.sqlite3")
            let (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example/a", subscribedAt: 1)
            )
            let ids = try await store.applyRefresh(podcast) { apply in
                try apply(
                    ["a", "b", "c"].map {
                        EpisodeRecord(podcastID: podcast.id, identity: $0, title: $0, firstSeenAt: 1)
                    }
                )
            }
            let downloads = try await store.enqueue(
                [record("https://a/1"), record("https://a/2", name: "g.mp3")],
                linking: [ids[0], ids[1]]
            )
            .map(\.record.id)
            try await store.setEpisodeDownloads([(ids[2], 99)])  // a download that is gone

            try await store.forgetDownloads([downloads[0]], releasingEpisodesAt: 7, reason: "older than 90d")
            var episodes = try await store.episodes(ids: ids)
            #expect(try await store.downloads().map(\.id) == [downloads[1]])
            #expect(episodes[0].downloadID == nil && episodes[0].fileDeletedAt == 7)
            #expect(episodes[0].fileDeletedReason == "older than 90d")
            #expect(episodes[1].downloadID == downloads[1], "an episode of another download keeps it")

            #expect(try await store.releaseEpisodesOfMissingDownloads(at: 8, reason: "its download was removed") == 1)
            episodes = try await store.episodes(ids: ids)
            #expect(episodes[2].downloadID == nil && episodes[2].fileDeletedAt == 8)
            #expect(episodes[1].downloadID == downloads[1])
            #expect(try await store.releaseEpisodesOfMissingDownloads(at: 9, reason: "again") == 0)
            try await store.close()
        }
    }
}
