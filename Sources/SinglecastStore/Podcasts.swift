import SinglecastSupport

/// One row of the `podcasts` table: a subscription and what the last refresh learnt.
package struct PodcastRecord: Sendable, Hashable {
    package var id: Int64
    package var feedURL: String
    package var title: String
    package var author: String?
    package var description: String
    package var link: String?
    package var language: String?
    package var artworkURL: String?
    package var artworkPath: String?
    package var artworkETag: String?
    package var artworkLastModified: String?
    package var itunesID: Int64?
    package var authUser: String?
    package var authPassword: String?
    package var etag: String?
    package var lastModified: String?
    /// Unix milliseconds, like every time here.
    package var subscribedAt: Int64
    package var refreshedAt: Int64?
    package var succeededAt: Int64?
    package var nextRefreshAt: Int64?
    package var lastError: String?
    package var gone: Bool
    /// `off`, `all-new` or `latest:N`.
    package var autoDownload: String
    package var keep: Int?
    /// Items of the last good refresh left out because an earlier item had the same identity.
    package var duplicateItems: Int
    /// The podcast's own settings; `nil` uses the configured ones.
    package var nameTemplate: String?
    /// What `{podcast}` stands for in file names instead of the title.
    package var folder: String?
    /// Milliseconds between refreshes.
    package var refreshInterval: Int64?
    /// The podcast's own episode rules, in their stored form (`key = value` lines).
    package var rules: String?

    package init(feedURL: String, subscribedAt: Int64) {
        id = 0
        self.feedURL = feedURL
        title = ""
        author = nil
        description = ""
        link = nil
        language = nil
        artworkURL = nil
        artworkPath = nil
        artworkETag = nil
        artworkLastModified = nil
        itunesID = nil
        authUser = nil
        authPassword = nil
        etag = nil
        lastModified = nil
        self.subscribedAt = subscribedAt
        refreshedAt = nil
        succeededAt = nil
        nextRefreshAt = nil
        lastError = nil
        gone = false
        autoDownload = "off"
        keep = nil
        duplicateItems = 0
        nameTemplate = nil
        folder = nil
        refreshInterval = nil
        rules = nil
    }
}

/// One row of the `episodes` table.
package struct EpisodeRecord: Sendable, Hashable {
    package var id: Int64
    package var podcastID: Int64
    /// Stable across refreshes: guid, else link, else enclosure URL without its query plus title.
    package var identity: String
    package var guid: String?
    package var title: String
    package var description: String
    package var link: String?
    package var publishedAt: Int64?
    package var durationSeconds: Int?
    package var enclosureURL: String?
    package var enclosureType: String?
    package var enclosureLength: Int64?
    package var season: Int?
    package var episodeNumber: Int?
    package var chaptersURL: String?
    package var transcriptURL: String?
    package var integrity: String?
    /// What the feed offers to save beside the episode's file, in the order the daemon chose them.
    package var sidecarOffers: [SidecarOffer]
    package var firstSeenAt: Int64
    /// Position in the feed document when last seen (0 = first), to order undated episodes.
    package var feedOrder: Int
    package var isNew: Bool
    package var downloadID: Int64?
    /// `itunes:episodeType`: `full`, `trailer` or `bonus`.
    package var episodeType: String?
    /// When the listener marked the episode played (milliseconds since 1970).
    package var playedAt: Int64?
    /// Never deleted by a rule.
    package var pinned: Bool
    /// The episode's file was deleted, by a rule or on request, at this time and for this reason; it is not
    /// downloaded again unless asked for.
    package var fileDeletedAt: Int64?
    package var fileDeletedReason: String?
    /// The listener asked for it: `keep` and `delete_older_than` leave its file alone.
    package var requested: Bool

    package init(podcastID: Int64, identity: String, title: String, firstSeenAt: Int64) {
        id = 0
        self.podcastID = podcastID
        self.identity = identity
        guid = nil
        self.title = title
        description = ""
        link = nil
        publishedAt = nil
        durationSeconds = nil
        enclosureURL = nil
        enclosureType = nil
        enclosureLength = nil
        season = nil
        episodeNumber = nil
        chaptersURL = nil
        transcriptURL = nil
        integrity = nil
        sidecarOffers = []
        self.firstSeenAt = firstSeenAt
        feedOrder = 0
        isNew = true
        downloadID = nil
        episodeType = nil
        playedAt = nil
        pinned = false
        fileDeletedAt = nil
        fileDeletedReason = nil
        requested = false
    }
}

/// Which of an episode's fields a read fills in; the others read as empty.
package enum EpisodeFields: Sendable {
    case all
    /// Everything but the show notes, which can be kilobytes each: an enqueue of 10,000 episodes needs none.
    case withoutDescription
    /// What a list of episodes shows and the rules look at: title, dates, duration, enclosure URL, the
    /// listener's marks and the download.
    case listing

    fileprivate var columns: String {
        switch self {
        case .all: episodeColumns
        case .withoutDescription: episodeColumnsWithoutDescription
        case .listing: episodeListingColumns
        }
    }
}

/// Episode totals of one podcast.
package struct EpisodeCounts: Sendable, Hashable {
    package var total: Int
    package var new: Int

    package init(total: Int, new: Int) {
        self.total = total
        self.new = new
    }
}

private let podcastColumns = """
    id, feed_url, title, author, description, link, language, artwork_url, artwork_path, artwork_etag,
    artwork_last_modified, itunes_id, auth_user, auth_password, etag, last_modified, subscribed_at, refreshed_at,
    succeeded_at, next_refresh_at, last_error, gone, auto_download, keep, duplicate_items, name_template, folder,
    refresh_interval, rules
    """
