internal import CSQLite
import SinglecastSupport

/// One row of the `downloads` table: everything needed to resume a download after any restart.
package struct DownloadRecord: Sendable, Hashable {
    package enum State: String, Sendable, CaseIterable {
        case queued, active, paused, failed, completed
        /// Being removed: its partial file is deleted at the next start if the daemon dies first.
        case cancelled
    }

    /// The fields, in one box that copies share until one of them changes: the queue's table, its state machine's
    /// actions and the events each copy a record, and a copy retains one box instead of each of its 26 fields.
    private final class Box: @unchecked Sendable {  // mutated only while uniquely referenced (copy on write)
        // No runtime exclusivity check on each access: the record's own accessors are the only ones, and a change
        // goes through a setter after `makeUnique()`, whose caller holds the record exclusively already.
        @exclusivity(unchecked) var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields: Hashable {
        var id: Int64
        var url: String
        var finalURL: String?
        var directory: String
        var fileName: String
        var state: State
        var pauseReason: String?
        var priority: Int
        var position: Int64
        var bytesDone: Int64
        var bytesTotal: Int64?
        var etag: String?
        var lastModified: String?
        var attempts: Int
        var errorCode: String?
        var errorMessage: String?
        var errorHTTPStatus: Int?
        var nextAttemptAt: Int64?
        var addedAt: Int64
        var completedAt: Int64?
        var headers: [String]
        var authUser: String?
        var authPassword: String?
        var deletePartial: Bool
        var partialName: String?
        var listed: Bool
        var bypassesGate: Bool
    }

    private var box: Box

    /// Gives this record a box of its own before one of its fields changes.
    ///
    /// Fields change through setters, not `_modify` accessors: a `_modify` that yields through another needs more
    /// room than the caller lends a coroutine, so each change to a field allocated one from the heap (about 80 per
    /// small download).
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
    }

    package var id: Int64 {
        get { box.fields.id }
        set {
            makeUnique()
            box.fields.id = newValue
        }
    }
    package var url: String {
        get { box.fields.url }
        set {
            makeUnique()
            box.fields.url = newValue
        }
    }
    package var finalURL: String? {
        get { box.fields.finalURL }
        set {
            makeUnique()
            box.fields.finalURL = newValue
        }
    }
    package var directory: String {
        get { box.fields.directory }
        set {
            makeUnique()
            box.fields.directory = newValue
        }
    }
    package var fileName: String {
        get { box.fields.fileName }
        set {
            makeUnique()
            box.fields.fileName = newValue
        }
    }
    package var state: State {
        get { box.fields.state }
        set {
            makeUnique()
            box.fields.state = newValue
        }
    }
    package var pauseReason: String? {
        get { box.fields.pauseReason }
        set {
            makeUnique()
            box.fields.pauseReason = newValue
        }
    }
    package var priority: Int {
        get { box.fields.priority }
        set {
            makeUnique()
            box.fields.priority = newValue
        }
    }
    package var position: Int64 {
        get { box.fields.position }
        set {
            makeUnique()
            box.fields.position = newValue
        }
    }
    /// Bytes of the partial file known to be durable (the last checkpoint).
    package var bytesDone: Int64 {
        get { box.fields.bytesDone }
        set {
            makeUnique()
            box.fields.bytesDone = newValue
        }
    }
    package var bytesTotal: Int64? {
        get { box.fields.bytesTotal }
        set {
            makeUnique()
            box.fields.bytesTotal = newValue
        }
    }
    package var etag: String? {
        get { box.fields.etag }
        set {
            makeUnique()
            box.fields.etag = newValue
        }
    }
    package var lastModified: String? {
        get { box.fields.lastModified }
        set {
            makeUnique()
            box.fields.lastModified = newValue
        }
    }
    package var attempts: Int {
        get { box.fields.attempts }
        set {
            makeUnique()
            box.fields.attempts = newValue
        }
    }
    package var errorCode: String? {
        get { box.fields.errorCode }
        set {
            makeUnique()
            box.fields.errorCode = newValue
        }
    }
    package var errorMessage: String? {
        get { box.fields.errorMessage }
        set {
            makeUnique()
            box.fields.errorMessage = newValue
        }
    }
    package var errorHTTPStatus: Int? {
        get { box.fields.errorHTTPStatus }
        set {
            makeUnique()
            box.fields.errorHTTPStatus = newValue
        }
    }
    /// Unix milliseconds.
    package var nextAttemptAt: Int64? {
        get { box.fields.nextAttemptAt }
        set {
            makeUnique()
            box.fields.nextAttemptAt = newValue
        }
    }
    package var addedAt: Int64 {
        get { box.fields.addedAt }
        set {
            makeUnique()
            box.fields.addedAt = newValue
        }
    }
    package var completedAt: Int64? {
        get { box.fields.completedAt }
        set {
            makeUnique()
            box.fields.completedAt = newValue
        }
    }
    package var headers: [String] {
        get { box.fields.headers }
        set {
            makeUnique()
            box.fields.headers = newValue
        }
    }
    package var authUser: String? {
        get { box.fields.authUser }
        set {
            makeUnique()
            box.fields.authUser = newValue
        }
    }
    package var authPassword: String? {
        get { box.fields.authPassword }
        set {
            makeUnique()
            box.fields.authPassword = newValue
        }
    }
    package var deletePartial: Bool {
        get { box.fields.deletePartial }
        set {
            makeUnique()
            box.fields.deletePartial = newValue
        }
    }
    /// The partial file's name when it differs from `fileName + ".part"`: the final name changed at completion and
    /// the rename has not happened yet.
    package var partialName: String? {
        get { box.fields.partialName }
        set {
            makeUnique()
            box.fields.partialName = newValue
        }
    }
    /// `false` once `clear --completed` took a completed download off the list; the row stays while an episode
    /// still points at it.
    package var listed: Bool {
        get { box.fields.listed }
        set {
            makeUnique()
            box.fields.listed = newValue
        }
    }
    /// Queued with `--now`: starts outside the download windows and on a metered network.
    package var bypassesGate: Bool {
        get { box.fields.bypassesGate }
        set {
            makeUnique()
            box.fields.bypassesGate = newValue
        }
    }

    package init(
        id: Int64 = 0,
        url: String,
        directory: String,
        fileName: String,
        priority: Int = 0,
        position: Int64 = 0,
        addedAt: Int64,
        headers: [String] = [],
        authUser: String? = nil,
        authPassword: String? = nil
    ) {
        box = Box(
            Fields(
                id: id,
                url: url,
                finalURL: nil,
                directory: directory,
                fileName: fileName,
                state: .queued,
                pauseReason: nil,
                priority: priority,
                position: position,
                bytesDone: 0,
                bytesTotal: nil,
                etag: nil,
                lastModified: nil,
                attempts: 0,
                errorCode: nil,
                errorMessage: nil,
                errorHTTPStatus: nil,
                nextAttemptAt: nil,
                addedAt: addedAt,
                completedAt: nil,
                headers: headers,
                authUser: authUser,
                authPassword: authPassword,
                deletePartial: false,
                partialName: nil,
                listed: true,
                bypassesGate: false
            )
        )
    }

    package static func == (left: DownloadRecord, right: DownloadRecord) -> Bool {
        left.box === right.box || left.box.fields == right.box.fields
    }

    package func hash(into hasher: inout Hasher) { box.fields.hash(into: &hasher) }

    /// The final path of the file.
    package var path: String { Self.joined(directory, fileName) }
    /// Where the bytes are while the download runs.
    package var partialPath: String {
        if let partialName { return Self.joined(directory, partialName) }
        return Self.joined(directory, fileName, ".part")
    }

    /// `directory/name` (plus `suffix`) in one allocation: each `+` made a string of its own, and the queue, its
    /// table and every event ask for a record's paths several times per download.
    private static func joined(_ directory: String, _ name: String, _ suffix: String = "") -> String {
        var path = String()
        path.reserveCapacity(directory.utf8.count + 1 + name.utf8.count + suffix.utf8.count)
        path.append(directory)
        path.append("/")
        path.append(name)
        path.append(suffix)
        return path
    }
}

