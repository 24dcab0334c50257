import Foundation
import SinglecastStore
import Testing

/// Chapters and transcripts saved beside episodes (migration 12): offers stored with the episode, rows taken up once
/// its download completes, their fetches recorded, and rows forgotten with the episode's file.
@Suite struct SidecarStoreTests {
    private static let offers = [
        SidecarOffer(
            kind: .chapters,
            format: "json",
            language: nil,
            mimeType: "application/json+chapters",
            url: "https://a/c.json"
        ),
        SidecarOffer(
            kind: .transcript,
            format: "vtt",
            language: "en",
            mimeType: "text/vtt",
            url: "https://a/t.vtt",
            rel: "captions"
        ),
        SidecarOffer(
            kind: .transcript,
            format: "srt",
            language: nil,
            mimeType: "application/x-subrip",
            url: "https://a/t.srt"
        ),
    ]

    /// A podcast with one episode offering ``offers``, linked to a download in `state`.
    private func episode(in store: Store, downloadState: String) async throws -> (episode: Int64, download: Int64) {
        let (podcast, _) = try await store.insertPodcast(PodcastRecord(feedURL: "https://a/feed", subscribedAt: 1))
        var record = EpisodeRecord(podcastID: podcast.id, identity: "e", title: "E", firstSeenAt: 1)
        record.sidecarOffers = Self.offers
        let stored = record
        let episode = try #require(try await store.applyRefresh(podcast) { apply in try apply([stored]) }.first)
        let download = try await store.withConnection { connection throws(SQLiteError) -> Int64 in
            try connection.execute(
                """
                INSERT INTO downloads (url, directory, file_name, state, position, added_at)
                VALUES ('https://a/e.mp3', '/srv/d', 'E.mp3', ?, 1, 0)
                """,
                [.text(downloadState)]
            )
            let id = connection.lastInsertRowID
            try connection.execute(
                "UPDATE episodes SET download_id = ? WHERE id = ?",
                [.integer(id), .integer(episode)]
            )
            return id
        }
        return (episode, download)
    }