private let podcastWritable = writableNames(podcastColumns)
private let insertPodcastSQL = """
    INSERT INTO podcasts (id, \(podcastWritable.joined(separator: ", "))) \
    VALUES (\(nextID("podcasts")), \(Array(repeating: "?", count: podcastWritable.count).joined(separator: ", ")))
    """
private let podcastByURLSQL = "SELECT \(podcastColumns) FROM podcasts WHERE feed_url = ?"
private let updatePodcastSQL = """
    UPDATE podcasts SET \(podcastWritable.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
    """

private let episodeColumns = """
    id, podcast_id, identity, guid, title, description, link, published_at, duration, enclosure_url, enclosure_type,
    enclosure_length, season, episode_number, chapters_url, transcript_url, integrity, first_seen_at, feed_order,
    is_new, download_id, episode_type, played_at, pinned, file_deleted_at, file_deleted_reason, requested,
    sidecar_offers
    """
/// The same columns in the same order, with an empty description.
private let episodeColumnsWithoutDescription = episodeColumns.replacing(", description,", with: ", '' AS description,")
/// The same columns in the same order, with only what a list of episodes shows and its rules look at: the rest
/// (show notes, links, guid) reads as empty or `NULL`.
private let episodeListingColumns = episodeColumns.split(separator: ",").map { column in
    let name = column.trimmingWhitespace()
    switch name {
    case "identity", "description": return "'' AS \(name)"
    case "guid", "link", "enclosure_type", "enclosure_length", "season", "episode_number", "chapters_url",
        "transcript_url", "integrity", "sidecar_offers":
        return "NULL AS \(name)"
    default: return name
    }
}.joined(separator: ", ")
private let episodeWritable = writableNames(episodeColumns)
/// Takes its id as the first parameter: a refresh reads ``nextEpisodeIDSQL`` once and counts up from it, where
/// working the id out in each `INSERT` opened and searched two more tables per episode.
private let insertEpisodeSQL = """
    INSERT INTO episodes (id, \(episodeWritable.joined(separator: ", "))) \
    VALUES (?, \(Array(repeating: "?", count: episodeWritable.count).joined(separator: ", ")))
    """
private let nextEpisodeIDSQL = "SELECT \(nextID("episodes"))"
private let updateEpisodeSQL = """
    UPDATE episodes SET \(episodeWritable.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
    """

/// Whether a podcast has any episode (from the `UNIQUE (podcast_id, identity)` index).
private let anyEpisodeSQL = "SELECT 1 FROM episodes WHERE podcast_id = ? LIMIT 1"
/// The stored episodes of a podcast among a refresh's batch of identities (``Store/refreshBatchSize`` of them).
private let knownEpisodesSQL = """
    SELECT \(episodeColumns) FROM episodes WHERE podcast_id = ? AND identity IN \
    (\(Array(repeating: "?", count: Store.refreshBatchSize).joined(separator: ", ")))
    """

/// An id past every row `table` has ever had (migration 5's `id_high_water`), so that no id is ever reused.
private func nextID(_ table: String) -> String {
    """
    (SELECT MAX((SELECT COALESCE(MAX(id), 0) FROM \(table)), \
    (SELECT COALESCE(MAX(value), 0) FROM id_high_water WHERE name = '\(table)')) + 1)
    """
}

/// The column names after `id`.
private func writableNames(_ columns: String) -> [String] {
    columns.split(separator: ",").dropFirst().map { String($0).trimmingWhitespace() }
}

extension PodcastRecord {
    fileprivate init(row: Row) {
        self.init(feedURL: row[1].string ?? "", subscribedAt: row[16].int64 ?? 0)
        id = row[0].int64 ?? 0
        title = row[2].string ?? ""
        author = row[3].string
        description = row[4].string ?? ""
        link = row[5].string
        language = row[6].string
        artworkURL = row[7].string
        artworkPath = row[8].string
        artworkETag = row[9].string
        artworkLastModified = row[10].string
        itunesID = row[11].int64
        authUser = row[12].string
        authPassword = row[13].string
        etag = row[14].string
        lastModified = row[15].string
        refreshedAt = row[17].int64
        succeededAt = row[18].int64
        nextRefreshAt = row[19].int64
        lastError = row[20].string
        gone = (row[21].int64 ?? 0) != 0
        autoDownload = row[22].string ?? "off"
        keep = row[23].int64.map { Int($0) }
        duplicateItems = Int(row[24].int64 ?? 0)
        nameTemplate = row[25].string
        folder = row[26].string
        refreshInterval = row[27].int64
        rules = row[28].string
    }

    fileprivate var columnValues: [SQLiteValue] {
        [
            .text(feedURL), .text(title), SQLiteValue(author), .text(description), SQLiteValue(link),
            SQLiteValue(language), SQLiteValue(artworkURL), SQLiteValue(artworkPath), SQLiteValue(artworkETag),
            SQLiteValue(artworkLastModified), SQLiteValue(itunesID), SQLiteValue(authUser), SQLiteValue(authPassword),
            SQLiteValue(etag), SQLiteValue(lastModified), .integer(subscribedAt), SQLiteValue(refreshedAt),
            SQLiteValue(succeededAt), SQLiteValue(nextRefreshAt), SQLiteValue(lastError), .integer(gone ? 1 : 0),
            .text(autoDownload), SQLiteValue(keep.map { Int64($0) }), .integer(Int64(duplicateItems)),
            SQLiteValue(nameTemplate), SQLiteValue(folder), SQLiteValue(refreshInterval), SQLiteValue(rules),
        ]
    }
}