extension DownloadRecord: CustomReflectable {
    /// Its fields, as a plain struct's would show in test failures and `dump`, not its box.
    package var customMirror: Mirror {
        Mirror(self, children: Mirror(reflecting: box.fields).children, displayStyle: .struct)
    }
}

/// The result of inserting one download.
package struct EnqueueOutcome: Sendable, Hashable {
    package var record: DownloadRecord
    /// `true` when a live download of the same URL existed and is returned instead.
    package var existing: Bool

    package init(record: DownloadRecord, existing: Bool) {
        self.record = record
        self.existing = existing
    }
}

private let downloadColumns = """
    id, url, final_url, directory, file_name, state, pause_reason, priority, position, bytes_done, bytes_total,
    etag, last_modified, attempts, error_code, error_message, error_http_status, next_attempt_at, added_at,
    completed_at, headers, auth_user, auth_password, delete_partial, partial_name, listed, bypass_gate
    """

/// The columns after `id`, and the statements that write them; built once, not per save.
private let writableColumns = downloadColumns.split(separator: ",").dropFirst()
    .map { $0.trimmingWhitespace() }
private let insertDownloadSQL = """
    INSERT INTO downloads (\(writableColumns.joined(separator: ", "))) \
    VALUES (\(Array(repeating: "?", count: writableColumns.count).joined(separator: ", ")))
    """
