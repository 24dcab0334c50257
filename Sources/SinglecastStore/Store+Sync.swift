/// One change the gPodder server has not acknowledged yet (a row of `sync_outbox`, written by the triggers of
/// ``Migrations/syncOutbox(_:)``).
package struct SyncOutboxEntry: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case add, remove, download, delete, play, new
        /// A subscription change rather than an episode action.
        package var isSubscription: Bool { self == .add || self == .remove }
    }

    package var id: Int64
    package var kind: Kind
    package var podcastURL: String
    package var episodeURL: String?
    package var guid: String?
    /// Seconds, for `play`.
    package var position: Int64?
    package var total: Int64?
    /// Unix milliseconds of the local change.
    package var at: Int64

    package init(
        id: Int64,
        kind: Kind,
        podcastURL: String,
        episodeURL: String? = nil,
        guid: String? = nil,
        position: Int64? = nil,
        total: Int64? = nil,
        at: Int64
    ) {
        self.id = id
        self.kind = kind
        self.podcastURL = podcastURL
        self.episodeURL = episodeURL
        self.guid = guid
        self.position = position
        self.total = total
        self.at = at
    }
}

/// What sync keeps between runs: the server's `since` timestamps and the last outcome.
package struct SyncCursor: Sendable, Hashable {
    /// Per device of the account (other than singlecast's own), the server's timestamp to ask for subscription
    /// changes after; a device not listed has never been asked.
    package var devicesSince: [String: Int64] = [:]
    /// The server's timestamp to ask for episode actions after; 0 before the first sync.
    package var actionsSince: Int64 = 0
    /// Whether every local subscription was uploaded once (the first sync); later only changes are.
    package var uploadedAll = false
    /// Feed URLs as the server rewrote them (its `update_urls`: it normalises URLs) → the URL subscribed to here, so
    /// that the server's later changes of a rewritten URL name the local podcast.
    package var aliases: [String: String] = [:]
    /// Unix milliseconds.
    package var lastSuccess: Int64?
    package var lastAttempt: Int64?
    package var lastError: String?

    package init() {}
}