extension EpisodeRecord {
    fileprivate init(columns row: some ResultColumns) {
        self.init(
            podcastID: row.int64(1) ?? 0,
            identity: row.string(2) ?? "",
            title: row.string(4) ?? "",
            firstSeenAt: row.int64(17) ?? 0
        )
        id = row.int64(0) ?? 0
        guid = row.string(3)
        description = row.string(5) ?? ""
        link = row.string(6)
        publishedAt = row.int64(7)
        durationSeconds = row.int64(8).map { Int($0) }
        enclosureURL = row.string(9)
        enclosureType = row.string(10)
        enclosureLength = row.int64(11)
        season = row.int64(12).map { Int($0) }
        episodeNumber = row.int64(13).map { Int($0) }
        chaptersURL = row.string(14)
        transcriptURL = row.string(15)
        integrity = row.string(16)
        feedOrder = Int(row.int64(18) ?? 0)
        isNew = (row.int64(19) ?? 0) != 0
        downloadID = row.int64(20)
        episodeType = row.string(21)
        playedAt = row.int64(22)
        pinned = (row.int64(23) ?? 0) != 0
        fileDeletedAt = row.int64(24)
        fileDeletedReason = row.string(25)
        requested = (row.int64(26) ?? 0) != 0
        sidecarOffers = SidecarOffer.decode(row.string(27))
    }

    fileprivate var columnValues: [SQLiteValue] {
        [
            .integer(podcastID), .text(identity), SQLiteValue(guid), .text(title), .text(description),
            SQLiteValue(link), SQLiteValue(publishedAt), SQLiteValue(durationSeconds.map { Int64($0) }),
            SQLiteValue(enclosureURL), SQLiteValue(enclosureType), SQLiteValue(enclosureLength),
            SQLiteValue(season.map { Int64($0) }), SQLiteValue(episodeNumber.map { Int64($0) }),
            SQLiteValue(chaptersURL), SQLiteValue(transcriptURL), SQLiteValue(integrity), .integer(firstSeenAt),
            .integer(Int64(feedOrder)), .integer(isNew ? 1 : 0), SQLiteValue(downloadID), SQLiteValue(episodeType),
            SQLiteValue(playedAt), .integer(pinned ? 1 : 0), SQLiteValue(fileDeletedAt),
            SQLiteValue(fileDeletedReason), .integer(requested ? 1 : 0),
            SQLiteValue(SidecarOffer.encode(sidecarOffers)),
        ]
    }
}

extension Store {
    /// Inserts a subscription; a feed URL already subscribed returns that podcast with `existing = true`.
    ///
    /// - Parameter durability: ``Durability/processCrash`` for a subscription of an OPML import, which syncs once at
    ///   its end (``syncCommitted()``) before it answers.
    package func insertPodcast(
        _ podcast: PodcastRecord,
        durability: Durability = .powerLoss
    ) throws(StoreError) -> (podcast: PodcastRecord, existing: Bool) {
        try withConnection("subscribing") { connection throws(SQLiteError) in
            try connection.transaction(durability) {
                () throws(SQLiteError) -> (podcast: PodcastRecord, existing: Bool) in
                // Both cached: an OPML import subscribes to a thousand feeds in a row.
                let found = try connection.withCachedStatement(podcastByURLSQL) {
                    (find) throws(SQLiteError) -> Row? in
                    try find.bind([.text(podcast.feedURL)])
                    return try find.step() ? find.row() : nil
                }
                if let found { return (PodcastRecord(row: found), true) }
                try connection.executeCached(insertPodcastSQL, podcast.columnValues)
                var inserted = podcast
                inserted.id = connection.lastInsertRowID
                return (inserted, false)
            }
        }
    }

    /// A page of podcast ids: a range of the primary key (`SEARCH podcasts USING INTEGER PRIMARY KEY (rowid>?)`, as
    /// `PodcastStoreTests` checks), so a page costs the same however many podcasts there are.
    package static let podcastPageSQL = "SELECT id FROM podcasts WHERE id > ? ORDER BY id LIMIT ?"

    /// The ids of the podcasts after `after` (all without it), ascending, at most `limit` (all without it).
    package func podcastIDs(after: Int64? = nil, limit: Int? = nil) throws(StoreError) -> [Int64] {
        try withConnection("listing podcasts") { connection throws(SQLiteError) in
            try connection.query(Self.podcastPageSQL, [.integer(after ?? .min), .integer(Int64(limit ?? -1))])
                .map { $0.int64(0) ?? 0 }
        }
    }

    /// Every subscription, by id.
    package func podcasts() throws(StoreError) -> [PodcastRecord] {
        try withConnection("listing podcasts") { connection throws(SQLiteError) in
            try connection.query("SELECT \(podcastColumns) FROM podcasts ORDER BY id").map(PodcastRecord.init(row:))
        }
    }

    /// Writes every field of a podcast.
    ///
    /// - Parameter durability: ``Durability/processCrash`` for bookkeeping a power cut may roll back, such as the
    ///   times of a refresh that found the feed unchanged.
    package func savePodcast(_ podcast: PodcastRecord, durability: Durability = .powerLoss) throws(StoreError) {
        try withConnection("saving a podcast") { connection throws(SQLiteError) in
            try connection.transaction(durability) { () throws(SQLiteError) in
                _ = try connection.executeCached(updatePodcastSQL, podcast.columnValues + [.integer(podcast.id)])
            }
        }
    }