/// An enqueue's insert: a URL with a live download (the `downloads_live_url` index) inserts nothing, and only
/// then is that download looked up, instead of a lookup before every insert.
private let enqueueDownloadSQL = """
    \(insertDownloadSQL) ON CONFLICT (url) WHERE state NOT IN ('completed', 'cancelled') DO NOTHING
    """
private let updateDownloadSQL = """
    UPDATE downloads SET \(writableColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
    """

extension DownloadRecord {
    fileprivate init(row: Row) {
        self.init(
            id: row[0].int64 ?? 0,
            url: row[1].string ?? "",
            directory: row[3].string ?? "",
            fileName: row[4].string ?? "",
            priority: Int(row[7].int64 ?? 0),
            position: row[8].int64 ?? 0,
            addedAt: row[18].int64 ?? 0
        )
        finalURL = row[2].string
        state = State(rawValue: row[5].string ?? "") ?? .queued
        pauseReason = row[6].string
        bytesDone = row[9].int64 ?? 0
        bytesTotal = row[10].int64
        etag = row[11].string
        lastModified = row[12].string
        attempts = Int(row[13].int64 ?? 0)
        errorCode = row[14].string
        errorMessage = row[15].string
        errorHTTPStatus = row[16].int64.map { Int($0) }
        nextAttemptAt = row[17].int64
        completedAt = row[19].int64
        let headerText = row[20].string ?? ""
        headers = headerText.isEmpty ? [] : headerText.split(separator: "\n").map(String.init)
        authUser = row[21].string
        authPassword = row[22].string
        deletePartial = (row[23].int64 ?? 0) != 0
        partialName = row[24].string
        listed = (row[25].int64 ?? 1) != 0
        bypassesGate = (row[26].int64 ?? 0) != 0
    }

    /// Values for every column after `id`, in ``downloadColumns`` order.
    fileprivate var columnValues: [SQLiteValue] {
        [
            .text(url), SQLiteValue(finalURL), .text(directory), .text(fileName), .text(state.rawValue),
            SQLiteValue(pauseReason), .integer(Int64(priority)), .integer(position), .integer(bytesDone),
            SQLiteValue(bytesTotal), SQLiteValue(etag), SQLiteValue(lastModified), .integer(Int64(attempts)),
            SQLiteValue(errorCode), SQLiteValue(errorMessage), SQLiteValue(errorHTTPStatus.map { Int64($0) }),
            SQLiteValue(nextAttemptAt), .integer(addedAt), SQLiteValue(completedAt),
            .text(headers.joined(separator: "\n")), SQLiteValue(authUser), SQLiteValue(authPassword),
            .integer(deletePartial ? 1 : 0), SQLiteValue(partialName), .integer(listed ? 1 : 0),
            .integer(bypassesGate ? 1 : 0),
        ]
    }
}

