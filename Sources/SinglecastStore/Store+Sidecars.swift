/// A file a feed offers to save beside an episode's: its chapters or one of its transcripts.
package struct SidecarOffer: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case chapters, transcript
    }

    package var kind: Kind
    /// The saved file's extension: `json`, `vtt`, `srt` or `html`.
    package var format: String
    /// The transcript's language as a file name may carry it; `nil` when the feed gives none.
    package var language: String?
    package var mimeType: String
    package var url: String
    /// The transcript's `rel` (`captions`), for feeds that list it again.
    package var rel: String?

    package init(kind: Kind, format: String, language: String?, mimeType: String, url: String, rel: String? = nil) {
        self.kind = kind
        self.format = format
        self.language = language
        self.mimeType = mimeType
        self.url = url
        self.rel = rel
    }

    /// The `episodes.sidecar_offers` text: one tab-separated line per offer; `nil` for none. An offer whose fields
    /// hold a tab or a line break cannot be written and is left out (the daemon never makes one).
    static func encode(_ offers: [SidecarOffer]) -> String? {
        let lines = offers.compactMap { offer -> String? in
            let fields = [
                offer.kind.rawValue, offer.format, offer.language ?? "", offer.mimeType, offer.rel ?? "", offer.url,
            ]
            guard !fields.contains(where: { $0.contains(where: { $0 == "\t" || $0.isNewline }) }) else { return nil }
            return fields.joined(separator: "\t")
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    static func decode(_ text: String?) -> [SidecarOffer] {
        guard let text else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let kind = Kind(rawValue: fields[0]) else { return nil }
            return SidecarOffer(
                kind: kind,
                format: fields[1],
                language: fields[2].isEmpty ? nil : fields[2],
                mimeType: fields[3],
                url: fields[5],
                rel: fields[4].isEmpty ? nil : fields[4]
            )
        }
    }
}

/// One row of the `sidecars` table: an offer of an episode whose download completed, and what became of it.
package struct SidecarRecord: Sendable, Hashable {
    package enum State: String, Sendable, Hashable {
        /// To be fetched, at ``nextAttemptAt`` (at once when `nil`).
        case wanted
        /// On disk at ``path``.
        case saved
        /// Not saved for good (too big, or tried too often); ``error`` says why.
        case refused
    }

    package var id: Int64
    package var episodeID: Int64
    package var downloadID: Int64
    package var offer: SidecarOffer
    package var state: State
    package var path: String?
    package var bytes: Int64?
    package var attempts: Int
    package var nextAttemptAt: Int64?
    package var error: String?
    /// The episode's file, where the sidecar goes beside: read with the row, `nil` when its download is not completed.
    package var episodeFile: String?
    /// The podcast's feed URL and credentials, read with the row: the credentials go to the feed's host only.
    package var feedURL: String?
    package var authUser: String?
    package var authPassword: String?
}

private let sidecarColumns = """
    s.id, s.episode_id, s.download_id, s.kind, s.format, s.language, s.mime_type, s.url, s.state, s.path, s.bytes,
    s.attempts, s.next_attempt_at, s.error, CASE WHEN d.state = 'completed' THEN d.directory || '/' || d.file_name END,
    p.feed_url, p.auth_user, p.auth_password, s.rel
    """
/// What every read of sidecars joins after the sidecar (`s`) and its download (`d`).
private let sidecarJoins = "LEFT JOIN episodes e ON e.id = s.episode_id LEFT JOIN podcasts p ON p.id = e.podcast_id"
private let sidecarFrom = "sidecars s LEFT JOIN downloads d ON d.id = s.download_id \(sidecarJoins)"
/// The due ones, read after every completed download and refreshed feed: from the wanted rows (their partial index)
/// to their completed downloads. Left to itself, SQLite went from every completed download to its sidecars, a
/// tenth of a millisecond per thousand downloads however few sidecars there were.
private let dueSidecarFrom = """
    sidecars s INDEXED BY sidecars_wanted CROSS JOIN downloads d ON d.id = s.download_id \(sidecarJoins)
    """