    /// Writes every field of several podcasts in one transaction: the podcasts a refresh found unchanged, whose
    /// commits one by one were most of the store's work in a refresh of 1,000 feeds.
    package func savePodcasts(_ podcasts: [PodcastRecord], durability: Durability) throws(StoreError) {
        try withConnection("saving podcasts") { connection throws(SQLiteError) in
            try connection.transaction(durability) { () throws(SQLiteError) in
                try connection.withCachedStatement(updatePodcastSQL) { (update) throws(SQLiteError) in
                    for podcast in podcasts {
                        try update.bind(podcast.columnValues + [.integer(podcast.id)])
                        while try update.step() {}
                        update.reset()
                    }
                }
            }
        }
    }

    /// Removes a podcast and its episodes (downloads are the queue's business).
    package func deletePodcast(_ id: Int64) throws(StoreError) {
        try withConnection("removing a podcast") { connection throws(SQLiteError) in
            try connection.execute("DELETE FROM podcasts WHERE id = ?", [.integer(id)])
        }
    }

    /// Stores the outcome of a successful refresh in one transaction: the podcast's fields, every episode of
    /// the feed matched by identity (fields updated, first-seen time, new flag and download kept), and new ones
    /// inserted. Episodes that left the feed stay; of two with one identity the first is kept.
    ///
    /// `episodes` hands the feed's episodes, in feed order, to the closure it is given, a batch at a time, as it
    /// reads them; each batch is stored before the next is read, ``refreshBatchSize`` episodes per query. So a
    /// feed of 100,000 episodes is never in memory whole, neither as the caller's records nor as stored rows.
    ///
    /// - Parameters:
    ///   - podcast: The podcast's fields as the refresh found them.
    ///   - durability: ``Durability/processCrash`` when whoever is told about the refresh syncs first
    ///     (``syncCommitted()``), or no one is: a refresh rolled back by a power cut is fetched again.
    ///   - episodes: Produces the episodes; it runs on the store's thread, inside the transaction.
    /// - Returns: The ids of the episodes inserted by this refresh, in feed order.
    /// - Throws: ``StoreError``, or what `episodes` threw; either way nothing of the refresh is stored.
    package func applyRefresh(
        _ podcast: PodcastRecord,
        durability: Durability = .powerLoss,
        episodes produce: @Sendable (_ store: ([EpisodeRecord]) throws(SQLiteError) -> Void) throws -> Void
    ) throws -> [Int64] {
        var producerFailure: (any Error)?
        do {
            return try withConnection("saving a refresh") { connection throws(SQLiteError) in
                try connection.transaction(durability) { () throws(SQLiteError) -> [Int64] in
                    try connection.executeCached(updatePodcastSQL, podcast.columnValues + [.integer(podcast.id)])
                    // A podcast without episodes yet (a new subscription, each feed of an OPML import) has none to
                    // match: its episodes are only inserted, and `seen` drops the feed's own repeats.
                    let matching = try connection.withCachedStatement(anyEpisodeSQL) { (any) throws(SQLiteError) in
                        try any.bind([.integer(podcast.id)])
                        return try any.step()
                    }
                    var inserted: [Int64] = []
                    var seen: Set<String> = []
                    // Nothing else writes episodes inside this transaction.
                    var nextID = try connection.withCachedStatement(nextEpisodeIDSQL) {
                        (next) throws(SQLiteError) -> Int64 in
                        _ = try next.step()
                        return next.int64(0) ?? 1
                    }
                    // Prepared once for the daemon's life, not per refresh: an OPML import of 1,000 feeds spent a fifth
                    // of the store's thread parsing these statements (and compiling the triggers they fire) again for
                    // each feed, and before that, preparing them per episode was most of a 100,000-item subscription.
                    try connection.withCachedStatement(insertEpisodeSQL) { (insert) throws(SQLiteError) in
                        try connection.withCachedStatement(updateEpisodeSQL) { (update) throws(SQLiteError) in
                            do {
                                try produce { (episodes) throws(SQLiteError) in
                                    for start in stride(from: 0, to: episodes.count, by: Self.refreshBatchSize) {
                                        let batch = episodes[start..<min(start + Self.refreshBatchSize, episodes.count)]
                                            .filter { seen.insert($0.identity).inserted }
                                        try Self.apply(
                                            batch,
                                            of: podcast.id,
                                            matching: matching,
                                            inserting: &inserted,
                                            from: &nextID,
                                            with: (insert, update),
                                            connection
                                        )
                                    }
                                }
                            } catch let error as SQLiteError {
                                throw error
                            } catch {
                                // Rolls the refresh back; the caller gets its own error, not this one.
                                producerFailure = error
                                throw .misuse("the refresh's episodes could not be read: \(error)")
                            }
                        }
                    }
                    return inserted
                }
            }
        } catch {
            throw producerFailure ?? error
        }
    }

    /// How many episodes of a refresh are matched against the database with one query.
    package static let refreshBatchSize = 500

