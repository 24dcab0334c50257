internal import CSQLite

/// Tells SQLite to copy text and blobs before the bind call returns.
///
/// Swift hands C a *temporary* pointer that dies when the call returns, so `SQLITE_STATIC` would leave
/// SQLite reading freed memory. The C macro is a cast of -1, which Swift cannot import.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
private let busyTimeoutMilliseconds: Int32 = 5000

/// SQLite's process-wide settings, made once before the first connection opens (which initializes SQLite).
///
/// Memory statistics off: SQLite otherwise takes a global mutex and updates counters around every allocation it
/// makes, a few percent of the store thread's time when a refresh inserts 100,000 episodes, for figures
/// (`sqlite3_memory_used`) that nothing here reads.
private let sqliteConfigured: Void = {
    _ = csqlite_disable_memory_statistics()
}()

/// A connection to one SQLite database file.
///
/// The connection is deliberately not `Sendable`: SQLite connections must not be used from two threads at
/// once, and it is opened with `SQLITE_OPEN_NOMUTEX` because exactly one actor (``Store``) owns it and
/// already serializes every call. Statements live only inside ``withStatement(_:_:_:)``; only value types
/// (``Row``, ``SQLiteValue``) leave it.
///
/// Opening sets extended result codes, a 5 s busy timeout and defensive mode; durability settings are in
/// ``configureForStore()``, which ``Store`` calls only after it has checked the file, so that a database it
/// refuses is never written to (switching a rollback-journal file to WAL rewrites its header).
package final class Connection {
    /// A statement ``withCachedStatement(_:_:)`` keeps prepared, marked while a caller has it.
    private final class CachedStatement {
        let raw: OpaquePointer
        var inUse = false
        init(_ raw: OpaquePointer) { self.raw = raw }
    }

    /// The path given to `sqlite3_open_v2`.
    package let path: String
    /// `nil` once closed; every entry point checks it through ``liveHandle()``.
    private var handle: OpaquePointer?
    /// Statements kept prepared between uses by ``withCachedStatement(_:_:)``, by their SQL; finalized on close.
    private var cachedStatements: [String: CachedStatement] = [:]

    /// Opens, creating if missing, the database file at `path`.
    ///
    /// SQLite opens lazily: a file that is not a database is only detected by the first statement.
    ///
    /// - Parameter path: The database file. Its directory must already exist.
    /// - Throws: ``SQLiteError`` with `SQLITE_CANTOPEN` and ``SQLiteError/systemErrno`` when the file cannot
    ///   be opened.
    package init(path: String) throws(SQLiteError) {
        self.path = path
        sqliteConfigured
        var db: OpaquePointer?
        // EXRESCODE makes even the open call report extended codes.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // Read the message first, then still close (GRDB):
            // > Whether or not an error occurs when it is opened, resources associated with the database
            // > connection handle should be released by passing it to sqlite3_close() when it is no longer
            // > required.
            let error =
                db.map { SQLiteError(connection: $0, code: rc, sql: nil) }
                ?? SQLiteError(code: rc, message: String(cString: sqlite3_errstr(rc)))
            sqlite3_close(db)
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        // Defensive mode forbids writable_schema and other ways SQL could corrupt the file on purpose.
        let defensive = csqlite_enable_defensive(db)
        guard defensive == SQLITE_OK else { throw SQLiteError(connection: db, code: defensive, sql: nil) }
    }

    deinit {
        for statement in cachedStatements.values { sqlite3_finalize(statement.raw) }
        // Fallback only: close_v2 defers the close until stray statements are finalized instead of leaking.
        if let handle { sqlite3_close_v2(handle) }
    }

    /// Whether ``close()`` has run successfully.
    package var isClosed: Bool { handle == nil }

    /// Closes the connection; later calls throw `SQLITE_MISUSE`. Calling it again does nothing.
    ///
    /// - Throws: ``SQLiteError`` with `SQLITE_BUSY` listing the SQL of unfinalized statements; the
    ///   connection then stays open (and ``deinit`` still releases it).
    package func close() throws(SQLiteError) {
        guard let db = handle else { return }
        // One in use stays: the close then fails with SQLITE_BUSY, naming it, and its user still resets it.
        cachedStatements = cachedStatements.filter { _, statement in
            if statement.inUse { return true }
            sqlite3_finalize(statement.raw)
            return false
        }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else {
            var error = SQLiteError(connection: db, code: rc, sql: nil)
            if rc & 0xFF == SQLITE_BUSY {
                var open: [String] = []
                var statement = sqlite3_next_stmt(db, nil)
                while let current = statement {
                    open.append(sqlite3_sql(current).map { String(cString: $0) } ?? "?")
                    statement = sqlite3_next_stmt(db, current)
                }
                error.message += "; unfinalized statements: \(open.joined(separator: " | "))"
            }
            throw error
        }
        handle = nil
    }

    /// Switches to WAL (and checks that it took), then sets `synchronous = FULL` and `foreign_keys = ON`.
    ///
    /// `synchronous = NORMAL` in WAL mode can lose the last commits on power loss, and an acknowledged
    /// enqueue must survive that. Foreign keys are per connection and off by default.
    ///
    /// - Throws: ``SQLiteError``, including when `journal_mode` reads back anything but `wal` (for example on
    ///   a file system without shared memory support).
    package func configureForStore() throws(SQLiteError) {
        let mode = try scalar("PRAGMA journal_mode = WAL")?.string?.lowercased()
        guard mode == "wal" else {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "PRAGMA journal_mode = WAL left the journal mode at '\(mode ?? "nothing")'",
                sql: "PRAGMA journal_mode = WAL"
            )
        }
        try execute("PRAGMA synchronous = FULL")
        try execute("PRAGMA foreign_keys = ON")
    }

    /// Whether SQLite opened the main database read-only (it silently does so for a write-protected file).
    package var isReadOnly: Bool {
        guard let handle else { return false }
        return sqlite3_db_readonly(handle, "main") == 1
    }

    /// Whether no transaction is open.
    package var isAutocommit: Bool {
        guard let handle else { return true }
        return sqlite3_get_autocommit(handle) != 0
    }

    /// Rows changed by the most recent `INSERT`, `UPDATE` or `DELETE`.
    package var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes64(handle))
    }

    /// The rowid of the most recent successful `INSERT`.
    package var lastInsertRowID: Int64 {
        guard let handle else { return 0 }
        return sqlite3_last_insert_rowid(handle)
    }

    /// Frees the page cache's unused pages (`sqlite3_db_release_memory`); the cache fills again as it is read.
    package func releaseMemory() {
        if let handle { sqlite3_db_release_memory(handle) }
    }

    /// Prepares one statement, binds `bindings`, runs `body`, and always finalizes the statement.
    ///
    /// The statement is invalid once `body` returns; keeping it is a programming error that traps.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement; values go in `?` parameters, never interpolated.
    ///   - bindings: One value per parameter, in order.
    ///   - body: Steps the statement and copies out what it needs.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` from preparing, binding or `body`, with the SQL attached; blank SQL is an
    ///   error rather than a crash.
    package func withStatement<T>(
        _ sql: String,
        _ bindings: [SQLiteValue] = [],
        _ body: (Statement) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        try withReusableStatement(sql) { (statement) throws(SQLiteError) -> T in
            try statement.bind(bindings)
            return try body(statement)
        }
    }

    /// Prepares one statement for a loop that binds, steps and resets it once per item, and always finalizes it.
    ///
    /// Preparing costs more than running a small `INSERT`: a batch of ten thousand rows spent most of its time
    /// parsing the same SQL again. `body` binds with ``Statement/bind(_:)`` before each run and calls
    /// ``Statement/reset()`` between runs.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement; values go in `?` parameters, never interpolated.
    ///   - body: Binds, steps and resets the statement as often as it needs.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` from preparing or `body`, with the SQL attached.
    package func withReusableStatement<T>(
        _ sql: String,
        _ body: (Statement) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        let raw = try prepare(sql, flags: 0)
        let statement = Statement(raw: raw, sql: sql)
        defer {
            statement.invalidate()
            sqlite3_finalize(raw)
        }
        return try body(statement)
    }

    private func prepare(_ sql: String, flags: Int32) throws(SQLiteError) -> OpaquePointer {
        let db = try liveHandle()
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(flags), &raw, nil)
        guard rc == SQLITE_OK else { throw SQLiteError(connection: db, code: rc, sql: sql) }
        // SQLite returns no statement for blank or comment-only SQL (SwiftPM force-unwrapped this).
        guard let raw else { throw .misuse("the SQL contains no statement", sql: sql) }
        return raw
    }

    /// ``withReusableStatement(_:_:)`` for a statement run again and again across calls: it stays prepared (reset,
    /// its bindings cleared) until the connection closes.
    ///
    /// For small, frequent writes whose SQL is a constant: a refresh of 1,000 unchanged feeds saves them a few at
    /// a time, and preparing the podcasts' `UPDATE` (thirty columns and the sync trigger it fires) for each few was
    /// much of the store's time in it (docs/ARCHITECTURE.md, Refreshing many feeds).
    package func withCachedStatement<T>(
        _ sql: String,
        _ body: (Statement) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        // One lookup of the SQL: a whole-row UPDATE's text is 600 bytes, and taking the statement out of the
        // dictionary and putting it back hashed it three times (about 2 % of the daemon's work in a small download).
        let cached = cachedStatements[sql]
        let raw: OpaquePointer
        var kept: CachedStatement?
        if let cached, !cached.inUse {
            raw = cached.raw
            kept = cached
        } else {
            // A nested use of SQL already in use prepares its own, finalized after.
            raw = try prepare(sql, flags: SQLITE_PREPARE_PERSISTENT)
            if cached == nil {
                kept = CachedStatement(raw)
                cachedStatements[sql] = kept
            }
        }
        kept?.inUse = true
        let statement = Statement(raw: raw, sql: sql)
        defer {
            statement.invalidate()
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
            if let kept, handle != nil {
                kept.inUse = false
            } else {
                if kept != nil { cachedStatements[sql] = nil }
                sqlite3_finalize(raw)
            }
        }
        return try body(statement)
    }

    /// Runs one statement to completion, discarding any rows.
    ///
    /// - Returns: ``changes`` after the statement, for `UPDATE`/`DELETE` callers that must check it.
    @discardableResult
    package func execute(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try withStatement(sql, bindings) { (statement) throws(SQLiteError) in
            while try statement.step() {}
        }
        return changes
    }

    /// ``execute(_:_:)`` through ``withCachedStatement(_:_:)``: for constant SQL run again and again.
    @discardableResult
    package func executeCached(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try withCachedStatement(sql) { (statement) throws(SQLiteError) in
            try statement.bind(bindings)
            while try statement.step() {}
        }
        return changes
    }

    /// Runs one statement and copies out every row.
    package func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> [Row] {
        try withStatement(sql, bindings) { (statement) throws(SQLiteError) -> [Row] in try Self.rows(of: statement) }
    }

    /// ``query(_:_:)`` through ``withCachedStatement(_:_:)``: for constant SQL run again and again, such as the
    /// reads each refreshed feed makes.
    package func queryCached(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> [Row] {
        try withCachedStatement(sql) { (statement) throws(SQLiteError) -> [Row] in
            try statement.bind(bindings)
            return try Self.rows(of: statement)
        }
    }

    private static func rows(of statement: Statement) throws(SQLiteError) -> [Row] {
        var rows: [Row] = []
        // The names are read once and shared by every row: read per row, they made two million strings for a
        // podcast's 100,000 episodes.
        var columns: [String]?
        while try statement.step() {
            let names = columns ?? (0..<statement.columnCount).map(statement.columnName)
            columns = names
            rows.append(Row(columns: names, values: (0..<names.count).map(statement.value)))
        }
        return rows
    }

    /// The first column of the first row, or `nil` when there is no row.
    package func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteValue? {
        try withStatement(sql, bindings) { (statement) throws(SQLiteError) -> SQLiteValue? in
            guard try statement.step(), statement.columnCount > 0 else { return nil }
            return statement.value(0)
        }
    }

    /// Runs several `;`-separated statements without bindings, such as a migration.
    ///
    /// Each statement is prepared, stepped and finalized in turn, so a failure names the statement that
    /// failed; earlier ones have already run (wrap the call in ``transaction(_:)``).
    package func executeScript(_ sql: String) throws(SQLiteError) {
        let db = try liveHandle()
        // withCString is `rethrows`, which would erase the error type; carry the failure out instead.
        var failure: SQLiteError?
        sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var raw: OpaquePointer?
                let rc = sqlite3_prepare_v2(db, current, -1, &raw, &next)
                guard rc == SQLITE_OK else {
                    failure = SQLiteError(connection: db, code: rc, sql: String(cString: current))
                    return
                }
                guard let raw else { continue }  // Trailing whitespace or a comment.
                defer { sqlite3_finalize(raw) }
                var step = sqlite3_step(raw)
                while step == SQLITE_ROW { step = sqlite3_step(raw) }
                guard step == SQLITE_DONE else {
                    let text = sqlite3_sql(raw).map { String(cString: $0) }
                    failure = SQLiteError(connection: db, code: step, sql: text)
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, committing on return and rolling back on any error.
    ///
    /// `IMMEDIATE` takes the write lock up front: in WAL mode a deferred transaction that reads and then
    /// writes can fail with `SQLITE_BUSY` at once, and the busy timeout does not help with that. Transactions
    /// do not nest; calling this inside another throws.
    ///
    /// - Returns: What `body` returns, after a successful `COMMIT`.
    /// - Throws: The error `body` threw (after the rollback), or ``SQLiteError`` from `BEGIN`/`COMMIT`.
    ///
    /// With ``Durability/processCrash`` the commit skips its fsync (`synchronous = NORMAL` for this one
    /// transaction): in WAL mode it still survives `kill -9`, and the next full commit makes it durable too.
    @discardableResult
    package func transaction<T>(
        _ durability: Durability = .powerLoss,
        _ body: () throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        // Cached: a refresh of 1,000 feeds runs thousands of small transactions, and parsing these four statements
        // again for each was a noticeable part of the store's thread.
        if durability == .processCrash { try executeCached("PRAGMA synchronous = NORMAL") }
        defer { if durability == .processCrash { _ = try? executeCached("PRAGMA synchronous = FULL") } }
        try executeCached("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            let result = try body()
            try executeCached("COMMIT")
            return result
        } catch {
            // > If certain kinds of errors occur within a transaction, the transaction may or may not be
            // > rolled back automatically.
            // So roll back only if SQLite has not already; a failed rollback must not hide the real error.
            if !isAutocommit { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// `PRAGMA user_version`, where ``Migrations`` records the schema version.
    package func userVersion() throws(SQLiteError) -> Int {
        Int(try scalar("PRAGMA user_version")?.int64 ?? 0)
    }

    /// Sets `PRAGMA user_version`; pragmas take no parameters, and an `Int` is safe to interpolate.
    package func setUserVersion(_ version: Int) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(Int32(version))")
    }

    /// The open handle, or `SQLITE_MISUSE` after ``close()``.
    private func liveHandle() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw .misuse("the connection to \(path) is closed") }
        return handle
    }
}

@available(*, unavailable)
extension Connection: Sendable {}

/// A prepared statement, valid only inside ``Connection/withStatement(_:_:_:)``.
///
/// Column indexes are zero-based as in SQLite's C API; parameters are bound by position through
/// ``bind(_:)``. Text and blob results are copied at once because SQLite's pointers die at the next
/// `step`, `reset` or `finalize`.
package final class Statement {
    /// `nil` once ``Connection/withStatement(_:_:_:)`` has finalized it.
    private var raw: OpaquePointer?
    /// The SQL this statement was prepared from, attached to every error.
    package let sql: String

    fileprivate init(raw: OpaquePointer, sql: String) {
        self.raw = raw
        self.sql = sql
    }

    fileprivate func invalidate() { raw = nil }

    /// The live statement; trapping here means a ``Statement`` escaped its `withStatement` scope.
    private var live: OpaquePointer {
        guard let raw else { preconditionFailure("Statement used after withStatement finalized it: \(sql)") }
        return raw
    }

    /// Binds one value per parameter, replacing earlier bindings.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) when the count differs from the statement's parameters, as
    ///   a silent mismatch would store NULLs (SQLite.swift asserts the same).
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        let raw = live
        let expected = Int(sqlite3_bind_parameter_count(raw))
        guard values.count == expected else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "the statement has \(expected) parameter(s) but \(values.count) value(s) were bound",
                sql: sql
            )
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)  // Parameters are 1-based.
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(raw, index)
            case .integer(let integer):
                rc = sqlite3_bind_int64(raw, index, integer)
            case .real(let real):
                rc = sqlite3_bind_double(raw, index, real)
            case .text(let text):
                let count = text.utf8.count
                guard count <= Int32.max else { throw tooBig(index) }
                // An explicit length keeps embedded NULs; withCString never yields a nil pointer, so an empty
                // string stays '' instead of becoming NULL.
                rc = text.withCString { sqlite3_bind_text(raw, index, $0, Int32(count), SQLITE_TRANSIENT) }
            case .blob(let bytes) where bytes.isEmpty:
                // An empty array has a nil base address, which sqlite3_bind_blob would store as NULL.
                rc = sqlite3_bind_zeroblob(raw, index, 0)
            case .blob(let bytes):
                guard bytes.count <= Int32.max else { throw tooBig(index) }
                rc = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(raw, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT)
                }
            }
            guard rc == SQLITE_OK else {
                throw SQLiteError(connection: sqlite3_db_handle(raw), code: rc, sql: sql)
            }
        }
    }

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is available, `false` when the statement is done.
    /// - Throws: ``SQLiteError`` for anything else, with SQLite's message and this statement's SQL.
    package func step() throws(SQLiteError) -> Bool {
        let raw = live
        let rc = sqlite3_step(raw)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(connection: sqlite3_db_handle(raw), code: rc, sql: sql)
        }
    }

    /// Rewinds the statement and clears its bindings so it can run again with new ones.
    package func reset() {
        // sqlite3_reset repeats the last step's error, which step() has already thrown.
        sqlite3_reset(live)
        sqlite3_clear_bindings(live)
    }

    /// The number of result columns.
    package var columnCount: Int { Int(sqlite3_column_count(live)) }

    /// The name of a result column (its `AS` alias when there is one).
    package func columnName(_ column: Int) -> String {
        sqlite3_column_name(live, Int32(column)).map { String(cString: $0) } ?? ""
    }

    /// Whether the column in the current row is `NULL`.
    package func isNull(_ column: Int) -> Bool {
        sqlite3_column_type(live, Int32(column)) == SQLITE_NULL
    }

    /// The column as an integer (SQLite converts other types), or `nil` when it is `NULL`.
    package func int64(_ column: Int) -> Int64? {
        isNull(column) ? nil : sqlite3_column_int64(live, Int32(column))
    }

    /// The column as a double (SQLite converts other types), or `nil` when it is `NULL`.
    package func double(_ column: Int) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(live, Int32(column))
    }

    /// The column as text, or `nil` when it is `NULL`.
    package func string(_ column: Int) -> String? {
        let index = Int32(column)
        // Check NULL first: String(cString:) on a NULL pointer crashes (SwiftPM's Row.string did).
        guard !isNull(column), let text = sqlite3_column_text(live, index) else { return nil }
        // Call column_bytes after column_text, as SQLite documents; the length keeps embedded NULs.
        let count = Int(sqlite3_column_bytes(live, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as bytes, or `nil` when it is `NULL`; an empty blob reads as `[]`.
    package func blob(_ column: Int) -> [UInt8]? {
        let index = Int32(column)
        guard !isNull(column) else { return nil }
        // > The return value from sqlite3_column_blob() for a zero-length BLOB is a NULL pointer.
        guard let bytes = sqlite3_column_blob(live, index) else { return [] }
        let count = Int(sqlite3_column_bytes(live, index))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The column in its stored type.
    package func value(_ column: Int) -> SQLiteValue {
        switch sqlite3_column_type(live, Int32(column)) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(live, Int32(column)))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(live, Int32(column)))
        case SQLITE_TEXT: return string(column).map { .text($0) } ?? .null
        case SQLITE_BLOB: return blob(column).map { .blob($0) } ?? .null
        default: return .null
        }
    }

    /// A copy of the current row.
    package func row() -> Row {
        let count = columnCount
        return Row(columns: (0..<count).map(columnName), values: (0..<count).map(value))
    }

    private func tooBig(_ index: Int32) -> SQLiteError {
        SQLiteError(code: SQLITE_TOOBIG, message: "the value for parameter \(index) is larger than 2 GiB", sql: sql)
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// How much a committed transaction must survive.
package enum Durability: Sendable {
    /// Synced to disk before the commit returns (`synchronous = FULL`): for anything a client is told.
    case powerLoss
    /// Survives the process dying at any moment, but a power cut may roll it back.
    case processCrash
}