extension SidecarRecord {
    fileprivate init(row: Row) {
        let language = row.string(5) ?? ""
        self.init(
            id: row.int64(0) ?? 0,
            episodeID: row.int64(1) ?? 0,
            downloadID: row.int64(2) ?? 0,
            offer: SidecarOffer(
                kind: SidecarOffer.Kind(rawValue: row.string(3) ?? "") ?? .transcript,
                format: row.string(4) ?? "",
                language: language.isEmpty ? nil : language,
                mimeType: row.string(6) ?? "",
                url: row.string(7) ?? "",
                rel: row.string(18)
            ),
            state: State(rawValue: row.string(8) ?? "") ?? .wanted,
            path: row.string(9),
            bytes: row.int64(10),
            attempts: Int(row.int64(11) ?? 0),
            nextAttemptAt: row.int64(12),
            error: row.string(13),
            episodeFile: row.string(14),
            feedURL: row.string(15),
            authUser: row.string(16),
            authPassword: row.string(17)
        )
    }
}

extension Store {
    /// The episodes the triggers of migrations 15 and 16 noted (their offers or download changed, or their download
    /// completed) whose download is complete now (``takeUpSidecarOffers()``); package-visible for the test of its
    /// query plan.
    package static let offersToTakeUpSQL = """
        SELECT e.id, e.download_id, e.sidecar_offers FROM sidecar_offers_pending p
        CROSS JOIN episodes e ON e.id = p.episode_id CROSS JOIN downloads d ON d.id = e.download_id
        WHERE e.sidecar_offers IS NOT NULL AND d.state = 'completed'
        """

    /// Wanted sidecars due by `?` of completed downloads, oldest first, at most `?` (``dueSidecars(now:limit:)``);
    /// package-visible for the test of its query plan.
    package static let dueSidecarsSQL = """
        SELECT \(sidecarColumns) FROM \(dueSidecarFrom)
        WHERE s.state = 'wanted' AND COALESCE(s.next_attempt_at, 0) <= ? AND d.state = 'completed'
        ORDER BY s.id LIMIT ?
        """