    /// Updates the stored episodes of one batch and inserts the new ones (appended to `inserted`).
    ///
    /// - Parameters:
    ///   - matching: Whether the podcast had episodes before this refresh; without, the batch is not looked up, as
    ///     none of it can be stored yet.
    ///   - nextID: The id the next inserted episode gets; counted up.
    private static func apply(
        _ batch: [EpisodeRecord],
        of podcastID: Int64,
        matching: Bool,
        inserting inserted: inout [Int64],
        from nextID: inout Int64,
        with statements: (insert: Statement, update: Statement),
        _ connection: Connection
    ) throws(SQLiteError) {
        guard !batch.isEmpty else { return }
        precondition(batch.count <= refreshBatchSize, "a batch is at most refreshBatchSize episodes")
        var known: [String: EpisodeRecord] = [:]
        if matching {
            // One statement for every batch: the identities a batch lacks are bound as NULL, which matches none.
            try connection.withCachedStatement(knownEpisodesSQL) { (lookup) throws(SQLiteError) in
                try lookup.bind(
                    [.integer(podcastID)] + batch.map { .text($0.identity) }
                        + Array(repeating: .null, count: refreshBatchSize - batch.count)
                )
                while try lookup.step() {
                    let episode = EpisodeRecord(columns: lookup)
                    known[episode.identity] = episode
                }
            }
        }
        for var episode in batch {
            episode.podcastID = podcastID
            if let existing = known[episode.identity] {
                episode.id = existing.id
                episode.firstSeenAt = existing.firstSeenAt
                episode.isNew = existing.isNew
                episode.downloadID = existing.downloadID
                // The listener's state, which no feed carries.
                episode.playedAt = existing.playedAt
                episode.pinned = existing.pinned
                episode.fileDeletedAt = existing.fileDeletedAt
                episode.fileDeletedReason = existing.fileDeletedReason
                episode.requested = existing.requested
                if episode != existing {
                    try statements.update.bind(episode.columnValues + [.integer(episode.id)])
                    while try statements.update.step() {}
                    statements.update.reset()
                }
            } else {
                try statements.insert.bind([.integer(nextID)] + episode.columnValues)
                while try statements.insert.step() {}
                statements.insert.reset()
                inserted.append(nextID)
                nextID += 1
            }
        }
    }

    /// A podcast's episodes, newest first (undated ones by their place in the feed).
    package func episodes(
        of podcastID: Int64,
        onlyNew: Bool = false,
        unplayed: Bool = false,
        limit: Int? = nil,
        fields: EpisodeFields = .all
    ) throws(StoreError)
        -> [EpisodeRecord]
    {
        try withConnection("listing episodes") { connection throws(SQLiteError) in
            // The order comes from the index episodes_by_date alone. Undated episodes come last: SQLite sorts NULL
            // below every value, so last in DESC order; spelling that out as `published_at IS NULL` would keep the
            // index from giving the order, and every `episodes --limit 50` would sort all the podcast's episodes.
            let ordered = try connection.query(
                """
                SELECT id FROM episodes WHERE podcast_id = ? \(onlyNew ? "AND is_new = 1" : "")
                \(unplayed ? "AND played_at IS NULL" : "")
                ORDER BY published_at DESC, feed_order, id LIMIT ?
                """,
                [.integer(podcastID), .integer(Int64(limit ?? -1))]
            ).map { $0.int64(0) ?? 0 }
            return try Self.episodes(ids: ordered, fields: fields, connection)
        }
    }

    /// New episodes of every podcast, newest first (undated ones last): the inbox.
    package func newEpisodes(limit: Int? = nil) throws(StoreError) -> [EpisodeRecord] {
        try withConnection("listing new episodes") { connection throws(SQLiteError) in
            try connection.query(
                """
                SELECT \(episodeColumnsWithoutDescription) FROM episodes WHERE is_new = 1
                ORDER BY published_at DESC, podcast_id, feed_order, id LIMIT ?
                """,
                [.integer(Int64(limit ?? -1))]
            ).map(EpisodeRecord.init(columns:))
        }
    }

    /// The episode a download was made for (the first linked, when podcasts share an enclosure) and its podcast's
    /// title; `nil` for a download by URL.
    package func episodeOfDownload(_ downloadID: Int64) throws(StoreError) -> (episode: EpisodeRecord, podcast: String)?
    {
        try withConnection("reading a download's episode") { connection throws(SQLiteError) in
            let linked = try connection.query(
                "SELECT id FROM episodes WHERE download_id = ? ORDER BY id LIMIT 1",
                [.integer(downloadID)]
            )
            guard let id = linked.first?[0].int64,
                let episode = try Self.episodes(ids: [id], fields: .withoutDescription, connection).first
            else { return nil }
            let title = try connection.query("SELECT title FROM podcasts WHERE id = ?", [.integer(episode.podcastID)])
            return (episode, title.first?[0].string ?? "")
        }
    }

    /// An episode, without show notes, and its podcast's title; `nil` when there is no such episode.
    package func episodeWithPodcast(_ id: Int64) throws(StoreError) -> (episode: EpisodeRecord, podcast: String)? {
        try withConnection("reading an episode") { connection throws(SQLiteError) in
            guard let episode = try Self.episodes(ids: [id], fields: .withoutDescription, connection).first else {
                return nil
            }
            let title = try connection.query("SELECT title FROM podcasts WHERE id = ?", [.integer(episode.podcastID)])
            return (episode, title.first?[0].string ?? "")
        }
    }

    /// Episodes by id, in the order asked; unknown ids are left out.
    package func episodes(ids: [Int64], fields: EpisodeFields = .all) throws(StoreError) -> [EpisodeRecord] {
        try withConnection("reading episodes") { connection throws(SQLiteError) in
            try Self.episodes(ids: ids, fields: fields, connection)
        }
    }

    /// How many ids one `IN (…)` lookup binds.
    private static let idsPerLookup = 500