extension Store {
    /// Inserts new downloads in one transaction, in order, at the end of the queue.
    ///
    /// A URL that already has a live download (anything but completed or cancelled) is not inserted again;
    /// that download is returned with `existing = true`. Either every record is committed or none is.
    ///
    /// - Parameter episodes: For each record, the episode to link to the download it gets (new or existing), in the
    ///   same transaction: a crash cannot leave a queued episode unlinked, to be queued again as `name (2)`.
    package func enqueue(
        _ records: [DownloadRecord],
        linking episodes: [Int64?] = []
    ) throws(StoreError) -> [EnqueueOutcome] {
        precondition(episodes.isEmpty || episodes.count == records.count, "one episode (or nil) per record")
        let known = highestDownloadPosition
        let (outcomes, highest) = try withConnection("queueing downloads") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> ([EnqueueOutcome], Int64) in
                var position: Int64
                if let known {
                    position = known
                } else {
                    position = try connection.scalar("SELECT COALESCE(MAX(position), 0) FROM downloads")?.int64 ?? 0
                }
                // Two statements prepared once for the daemon's life, not twice per download.
                let live =
                    "SELECT \(downloadColumns) FROM downloads WHERE url = ? AND state NOT IN ('completed', 'cancelled')"
                return try connection.withCachedStatement(live) { (find) throws(SQLiteError) in
                    try connection.withCachedStatement(enqueueDownloadSQL) { (insert) throws(SQLiteError) in
                        var outcomes: [EnqueueOutcome] = []
                        for var record in records {
                            record.position = position + 1
                            try insert.bind(record.columnValues)
                            while try insert.step() {}
                            insert.reset()
                            if connection.changes == 1 {
                                position += 1
                                record.id = connection.lastInsertRowID
                                outcomes.append(EnqueueOutcome(record: record, existing: false))
                                continue
                            }
                            try find.bind([.text(record.url)])
                            let existing = try find.step() ? find.row() : nil
                            find.reset()
                            guard let existing else {
                                // Nothing inserted and no live download: only the live URL can conflict.
                                throw SQLiteError(
                                    code: SQLITE_CONSTRAINT,
                                    message: "download \(record.url) was not inserted"
                                )
                            }
                            outcomes.append(EnqueueOutcome(record: DownloadRecord(row: existing), existing: true))
                        }
                        let links = zip(episodes, outcomes).compactMap { episode, outcome in
                            episode.map { (episode: $0, download: Optional(outcome.record.id)) }
                        }
                        try Self.link(links, on: connection)
                        return (outcomes, position)
                    }
                }
            }
        }
        highestDownloadPosition = highest
        return outcomes
    }

    /// Every download, optionally only those in `state`, in id order.
    package func downloads(in state: DownloadRecord.State? = nil) throws(StoreError) -> [DownloadRecord] {
        try withConnection("listing downloads") { connection throws(SQLiteError) in
            let rows: [Row]
            if let state {
                rows = try connection.query(
                    "SELECT \(downloadColumns) FROM downloads WHERE state = ? ORDER BY id",
                    [.text(state.rawValue)]
                )
            } else {
                rows = try connection.query("SELECT \(downloadColumns) FROM downloads ORDER BY id")
            }
            return rows.map(DownloadRecord.init(row:))
        }
    }

    /// Writes every field of each record (matched by id) in one transaction.
    ///
    /// - Parameter durability: ``Durability/powerLoss`` (the default) for anything a client was or will be told;
    ///   ``Durability/processCrash`` for bookkeeping a power cut may roll back safely, such as progress.
    ///   - pendingHooks: Downloads whose `on_complete` program is due, recorded in the same transaction as their
    ///     completion, so that a crash before the program starts still runs it after the restart.
    package func save(
        _ records: [DownloadRecord],
        durability: Durability = .powerLoss,
        pendingHooks: [Int64] = []
    ) throws(StoreError) {
        guard !records.isEmpty else { return }
        try withConnection("saving downloads") { connection throws(SQLiteError) in
            try connection.transaction(durability) { () throws(SQLiteError) in
                try connection.withCachedStatement(updateDownloadSQL) { (update) throws(SQLiteError) in
                    for record in records {
                        try update.bind(record.columnValues + [.integer(record.id)])
                        while try update.step() {}
                        update.reset()
                    }
                }
                let insert = "INSERT OR IGNORE INTO pending_hooks (download_id) VALUES (?)"
                try connection.withCachedStatement(insert) { (statement) throws(SQLiteError) in
                    for id in pendingHooks {
                        try statement.bind([.integer(id)])
                        while try statement.step() {}
                        statement.reset()
                    }
                }
            }
        }
        // A `move` renumbers positions; none may pass the one the next enqueue counts on from.
        if let known = highestDownloadPosition, let saved = records.lazy.map(\.position).max(), saved > known {
            highestDownloadPosition = saved
        }
    }

    /// Downloads whose `on_complete` program is due, oldest first.
    package func pendingHooks() throws(StoreError) -> [Int64] {
        try withConnection("reading pending hooks") { connection throws(SQLiteError) in
            try connection.query("SELECT download_id FROM pending_hooks ORDER BY download_id").compactMap {
                $0[0].int64
            }
        }
    }

    /// Takes a download's pending hook: `true` when it was pending, and is not any more. Called just before the
    /// program starts, which makes it run at most once.
    package func takePendingHook(_ id: Int64) throws(StoreError) -> Bool {
        try withConnection("taking a pending hook") { connection throws(SQLiteError) in
            try connection.execute("DELETE FROM pending_hooks WHERE download_id = ?", [.integer(id)]) > 0
        }
    }

    /// Takes downloads off the list (`clear`): a row an episode still points at stays, unlisted, so that the
    /// episode keeps its file and its podcast's `keep` and `unsubscribe --delete-files` still cover it; the others
    /// are deleted. One transaction.
    ///
    /// - Returns: The ids kept as unlisted rows.
    package func clearDownloads(_ ids: [Int64]) throws(StoreError) -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return try withConnection("clearing downloads") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Set<Int64> in
                var kept: Set<Int64> = []
                let referenced = "SELECT 1 FROM episodes WHERE download_id = ? LIMIT 1"
                try connection.withReusableStatement(referenced) { (find) throws(SQLiteError) in
                    try connection.withReusableStatement("UPDATE downloads SET listed = 0 WHERE id = ?") {
                        (unlist) throws(SQLiteError) in
                        try connection.withReusableStatement("DELETE FROM downloads WHERE id = ?") {
                            (delete) throws(SQLiteError) in
                            for id in ids {
                                try find.bind([.integer(id)])
                                let isReferenced = try find.step()
                                find.reset()
                                let statement = isReferenced ? unlist : delete
                                try statement.bind([.integer(id)])
                                while try statement.step() {}
                                statement.reset()
                                if isReferenced { kept.insert(id) }
                            }
                        }
                    }
                }
                return kept
            }
        }
    }

    /// Forgets downloads (their files stay where they are).
    package func deleteDownloads(_ ids: [Int64]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try withConnection("removing downloads") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                try connection.withReusableStatement("DELETE FROM downloads WHERE id = ?") {
                    (delete) throws(SQLiteError) in
                    for id in ids {
                        try delete.bind([.integer(id)])
                        while try delete.step() {}
                        delete.reset()
                    }
                }
            }
        }
    }

    /// Forgets completed downloads whose files went (or were meant to stay where they are) and lets go every episode
    /// linked to them, in one transaction: a crash cannot leave an episode pointing at a download that is gone.
    /// The episodes are marked as having had their file deleted for `reason`, so the policies do not fetch them
    /// again by themselves.
    package func forgetDownloads(_ ids: [Int64], releasingEpisodesAt at: Int64, reason: String) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try withConnection("forgetting downloads") { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                let release = """
                    UPDATE episodes SET download_id = NULL, file_deleted_at = ?, file_deleted_reason = ?
                    WHERE download_id = ?
                    """
                try connection.withReusableStatement(release) { (unlink) throws(SQLiteError) in
                    try connection.withReusableStatement("DELETE FROM downloads WHERE id = ?") {
                        (delete) throws(SQLiteError) in
                        for id in ids {
                            for (statement, values) in [
                                (unlink, [.integer(at), .text(reason), .integer(id)]), (delete, [.integer(id)]),
                            ] as [(Statement, [SQLiteValue])] {
                                try statement.bind(values)
                                while try statement.step() {}
                                statement.reset()
                            }
                        }
                    }
                }
            }
        }
    }

    /// Start-up: episodes linked to a download that no longer exists (a cancelled one removed, or a crash between
    /// steps of an older version) let go of it, marked as deleted for `reason` like any episode whose download went.
    ///
    /// - Returns: How many episodes were repaired.
    package func releaseEpisodesOfMissingDownloads(at: Int64, reason: String) throws(StoreError) -> Int {
        try withConnection("repairing episode links") { connection throws(SQLiteError) in
            try connection.execute(
                """
                UPDATE episodes SET download_id = NULL, file_deleted_at = ?, file_deleted_reason = ?
                WHERE download_id IS NOT NULL AND download_id NOT IN (SELECT id FROM downloads)
                """,
                [.integer(at), .text(reason)]
            )
        }
    }
}