    /// Adds a row for each offer of every episode whose download completed and that has no row for that offer and
    /// download yet: offers a refresh added after the episode's file came are taken up too.
    ///
    /// Reads only the episodes noted since the last take-up, and forgets them: one whose download is not complete
    /// yet is noted again when it completes. With nothing noted it writes nothing.
    ///
    /// - Returns: How many rows were added.
    @discardableResult
    package func takeUpSidecarOffers() throws(StoreError) -> Int {
        try withConnection("taking up chapters and transcripts") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Int in
                // Most take-ups find nothing noted, and must not write: emptying an empty table still rewrites its
                // root page, and the commit then syncs the log (an fdatasync for each feed of an OPML import).
                guard try !connection.queryCached("SELECT 1 FROM sidecar_offers_pending LIMIT 1").isEmpty else {
                    return 0
                }
                // The join starts from the noted episodes (CROSS JOIN), which are few whatever the catalogue holds.
                // Every statement cached: a take-up follows every completed download and refreshed feed.
                let rows = try connection.queryCached(Self.offersToTakeUpSQL)
                var added = 0
                for row in rows {
                    guard let episode = row.int64(0), let download = row.int64(1) else { continue }
                    for offer in SidecarOffer.decode(row.string(2)) {
                        added += try connection.executeCached(
                            """
                            INSERT OR IGNORE INTO sidecars (episode_id, download_id, kind, format, language, mime_type, url, rel)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                            [
                                .integer(episode), .integer(download), .text(offer.kind.rawValue), .text(offer.format),
                                .text(offer.language ?? ""), .text(offer.mimeType), .text(offer.url),
                                SQLiteValue(offer.rel),
                            ]
                        )
                    }
                }
                try connection.executeCached("DELETE FROM sidecar_offers_pending")
                return added
            }
        }
    }

    /// Wanted sidecars whose turn has come (`next_attempt_at` at or before `now`) and whose episode's download is
    /// completed, oldest first; and when the next one not yet due falls due.
    package func dueSidecars(
        now: Int64,
        limit: Int = 100
    ) throws(StoreError) -> (
        due: [SidecarRecord], nextAt: Int64?
    ) {
        try withConnection("reading the chapters and transcripts to fetch") { connection throws(SQLiteError) in
            // Both cached: asked after every refreshed feed.
            let due = try connection.queryCached(Self.dueSidecarsSQL, [.integer(now), .integer(Int64(limit))])
                .map(SidecarRecord.init(row:))
            let next = try connection.queryCached(
                "SELECT MIN(next_attempt_at) FROM sidecars WHERE state = 'wanted' AND next_attempt_at > ?",
                [.integer(now)]
            ).first?.int64(0)
            return (due, next)
        }
    }

    /// Records what became of a sidecar's fetch: saved at `path`, or wanted again at `retryAt`, or refused for good.
    ///
    /// - Returns: `false` when the row is gone (its episode's file went while it was fetched): the caller removes what
    ///   it wrote.
    @discardableResult
    package func recordSidecar(
        _ id: Int64,
        state: SidecarRecord.State,
        path: String? = nil,
        bytes: Int64? = nil,
        retryAt: Int64? = nil,
        error: String? = nil
    ) throws(StoreError) -> Bool {
        try withConnection("recording a chapters or transcript file") { connection throws(SQLiteError) in
            try connection.execute(
                """
                UPDATE sidecars SET state = ?, path = ?, bytes = ?, next_attempt_at = ?, error = ?,
                    attempts = attempts + 1
                WHERE id = ?
                """,
                [
                    .text(state.rawValue), SQLiteValue(path), SQLiteValue(bytes), SQLiteValue(retryAt),
                    SQLiteValue(error), .integer(id),
                ]
            ) > 0
        }
    }

    /// The sidecars of an episode, whatever their state, in the order they were taken up.
    package func sidecars(ofEpisode id: Int64) throws(StoreError) -> [SidecarRecord] {
        try withConnection("reading an episode's chapters and transcripts") { connection throws(SQLiteError) in
            try connection.query(
                "SELECT \(sidecarColumns) FROM \(sidecarFrom) WHERE s.episode_id = ? ORDER BY s.id",
                [.integer(id)]
            ).map(SidecarRecord.init(row:))
        }
    }

    /// The saved sidecars of these episodes' current downloads, by episode, each in the order taken up.
    package func savedSidecars(ofEpisodes ids: [Int64]) throws(StoreError) -> [Int64: [SidecarRecord]] {
        guard !ids.isEmpty else { return [:] }
        return try withConnection("reading saved chapters and transcripts") { connection throws(SQLiteError) in
            var records: [Int64: [SidecarRecord]] = [:]
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ ids[$0..<min($0 + 500, ids.count)] }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                for row in try connection.query(
                    """
                    SELECT \(sidecarColumns) FROM \(sidecarFrom)
                    WHERE s.episode_id IN (\(marks)) AND s.state = 'saved' AND e.download_id = s.download_id
                    ORDER BY s.id
                    """,
                    chunk.map { .integer($0) }
                ) {
                    let record = SidecarRecord(row: row)
                    records[record.episodeID, default: []].append(record)
                }
            }
            return records
        }
    }

    /// The sidecars tied to these downloads, whatever their state.
    package func sidecars(ofDownloads ids: [Int64]) throws(StoreError) -> [SidecarRecord] {
        guard !ids.isEmpty else { return [] }
        return try withConnection("reading chapters and transcripts") { connection throws(SQLiteError) in
            var records: [SidecarRecord] = []
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ ids[$0..<min($0 + 500, ids.count)] }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                records += try connection.query(
                    "SELECT \(sidecarColumns) FROM \(sidecarFrom) WHERE s.download_id IN (\(marks)) ORDER BY s.id",
                    chunk.map { .integer($0) }
                ).map(SidecarRecord.init(row:))
            }
            return records
        }
    }

    /// Downloads that sidecar rows are tied to but that are gone: their episodes' files went (a download row stays as
    /// long as its file is tracked, `clear --completed` included), and a stop came before the sidecars went too.
    package func sidecarDownloadsGone() throws(StoreError) -> [Int64] {
        try withConnection("looking for chapters and transcripts left behind") { connection throws(SQLiteError) in
            try connection.query(
                "SELECT DISTINCT download_id FROM sidecars WHERE download_id NOT IN (SELECT id FROM downloads)"
            ).compactMap { $0.int64(0) }
        }
    }

    /// Forgets sidecar rows (their files were dealt with by the caller).
    package func forgetSidecars(_ ids: [Int64]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try withConnection("forgetting chapters and transcripts") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for id in ids { _ = try connection.execute("DELETE FROM sidecars WHERE id = ?", [.integer(id)]) }
            }
        }
    }
}
