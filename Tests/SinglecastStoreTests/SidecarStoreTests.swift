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

    /// Stores `episode` again as a refresh of its podcast would, with `change` made to it.
    private func refresh(_ episode: Int64, in store: Store, _ change: (inout EpisodeRecord) -> Void) async throws {
        let podcast = try #require(try await store.podcasts().first)
        var record = try #require(try await store.episodes(ids: [episode]).first)
        change(&record)
        let stored = record
        _ = try await store.applyRefresh(podcast) { apply in try apply([stored]) }
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
            try await refresh(episode, in: store) { record in
                record.sidecarOffers.append(
                    SidecarOffer(
                        kind: .transcript,
                        format: "html",
                        language: "fr",
                        mimeType: "text/html",
                        url: "https://a/t.html"
                    )
                )
            }
            #expect(try await store.takeUpSidecarOffers() == 1)
            #expect(try await store.sidecars(ofEpisode: episode).last?.offer.language == "fr")
            #expect(try await store.takeUpSidecarOffers() == 0)
        }
    }

    /// A turn of the sidecar service follows every completed download and refreshed feed, so its two reads start from
    /// what is small, the wanted rows and the episodes noted since the last take-up, and look a download up by its
    /// id. They started from every completed download, whatever there was to fetch.
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
            #expect(offers.first == "SCAN p", "\(offers)")
            #expect(offers.contains("SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"), "\(offers)")
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

    /// Offers replaced by as many others (a feed moving its transcript from VTT to HTML) are taken up: the take-up
    /// used to compare how many rows an episode had with how many offers, and saw nothing new.
    @Test func offersReplacedByAsManyOthersAreTakenUp() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (episode, _) = try await episode(in: store, downloadState: "completed")
            #expect(try await store.takeUpSidecarOffers() == 3)
            try await refresh(episode, in: store) { record in
                record.sidecarOffers[1] = SidecarOffer(
                    kind: .transcript,
                    format: "html",
                    language: "en",
                    mimeType: "text/html",
                    url: "https://a/t.html"
                )
            }
            #expect(try await store.takeUpSidecarOffers() == 1)
            let formats = try await store.sidecars(ofEpisode: episode).map(\.offer.format)
            #expect(formats.sorted() == ["html", "json", "srt", "vtt"])
        }
    }

    /// A take-up reads the episodes noted since the last one (their offers or download changed, or their download
    /// completed), not every downloaded episode that offers something: a turn follows every completed download and
    /// refreshed feed, and with 20,000 such episodes each read took 38 ms of the store's one connection.
    @Test func aTakeUpReadsOnlyTheEpisodesNotedSinceTheLast() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, _) = try await store.insertPodcast(PodcastRecord(feedURL: "https://a/feed", subscribedAt: 1))
            let records = (1...300).map { number in
                var record = EpisodeRecord(podcastID: podcast.id, identity: "e\(number)", title: "E", firstSeenAt: 1)
                record.sidecarOffers = [Self.offers[0]]
                return record
            }
            let episodes = try await store.applyRefresh(podcast) { apply in try apply(records) }
            #expect(episodes.count == 300)
            func noted() async throws -> [Int64] {
                try await store.withConnection { connection throws(SQLiteError) in
                    try connection.query("SELECT episode_id FROM sidecar_offers_pending ORDER BY episode_id")
                        .compactMap { $0.int64(0) }
                }
            }
            #expect(try await noted().isEmpty, "no episode is downloaded yet")
            // Each episode's download: the last one still running.
            try await store.withConnection { connection throws(SQLiteError) in
                for (index, episode) in episodes.enumerated() {
                    try connection.execute(
                        """
                        INSERT INTO downloads (url, directory, file_name, state, position, added_at)
                        VALUES (?, '/srv/d', ?, ?, ?, 0)
                        """,
                        [
                            .text("https://a/\(index).mp3"), .text("\(index).mp3"),
                            .text(index == episodes.count - 1 ? "active" : "completed"), .integer(Int64(index)),
                        ]
                    )
                    try connection.execute(
                        "UPDATE episodes SET download_id = ? WHERE id = ?",
                        [.integer(connection.lastInsertRowID), .integer(episode)]
                    )
                }
            }
            #expect(try await noted() == episodes)
            #expect(try await store.takeUpSidecarOffers() == 299)
            #expect(try await noted().isEmpty, "each noted episode is read once, the running download's too")
            #expect(try await store.takeUpSidecarOffers() == 0)

            // The running download completes, one episode's offers change and another's title: the first two only.
            let running = try #require(episodes.last)
            try await store.withConnection { connection throws(SQLiteError) in
                try connection.execute(
                    "UPDATE downloads SET state = 'completed' WHERE id = (SELECT download_id FROM episodes WHERE id = ?)",
                    [.integer(running)]
                )
            }
            var changed = try #require(try await store.episodes(ids: [episodes[6]]).first)
            changed.sidecarOffers.append(Self.offers[1])
            var renamed = try #require(try await store.episodes(ids: [episodes[7]]).first)
            renamed.title = "Renamed"
            let refreshed = [changed, renamed]
            _ = try await store.applyRefresh(podcast) { apply in try apply(refreshed) }
            #expect(try await noted() == [episodes[6], running])
            #expect(try await store.takeUpSidecarOffers() == 2)
        }
    }

    /// A take-up follows every completed download and refreshed feed, and most find nothing noted: those must not
    /// write. Emptying the empty table rewrote its root page, and the commit synced the log: an fdatasync on the store's
    /// thread for each of an OPML import's feeds.
    @Test func aTakeUpWithNothingNotedWritesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/s.db"
            let store = try Store(path: path)
            let (episode, download) = try await episode(in: store, downloadState: "completed")
            #expect(try await store.takeUpSidecarOffers() == 3)
            // Another connection's `data_version` changes whenever a commit writes to the database.
            let observer = try configuredConnection(path)
            func version() throws -> Int64? { try observer.scalar("PRAGMA data_version")?.int64 }
            let before = try version()
            #expect(try await store.takeUpSidecarOffers() == 0)
            #expect(try await store.takeUpSidecarOffers() == 0)
            #expect(try version() == before, "a take-up that found nothing committed a write")
            // A take-up with something noted still writes, and forgets the note.
            try await store.withConnection { connection throws(SQLiteError) in
                try connection.execute(
                    "INSERT INTO sidecar_offers_pending (episode_id) VALUES (?)",
                    [.integer(episode)]
                )
            }
            let noted = try version()
            #expect(try await store.takeUpSidecarOffers() == 0, "its rows exist already (download \(download))")
            #expect(try version() != noted)
            let forgotten = try version()
            #expect(try await store.takeUpSidecarOffers() == 0)
            #expect(try version() == forgotten)
            // A note of a download still running is forgotten too; its completion notes the episode again.
            try await store.withConnection { connection throws(SQLiteError) in
                try connection.execute("UPDATE downloads SET state = 'active' WHERE id = ?", [.integer(download)])
                try connection.execute(
                    "INSERT INTO sidecar_offers_pending (episode_id) VALUES (?)",
                    [.integer(episode)]
                )
            }
            #expect(try await store.takeUpSidecarOffers() == 0)
            let pending = try await store.withConnection { connection throws(SQLiteError) in
                try connection.query("SELECT episode_id FROM sidecar_offers_pending").count
            }
            #expect(pending == 0)
        }
    }

    /// A database from before the notes (schema 14) has its downloaded episodes' offers taken up once: the migration
    /// notes every one of them.
    @Test func aDatabaseFromBeforeTheNotesHasItsOffersTakenUp() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/s.db"
            let store = try Store(path: path)
            let (episode, _) = try await episode(in: store, downloadState: "completed")
            try await store.close()
            let connection = try configuredConnection(path)
            // Back to where schema 14 left it: no notes, no rows.
            try connection.execute("DELETE FROM sidecar_offers_pending")
            try connection.execute("DELETE FROM sidecars")
            for trigger in [
                "sidecar_offers_of_new_episode", "sidecar_offers_of_changed_episode",
                "sidecar_offers_of_completed_download", "sidecar_offers_of_inserted_download",
            ] {
                try connection.execute("DROP TRIGGER \(trigger)")
            }
            try connection.execute("DROP TABLE sidecar_offers_pending")
            try connection.execute(
                """
                CREATE INDEX episodes_offering_sidecars ON episodes(download_id)
                WHERE download_id IS NOT NULL AND sidecar_offers IS NOT NULL
                """
            )
            try connection.execute("PRAGMA user_version = 14")
            try connection.close()

            let migrated = try Store(path: path)
            #expect(try await migrated.takeUpSidecarOffers() == 3)
            #expect(try await migrated.sidecars(ofEpisode: episode).count == 3)
            try await migrated.close()
        }
    }
}