    /// Episodes by id, in the order asked, read in id order: the table is stored by id, so each of its pages is
    /// read once however the ids are ordered (a podcast's 100,000 episodes in date order reread pages from disk
    /// when they were looked up in that order).
    private static func episodes(
        ids: [Int64],
        fields: EpisodeFields,
        _ connection: Connection
    ) throws(SQLiteError) -> [EpisodeRecord] {
        // Each asked position by id: the rows arrive in id order and are matched by walking this list alongside,
        // with no hashing (a dictionary of 100,000 records was a tenth of a listing's time).
        let wanted = ids.indices.sorted { ids[$0] != ids[$1] ? ids[$0] < ids[$1] : $0 < $1 }
        var unique: [Int64] = []
        unique.reserveCapacity(wanted.count)
        for position in wanted where unique.last != ids[position] { unique.append(ids[position]) }
        // Rows in id order, and for each asked position the row it gets (-1 for an unknown id). When every row is
        // asked for once, as in a listing, the rows are then moved into place rather than copied.
        var rows: [EpisodeRecord] = []
        rows.reserveCapacity(unique.count)
        var rowAt = [Int](repeating: -1, count: ids.count)
        var next = 0
        func lookUp(_ chunk: ArraySlice<Int64>, with statement: Statement) throws(SQLiteError) {
            try statement.bind(chunk.map { .integer($0) })
            while try statement.step() {
                rows.append(EpisodeRecord(columns: statement))
                let id = rows[rows.count - 1].id
                while next < wanted.count, ids[wanted[next]] < id { next += 1 }
                while next < wanted.count, ids[wanted[next]] == id {
                    rowAt[wanted[next]] = rows.count - 1
                    next += 1
                }
            }
            statement.reset()
        }
        func lookUpSQL(_ count: Int) -> String {
            let placeholders = Array(repeating: "?", count: count).joined(separator: ", ")
            return "SELECT \(fields.columns) FROM episodes WHERE id IN (\(placeholders)) ORDER BY id"
        }
        let whole = unique.count / idsPerLookup * idsPerLookup
        if whole > 0 {
            try connection.withReusableStatement(lookUpSQL(idsPerLookup)) { (statement) throws(SQLiteError) in
                for start in stride(from: 0, to: whole, by: idsPerLookup) {
                    try lookUp(unique[start..<start + idsPerLookup], with: statement)
                }
            }
        }
        if whole < unique.count {
            try connection.withReusableStatement(lookUpSQL(unique.count - whole)) {
                (statement) throws(SQLiteError) in try lookUp(unique[whole...], with: statement)
            }
        }
        guard rowAt.count == rows.count, !rowAt.contains(-1) else {
            return rowAt.compactMap { $0 < 0 ? nil : rows[$0] }
        }
        Self.arrange(&rows, rowAt)
        return rows
    }

    /// Puts `rows` in the order `rowAt` gives, each row asked for once: position p gets row `rowAt[p]`. The rows
    /// are swapped in place through a buffer pointer, which moves them; a copy of each record (or an array of them)
    /// retained and released every string it holds, a fifth of a 100,000-episode listing.
    private static func arrange(_ rows: inout [EpisodeRecord], _ rowAt: [Int]) {
        var done = [Bool](repeating: false, count: rows.count)
        rows.withUnsafeMutableBufferPointer { buffer in
            // Follow each cycle of the permutation, swapping along it.
            for start in buffer.indices where !done[start] {
                var position = start
                done[start] = true
                while !done[rowAt[position]] {
                    buffer.swapAt(position, rowAt[position])
                    position = rowAt[position]
                    done[position] = true
                }
            }
        }
    }

    /// Every episode that has a download, without show notes: what retention looks at.
    package func downloadedEpisodes() throws(StoreError) -> [EpisodeRecord] {
        try withConnection("listing downloaded episodes") { connection throws(SQLiteError) in
            // episodes_by_download holds only linked episodes, so 100,000 unlinked ones cost nothing here.
            try connection.withStatement(
                "SELECT \(episodeColumnsWithoutDescription) FROM episodes WHERE download_id IS NOT NULL"
            ) { (statement) throws(SQLiteError) in
                var records: [EpisodeRecord] = []
                while try statement.step() { records.append(EpisodeRecord(columns: statement)) }
                return records
            }
        }
    }

    /// A podcast's episode ids, newest first.
    package func episodeIDs(of podcastID: Int64) throws(StoreError) -> [Int64] {
        try withConnection("listing episodes") { connection throws(SQLiteError) in
            try connection.query(
                "SELECT id FROM episodes WHERE podcast_id = ? ORDER BY published_at DESC, feed_order, id",
                [.integer(podcastID)]
            ).map { $0.int64(0) ?? 0 }
        }
    }

    /// Marks episodes played at `at` (or unplayed with `nil`), in one transaction.
    ///
    /// - Returns: The episodes whose state changed; one played already keeps its first time.
    package func setPlayed(_ ids: [Int64], at: Int64?) throws(StoreError) -> [Int64] {
        let sql =
            at == nil
            ? "UPDATE episodes SET played_at = NULL WHERE id = ? AND played_at IS NOT NULL"
            : "UPDATE episodes SET played_at = ?, is_new = 0 WHERE id = ? AND played_at IS NULL"
        return try changing(ids, sql: sql, values: at.map { [.integer($0)] } ?? [], activity: "marking episodes")
    }

    /// Records that the listener asked for these episodes (see ``EpisodeRecord/requested``).
    package func setRequested(_ ids: [Int64]) throws(StoreError) {
        _ = try changing(
            ids,
            sql: "UPDATE episodes SET requested = 1 WHERE id = ?",
            values: [],
            activity: "marking episodes"
        )
    }