    @Test func offersAreKeptWithTheEpisodeAndTakenUpOnceItsDownloadCompleted() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episode, download) = try await episode(in: store, downloadState: "active")
            #expect(try await store.episodes(ids: [episode]).first?.sidecarOffers == Self.offers)
            #expect(try await store.episodes(ids: [episode], fields: .listing).first?.sidecarOffers == [])

            // Not before the episode's file is complete.
            #expect(try await store.takeUpSidecarOffers() == 0)
            try await store.withConnection { connection throws(SQLiteError) in
                try connection.execute("UPDATE downloads SET state = 'completed' WHERE id = ?", [.integer(download)])
            }
            #expect(try await store.takeUpSidecarOffers() == 3)
            #expect(try await store.takeUpSidecarOffers() == 0, "each offer once per download")

            let (due, nextAt) = try await store.dueSidecars(now: 1000)
            #expect(due.map(\.offer) == Self.offers)
            #expect(
                due.allSatisfy { $0.episodeFile == "/srv/d/E.mp3" && $0.state == .wanted && $0.downloadID == download }
            )
            #expect(nextAt == nil)

            // Saved, retried later, refused.
            #expect(try await store.recordSidecar(due[0].id, state: .saved, path: "/srv/d/E.chapters.json", bytes: 12))
            try await store.recordSidecar(due[1].id, state: .wanted, retryAt: 61_000, error: "HTTP 503")
            try await store.recordSidecar(due[2].id, state: .refused, error: "too big")
            let later = try await store.dueSidecars(now: 2000)
            #expect(later.due.isEmpty)
            #expect(later.nextAt == 61_000)
            #expect(try await store.dueSidecars(now: 61_000).due.map(\.id) == [due[1].id])

            let rows = try await store.sidecars(ofEpisode: episode)
            #expect(rows.map(\.state) == [.saved, .wanted, .refused])
            #expect(rows[0].path == "/srv/d/E.chapters.json" && rows[0].bytes == 12 && rows[0].attempts == 1)
            #expect(rows[1].error == "HTTP 503" && rows[1].nextAttemptAt == 61_000)
            #expect(try await store.sidecars(ofDownloads: [download]).map(\.id) == rows.map(\.id))

            // The saved ones of the episode's current download, with the podcast's feed for the credentials' host.
            let saved = try await store.savedSidecars(ofEpisodes: [episode, 999])
            #expect(saved.keys.sorted() == [episode])
            #expect(saved[episode]?.map(\.id) == [rows[0].id])
            #expect(rows[0].feedURL == "https://a/feed")
            try await store.withConnection { connection throws(SQLiteError) in
                try connection.execute("UPDATE episodes SET download_id = NULL WHERE id = ?", [.integer(episode)])
            }
            #expect(try await store.savedSidecars(ofEpisodes: [episode]).isEmpty, "not once the episode let go of it")

            // Forgotten with the file; a record of a forgotten row reports it gone.
            try await store.forgetSidecars(rows.map(\.id))
            #expect(try await store.sidecars(ofEpisode: episode).isEmpty)
            #expect(
                try await store.recordSidecar(rows[1].id, state: .saved, path: "/srv/d/E.en.vtt", bytes: 1) == false
            )
        }
    }

    @Test func anOfferALaterRefreshAddsIsTakenUpToo() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episode, _) = try await episode(in: store, downloadState: "completed")
            #expect(try await store.takeUpSidecarOffers() == 3)
            let podcast = try #require(try await store.podcasts().first)
            var record = try #require(try await store.episodes(ids: [episode]).first)
            record.sidecarOffers.append(
                SidecarOffer(
                    kind: .transcript,
                    format: "html",
                    language: "fr",
                    mimeType: "text/html",
                    url: "https://a/t.html"
                )
            )
            let stored = record
            _ = try await store.applyRefresh(podcast) { apply in try apply([stored]) }
            #expect(try await store.takeUpSidecarOffers() == 1)
            #expect(try await store.sidecars(ofEpisode: episode).last?.offer.language == "fr")
            #expect(try await store.takeUpSidecarOffers() == 0)
        }
    }

    /// A turn of the sidecar service follows every completed download and refreshed feed, so its two reads start from
    /// what is small, the wanted rows and the downloaded episodes that offer something, and look a download up by
    /// its id. They started from every completed download, whatever there was to fetch.
    @Test func theDueRowsAndTheOffersAreReadWithoutGoingThroughEveryCompletedDownload() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/s.db"
            try await Store(path: path).close()
            let connection = try configuredConnection(path)
            func plan(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> [String] {
                try connection.query("EXPLAIN QUERY PLAN " + sql, bindings).compactMap { $0.string(3) }
            }
            let due = try plan(Store.dueSidecarsSQL, [.integer(0), .integer(100)])
            #expect(due.first == "SCAN s USING INDEX sidecars_wanted", "\(due)")
            #expect(due.contains("SEARCH d USING INTEGER PRIMARY KEY (rowid=?)"), "\(due)")
            #expect(!due.joined().contains("downloads_order"), "\(due)")
            let offers = try plan(Store.offersToTakeUpSQL)
            #expect(offers.first == "SEARCH e USING INDEX episodes_offering_sidecars (download_id>?)", "\(offers)")
            #expect(offers.contains("SEARCH d USING INTEGER PRIMARY KEY (rowid=?)"), "\(offers)")
            #expect(!offers.joined().contains("downloads_order"), "\(offers)")
        }
    }

    @Test func anOlderDatabaseGainsTheTableAndRowsGoWithTheirPodcast() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/s.db"
            let connection = try configuredConnection(path)
            try Migrations.apply(to: connection, upTo: 11)
            try connection.execute("INSERT INTO podcasts (id, feed_url, subscribed_at) VALUES (1, 'https://a/feed', 0)")
            try connection.execute(
                "INSERT INTO episodes (podcast_id, identity, title, first_seen_at) VALUES (1, 'old', 'Old', 0)"
            )
            try connection.close()

            let store = try Store(path: path)
            // An episode stored before the migration offers nothing until a refresh stores it again.
            let old = try #require(try await store.episodes(of: 1).first)
            #expect(old.sidecarOffers == [])
            let (_, download) = try await episode(in: store, downloadState: "completed")
            #expect(try await store.takeUpSidecarOffers() == 3)
            try await store.deletePodcast(1)
            #expect(try await store.sidecars(ofDownloads: [download]).isEmpty, "unsubscribing leaves no rows")
            try await store.close()
        }
    }
}