extension Store {
    /// Starts (or stops) recording local changes in the outbox; off, the outbox is emptied, since the next sync
    /// that starts again compares whole subscription lists anyway.
    ///
    /// When recording starts (sync turned on, for the first time or again after it was off), every episode played
    /// here before is recorded as a `play`, in the same transaction as the switch: the phone learns what was heard
    /// before sync existed, once, with the outbox's guarantees. Only episodes of subscribed podcasts (the store keeps
    /// no others) with a media URL (the API's key) go up.
    package func setSyncRecording(_ on: Bool) throws(StoreError) {
        try withConnection("switching sync recording") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                if on {
                    let recording = try connection.scalar("SELECT COUNT(*) FROM sync_state WHERE name = 'recording'")
                    if recording?.int64 ?? 0 == 0 { try Self.recordPlayedBefore(on: connection) }
                    try connection.execute("INSERT OR IGNORE INTO sync_state (name, value) VALUES ('recording', 1)")
                } else {
                    try connection.execute("DELETE FROM sync_state WHERE name = 'recording'")
                    try connection.execute("DELETE FROM sync_outbox")
                }
            }
        }
    }

    /// The played marks made before recording, as the trigger `sync_episode_played` would have written them, oldest
    /// first; without a known duration, a play without position and total (the API's minimal form).
    private static func recordPlayedBefore(on connection: Connection) throws(SQLiteError) {
        try connection.execute(
            """
            INSERT INTO sync_outbox (kind, podcast_url, episode_url, guid, position, total, at)
            SELECT 'play', p.feed_url, e.enclosure_url, e.guid, NULLIF(e.duration, 0), NULLIF(e.duration, 0),
                e.played_at
            FROM episodes e JOIN podcasts p ON p.id = e.podcast_id
            WHERE e.played_at IS NOT NULL AND e.enclosure_url IS NOT NULL
            ORDER BY e.played_at, e.id
            """
        )
    }

    /// The oldest `limit` unacknowledged changes, oldest first.
    package func syncOutbox(limit: Int = 1000) throws(StoreError) -> [SyncOutboxEntry] {
        try withConnection("reading the sync outbox") { connection throws(SQLiteError) in
            try connection.query(
                """
                SELECT id, kind, podcast_url, episode_url, guid, position, total, at
                FROM sync_outbox ORDER BY id LIMIT ?
                """,
                [.integer(Int64(limit))]
            ).compactMap { row in
                guard let id = row.int64(0), let kind = row.string(1).flatMap(SyncOutboxEntry.Kind.init(rawValue:)),
                    let podcast = row.string(2)
                else { return nil }
                return SyncOutboxEntry(
                    id: id,
                    kind: kind,
                    podcastURL: podcast,
                    episodeURL: row.string(3),
                    guid: row.string(4),
                    position: row.int64(5),
                    total: row.int64(6),
                    at: row.int64(7) ?? 0
                )
            }
        }
    }

    /// Rows in the outbox.
    package func syncOutboxCount() throws(StoreError) -> Int {
        try withConnection("counting the sync outbox") { connection throws(SQLiteError) in
            Int(try connection.scalar("SELECT COUNT(*) FROM sync_outbox")?.int64 ?? 0)
        }
    }

    /// The newest outbox id, or 0: a mark to tell the rows written after it.
    package func syncOutboxMark() throws(StoreError) -> Int64 {
        try withConnection("reading the sync outbox") { connection throws(SQLiteError) in
            try connection.scalar("SELECT COALESCE(MAX(id), 0) FROM sync_outbox")?.int64 ?? 0
        }
    }

    /// Removes the rows the server acknowledged, and with them the cursor it answered, in one transaction: a crash
    /// keeps both or neither, so the next sync neither loses nor repeats them beyond the server's tolerance.
    package func acknowledgeSyncOutbox(_ ids: [Int64], cursor: SyncCursor) throws(StoreError) {
        try withConnection("acknowledging the sync outbox") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for chunk in stride(from: 0, to: ids.count, by: 500) {
                    let part = ids[chunk..<min(chunk + 500, ids.count)]
                    try connection.execute(
                        "DELETE FROM sync_outbox WHERE id IN (\(part.map { _ in "?" }.joined(separator: ",")))",
                        part.map { .integer($0) }
                    )
                }
                try Self.write(cursor, on: connection)
            }
        }
    }

    /// Drops the rows written after `mark` that echo remote changes just applied (`kind` and URLs equal), so that
    /// the server's own changes are not sent back to it.
    package func dropSyncEchoes(after mark: Int64, _ echoes: [SyncOutboxEntry]) throws(StoreError) {
        guard !echoes.isEmpty else { return }
        try withConnection("trimming the sync outbox") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for echo in echoes {
                    try connection.execute(
                        """
                        DELETE FROM sync_outbox WHERE id > ? AND kind = ? AND podcast_url = ?
                            AND episode_url IS ?
                        """,
                        [.integer(mark), .text(echo.kind.rawValue), .text(echo.podcastURL), .init(echo.episodeURL)]
                    )
                }
            }
        }
    }

    package func syncCursor() throws(StoreError) -> SyncCursor {
        try withConnection("reading the sync state") { connection throws(SQLiteError) in
            var cursor = SyncCursor()
            for row in try connection.query("SELECT name, value FROM sync_state") {
                let name = row.string(0) ?? ""
                if name.hasPrefix(Self.devicePrefix) {
                    cursor.devicesSince[String(name.dropFirst(Self.devicePrefix.count))] = row.int64(1) ?? 0
                    continue
                }
                if name.hasPrefix(Self.aliasPrefix) {
                    cursor.aliases[String(name.dropFirst(Self.aliasPrefix.count))] = row.string(1)
                    continue
                }
                switch name {
                case "uploaded_all": cursor.uploadedAll = row.int64(1) == 1
                case "actions_since": cursor.actionsSince = row.int64(1) ?? 0
                case "last_success": cursor.lastSuccess = row.int64(1)
                case "last_attempt": cursor.lastAttempt = row.int64(1)
                case "last_error": cursor.lastError = row.string(1)
                default: break
                }
            }
            return cursor
        }
    }

    package func setSyncCursor(_ cursor: SyncCursor) throws(StoreError) {
        try withConnection("saving the sync state") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in try Self.write(cursor, on: connection) }
        }
    }

    private static let devicePrefix = "device_since:"
    private static let aliasPrefix = "alias:"

    private static func write(_ cursor: SyncCursor, on connection: Connection) throws(SQLiteError) {
        try connection.execute("DELETE FROM sync_state WHERE name LIKE 'device\\_since:%' ESCAPE '\\'")
        try connection.execute("DELETE FROM sync_state WHERE name LIKE 'alias:%'")
        var values: [(String, SQLiteValue)] = cursor.devicesSince.map { (devicePrefix + $0.key, .integer($0.value)) }
        values += cursor.aliases.map { (aliasPrefix + $0.key, .text($0.value)) }
        values += [
            ("uploaded_all", .integer(cursor.uploadedAll ? 1 : 0)),
            ("actions_since", .integer(cursor.actionsSince)),
            ("last_success", .init(cursor.lastSuccess)),
            ("last_attempt", .init(cursor.lastAttempt)),
            ("last_error", cursor.lastError.map { .text($0) } ?? .null),
        ]
        for (name, value) in values {
            try connection.execute(
                "INSERT OR REPLACE INTO sync_state (name, value) VALUES (?, ?)",
                [.text(name), value]
            )
        }
    }

    /// The episodes a remote action names: by podcast feed URL and enclosure URL, else by guid within the podcast.
    /// Returns one id per matched key, in the order given, `nil` where nothing matches.
    package func episodeIDs(
        matching keys: [(podcast: String, episode: String, guid: String?)]
    ) throws(StoreError) -> [Int64?] {
        try withConnection("matching episodes") { connection throws(SQLiteError) in
            var ids: [Int64?] = []
            ids.reserveCapacity(keys.count)
            for key in keys {
                let rows = try connection.query(
                    """
                    SELECT e.id FROM episodes e JOIN podcasts p ON p.id = e.podcast_id
                    WHERE p.feed_url = ? AND (e.enclosure_url = ? OR (? IS NOT NULL AND e.guid = ?))
                    ORDER BY e.enclosure_url = ? DESC LIMIT 1
                    """,
                    [.text(key.podcast), .text(key.episode), .init(key.guid), .init(key.guid), .text(key.episode)]
                )
                ids.append(rows.first?.int64(0))
            }
            return ids
        }
    }
}