    /// Pins or unpins episodes, in one transaction; returns those whose state changed.
    package func setPinned(_ ids: [Int64], _ pinned: Bool) throws(StoreError) -> [Int64] {
        try changing(
            ids,
            sql: "UPDATE episodes SET pinned = ? WHERE id = ? AND pinned != ?1",
            values: [.integer(pinned ? 1 : 0)],
            activity: "pinning episodes"
        )
    }

    /// Runs `sql` (its last parameter the episode id) once per id in one transaction; returns the ids it changed.
    private func changing(
        _ ids: [Int64],
        sql: String,
        values: [SQLiteValue],
        activity: String
    ) throws(StoreError) -> [Int64] {
        try withConnection(activity) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                try connection.withCachedStatement(sql) { (statement) throws(SQLiteError) in
                    var changed: [Int64] = []
                    for id in Array(Set(ids)).sorted() {
                        try statement.bind(values + [.integer(id)])
                        while try statement.step() {}
                        statement.reset()
                        if connection.changes > 0 { changed.append(id) }
                    }
                    return changed
                }
            }
        }
    }

    /// Unlinks episodes from their downloads, recording that their files were deleted and why, in one transaction:
    /// the policies do not download such an episode again until it is asked for.
    ///
    /// An episode is unlinked only from the download named with it: one queued again meanwhile (`redownload`) keeps
    /// its new download.
    package func releaseEpisodeFiles(
        _ links: [(episode: Int64, download: Int64)],
        at: Int64,
        reason: String
    ) throws(StoreError) {
        guard !links.isEmpty else { return }
        try withConnection("unlinking episodes from their downloads") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                try Self.release(links, at: at, reason: reason, on: connection)
            }
        }
    }

    private static func release(
        _ links: [(episode: Int64, download: Int64)],
        at: Int64,
        reason: String,
        on connection: Connection
    ) throws(SQLiteError) {
        let sql = """
            UPDATE episodes SET download_id = NULL, file_deleted_at = ?, file_deleted_reason = ?
            WHERE id = ? AND download_id = ?
            """
        try connection.withCachedStatement(sql) { (update) throws(SQLiteError) in
            for link in links {
                try update.bind([.integer(at), .text(reason), .integer(link.episode), .integer(link.download)])
                while try update.step() {}
                update.reset()
            }
        }
    }

    /// An episode's file as a retention plan saw it: its download and the marks that decided its fate.
    package struct PlannedRelease: Sendable, Hashable {
        package var episode: Int64
        package var download: Int64
        package var pinned: Bool
        package var playedAt: Int64?
        package var requested: Bool

        package init(episode: Int64, download: Int64, pinned: Bool, playedAt: Int64?, requested: Bool) {
            self.episode = episode
            self.download = download
            self.pinned = pinned
            self.playedAt = playedAt
            self.requested = requested
        }

        package init(_ record: EpisodeRecord, download: Int64) {
            self.init(
                episode: record.id,
                download: download,
                pinned: record.pinned,
                playedAt: record.playedAt,
                requested: record.requested
            )
        }
    }

    /// What ``retireEpisodeFiles(_:at:reason:dispose:)`` did.
    package struct Retired<Disposed: Sendable>: Sendable {
        /// The episodes let go of their files.
        package var episodes: [Int64]
        /// Their downloads no other episode had: their files were disposed of and their rows deleted (a download
        /// whose file `dispose` kept is in neither list, and its episodes not in ``episodes``).
        package var downloads: [Int64]
        /// Downloads another episode still has: kept, with their files.
        package var shared: [Int64]
        /// What `dispose` returned.
        package var disposed: Disposed
    }

    /// Retention's deletion, checked and done in one transaction on the store's thread, so that nothing answered
    /// after the plan was made (a pin, an unplayed mark, a request, a `redownload` or `delete`) is overruled by it.
    ///
    /// An episode whose link or marks differ from `planned` is left alone (the next retention run plans again).
    /// For the rest, `dispose` is handed the downloads no other episode points at, to delete their files first, and
    /// returns what it did and the downloads whose files it refused to delete; then the other downloads' rows are
    /// deleted and their episodes unlinked, marked with `reason`. A refused file keeps its download and episodes, so
    /// it stays tracked.
    package func retireEpisodeFiles<Disposed: Sendable>(
        _ planned: [PlannedRelease],
        at: Int64,
        reason: String,
        dispose: @Sendable ([Int64]) -> (disposed: Disposed, kept: Set<Int64>)
    ) throws(StoreError) -> Retired<Disposed> {
        try withConnection("deleting episode files") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Retired<Disposed> in
                var current: [PlannedRelease] = []
                for plan in planned {
                    let rows = try connection.query(
                        """
                        SELECT e.pinned, e.played_at, e.requested FROM episodes e
                        JOIN downloads d ON d.id = e.download_id AND d.state = 'completed'
                        WHERE e.id = ? AND e.download_id = ?
                        """,
                        [.integer(plan.episode), .integer(plan.download)]
                    )
                    guard let row = rows.first else { continue }
                    let now = PlannedRelease(
                        episode: plan.episode,
                        download: plan.download,
                        pinned: (row[0].int64 ?? 0) != 0,
                        playedAt: row[1].int64,
                        requested: (row[2].int64 ?? 0) != 0
                    )
                    if now == plan { current.append(plan) }
                }
                let leaving = Set(current.map(\.episode))
                var shared: Set<Int64> = []
                for download in Set(current.map(\.download)) {
                    let holders = try connection.query(
                        "SELECT id FROM episodes WHERE download_id = ?",
                        [.integer(download)]
                    )
                    if holders.contains(where: { !leaving.contains($0[0].int64 ?? 0) }) { shared.insert(download) }
                }
                let candidates = Array(Set(current.map(\.download)).subtracting(shared)).sorted()
                // The files go first: a crash after this leaves rows whose files are gone, which the queue and
                // retention read as such, never a file that no row knows of.
                let (disposed, kept) = dispose(candidates)
                let owned = candidates.filter { !kept.contains($0) }
                current.removeAll { kept.contains($0.download) }
                try connection.withReusableStatement("DELETE FROM downloads WHERE id = ?") {
                    (delete) throws(SQLiteError) in
                    for id in owned {
                        try delete.bind([.integer(id)])
                        while try delete.step() {}
                        delete.reset()
                    }
                }
                try Self.release(current.map { ($0.episode, $0.download) }, at: at, reason: reason, on: connection)
                return Retired(
                    episodes: current.map(\.episode),
                    downloads: owned,
                    shared: shared.sorted(),
                    disposed: disposed
                )
            }
        }
    }

    /// Links episodes to their downloads (and marks them no longer new), in one transaction.
    package func setEpisodeDownloads(_ links: [(episode: Int64, download: Int64?)]) throws(StoreError) {
        guard !links.isEmpty else { return }
        try withConnection("linking episodes to downloads") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in try Self.link(links, on: connection) }
        }
    }

    /// The links inside a transaction the caller holds.
    static func link(_ links: [(episode: Int64, download: Int64?)], on connection: Connection) throws(SQLiteError) {
        guard !links.isEmpty else { return }
        // Linking a download clears a deleted file's mark: the episode was asked for again.
        let sql = """
            UPDATE episodes SET download_id = ?1, is_new = 0,
                file_deleted_at = IIF(?1 IS NULL, file_deleted_at, NULL),
                file_deleted_reason = IIF(?1 IS NULL, file_deleted_reason, NULL)
            WHERE id = ?2
            """
        try connection.withCachedStatement(sql) { (update) throws(SQLiteError) in
            for link in links {
                try update.bind([SQLiteValue(link.download), .integer(link.episode)])
                while try update.step() {}
                update.reset()
            }
        }
    }

    /// The enclosure `type` of an episode linked to the download, `nil` when none is (a plain `enqueue`) or the feed
    /// gave no type: what the download was announced as, for the media check at its completion.
    package func enclosureType(ofDownload download: Int64) throws(StoreError) -> String? {
        try withConnection("reading an episode's enclosure type") { connection throws(SQLiteError) in
            try connection.query(
                """
                SELECT enclosure_type FROM episodes
                WHERE download_id = ? AND enclosure_type IS NOT NULL AND enclosure_type != '' LIMIT 1
                """,
                [.integer(download)]
            ).first?[0].string
        }
    }

    /// Which of `downloads` an episode other than `exceptEpisodes` still points at: their files are shared and must
    /// stay when those episodes let go of them (two feeds can carry one enclosure URL, and share its download).
    package func downloadsReferenced(_ downloads: [Int64], exceptEpisodes: Set<Int64>) throws(StoreError) -> Set<Int64>
    {
        try withConnection("reading episode links") { connection throws(SQLiteError) in
            var referenced: Set<Int64> = []
            let unique = Array(Set(downloads))
            for start in stride(from: 0, to: unique.count, by: 500) {
                let chunk = unique[start..<min(start + 500, unique.count)]
                let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                for row in try connection.query(
                    "SELECT id, download_id FROM episodes WHERE download_id IN (\(placeholders))",
                    chunk.map { .integer($0) }
                ) where !exceptEpisodes.contains(row[0].int64 ?? 0) {
                    if let download = row[1].int64 { referenced.insert(download) }
                }
            }
            return referenced
        }
    }

    /// One podcast's episodes and new episodes, read from the `episodes_by_new` index alone.
    package func episodeCounts(of podcastID: Int64) throws(StoreError) -> EpisodeCounts {
        try withConnection("counting episodes") { connection throws(SQLiteError) in
            let row = try connection.queryCached(
                "SELECT COUNT(*), SUM(is_new) FROM episodes WHERE podcast_id = ?",
                [.integer(podcastID)]
            ).first
            return EpisodeCounts(total: Int(row?[0].int64 ?? 0), new: Int(row?[1].int64 ?? 0))
        }
    }

    /// The episode counts of a range of podcast ids: a range of the `episodes_by_new` index, which covers it (as
    /// `PodcastStoreTests` checks), so a page of podcasts is counted without reading the others' episodes.
    package static let episodeCountsSQL = """
        SELECT podcast_id, COUNT(*), SUM(is_new) FROM episodes WHERE podcast_id BETWEEN ? AND ? GROUP BY podcast_id
        """

    /// Total and new episodes of every podcast that has any, or of those whose ids lie in `podcastIDs`.
    package func episodeCounts(
        podcastIDs: ClosedRange<Int64> = Int64.min...Int64.max
    ) throws(StoreError) -> [Int64: EpisodeCounts] {
        try withConnection("counting episodes") { connection throws(SQLiteError) in
            var counts: [Int64: EpisodeCounts] = [:]
            for row in try connection.query(
                Self.episodeCountsSQL,
                [.integer(podcastIDs.lowerBound), .integer(podcastIDs.upperBound)]
            ) {
                counts[row[0].int64 ?? 0] = EpisodeCounts(
                    total: Int(row[1].int64 ?? 0),
                    new: Int(row[2].int64 ?? 0)
                )
            }
            return counts
        }
    }
}
