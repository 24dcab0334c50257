internal import CSQLite
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// One start of singlecastd, as recorded in the `runs` table.
package struct RunRecord: Sendable, Hashable {
    package var id: Int64
    /// Unix seconds.
    package var startedAt: Int64
    /// Unix seconds of a clean stop; `nil` while running or after a crash.
    package var stoppedAt: Int64?
    package var pid: Int32
    /// The singlecastd version that ran.
    package var version: String
    /// `/proc/sys/kernel/random/boot_id`, telling a crash from a reboot.
    package var bootID: String?

    package init(id: Int64, startedAt: Int64, stoppedAt: Int64?, pid: Int32, version: String, bootID: String?) {
        self.id = id
        self.startedAt = startedAt
        self.stoppedAt = stoppedAt
        self.pid = pid
        self.version = version
        self.bootID = bootID
    }
}

/// Numbers for `singlecastctl status` and the logs.
package struct StoreStatistics: Sendable, Hashable {
    package var schemaVersion: Int
    /// The main database file plus its `-wal` file, in bytes.
    package var sizeBytes: Int64
    /// Rows in the `runs` table.
    package var daemonStarts: Int
    /// Runs without a clean stop, not counting the current run.
    package var uncleanShutdowns: Int

    package init(schemaVersion: Int, sizeBytes: Int64, daemonStarts: Int, uncleanShutdowns: Int) {
        self.schemaVersion = schemaVersion
        self.sizeBytes = sizeBytes
        self.daemonStarts = daemonStarts
        self.uncleanShutdowns = uncleanShutdowns
    }
}

/// The daemon's SQLite database: the only owner of its ``Connection``.
///
/// Every SQL call runs inside this actor, which is why the connection can be opened `NOMUTEX` and why
/// only value types (``RunRecord``, ``StoreStatistics``) come out. Features that need SQL (the download
/// queue) add methods in extensions in this module and use ``withConnection(_:)``.
///
/// The actor runs on a thread of its own (``threadName``), not on Swift's cooperative pool: SQLite blocks,
/// and a commit waiting for `fsync` must not take one of the pool's few threads from the rest of the daemon.
package actor Store {
    /// The name of the thread every SQL call runs on.
    package static let threadName = "singlecast-db"
    private let executor = ThreadExecutor(name: threadName)
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The database file.
    package nonisolated let path: String
    /// `nil` after ``close()``.
    private var connection: Connection?
    /// The run ``recordStart(pid:version:bootID:at:)`` created, excluded from the unclean count.
    private var currentRunID: Int64?
    /// The highest `position` a download row was given, once an enqueue has read it; each enqueue gives the next
    /// ones. `MAX(position)` has no index to use (one would cost every save), so reading it for each enqueue walked
    /// the whole table: about 1 ms beside 20,000 downloads, most of an enqueue of one URL. Only this actor writes the
    /// table, and the two statements that write a position, the enqueue's insert and the save's update, raise it. A
    /// deleted row leaves it above the rows' maximum: a gap, which orders nothing differently.
    var highestDownloadPosition: Int64?
    /// What each use of the connection was for, in order, while ``recordUses()`` has them kept: each is a trip to the
    /// store's thread, which tests of a command's trips count.
    package private(set) var uses: [String]?

    /// Keeps the activity of every use of the connection from now on, in ``uses``.
    package func recordUses() { uses = [] }

    /// The linked SQLite library's version, such as "3.40.1".
    package static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// The schema version this build creates and understands.
    package static var latestSchemaVersion: Int { Migrations.latestVersion }

    /// Opens (creating if missing) the database at `path`, checks it, configures it and migrates it.
    ///
    /// The checks come *before* any write, so a database the store refuses is left byte for byte as it was:
    /// 1. open (the directory must exist; only the file is created);
    /// 2. refuse a write-protected file;
    /// 3. `PRAGMA quick_check`, unless the last run recorded in the file stopped cleanly (``wholeFileCheckIsDue(_:)``);
    ///    anything but "ok" is ``StoreError/Code/corrupt``, and a file that is not SQLite at all fails here with
    ///    ``StoreError/Code/notADatabase``;
    /// 4. refuse a `user_version` newer than the newest migration;
    /// 5. WAL (checked), `synchronous = FULL`, `foreign_keys = ON`;
    /// 6. pending migrations, each in its own `BEGIN IMMEDIATE` transaction.
    ///
    /// - Parameter path: The database file; its directory must already exist.
    /// - Throws: ``StoreError`` whose message names the path and the fix.
    package init(path: String) throws(StoreError) {
        self.path = path
        let connection: Connection
        do throws(SQLiteError) {
            connection = try Connection(path: path)
        } catch {
            throw StoreError(error, path: path, while: "opening it")
        }
        if connection.isReadOnly { throw StoreError.readOnly(path: path) }
        let problems: [String]
        let found: Int
        do throws(SQLiteError) {
            // A non-database fails at this first read with NOTADB.
            if try Self.wholeFileCheckIsDue(connection) {
                // quick_check is the O(N) subset of integrity_check: it skips index-content cross-checks but
                // still reads every page.
                problems = try connection.query("PRAGMA quick_check").compactMap { $0[0].string }
            } else {
                problems = ["ok"]
            }
            found = try problems == ["ok"] ? connection.userVersion() : 0
        } catch {
            throw StoreError(error, path: path, while: "checking it")
        }
        guard problems == ["ok"] else {
            throw StoreError.corrupt(path: path, problems: Array(problems.prefix(5)))
        }
        guard found <= Migrations.latestVersion else {
            throw StoreError.newerSchema(path: path, found: found, latest: Migrations.latestVersion)
        }
        do throws(SQLiteError) {
            try connection.configureForStore()
            try Migrations.apply(to: connection)
        } catch {
            throw StoreError(error, path: path, while: "configuring and migrating it")
        }
        self.connection = connection
    }

    /// Whether the start reads the whole file (`PRAGMA quick_check`) before using it.
    ///
    /// It reads every page: 4 s for a store of 1,000,000 episodes (313 MiB), thirty times the start-up budget. So it
    /// runs where damage is to be expected: on a file no run has stopped cleanly with (a new file, one from elsewhere)
    /// and after a run that did not stop cleanly (a power cut, a crash, `kill -9`), when a disk that lied about its
    /// flushes shows. After a clean stop the file is as the last commit left it, and the start only reads the schema
    /// and the last run, which still finds a file that is not SQLite or whose first pages are damaged.
    private static func wholeFileCheckIsDue(_ connection: Connection) throws(SQLiteError) -> Bool {
        guard
            try connection.scalar("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'runs'") != nil
        else { return true }
        let last = try connection.query("SELECT stopped_at FROM runs ORDER BY id DESC LIMIT 1").first
        return last?[0].int64 == nil
    }

    /// Runs `body` with the open connection, turning SQLite failures into ``StoreError``.
    ///
    /// For code in this module (and tests) that needs SQL the typed methods do not cover; the connection
    /// itself cannot leave because it is not `Sendable`.
    ///
    /// - Parameters:
    ///   - activity: A gerund phrase for error messages, such as "recording a run".
    ///   - body: The work; wrap writes that belong together in ``Connection/transaction(_:)``.
    /// - Throws: ``StoreError``; ``StoreError/Code/closed`` after ``close()``.
    package func withConnection<T: Sendable>(
        _ activity: String = "using it",
        _ body: (Connection) throws(SQLiteError) -> T
    ) throws(StoreError) -> T {
        guard let connection else { throw StoreError.closed(path: path) }
        uses?.append(activity)
        do throws(SQLiteError) {
            return try body(connection)
        } catch {
            throw StoreError(error, path: path, while: activity)
        }
    }

    /// Records the start of a daemon run.
    ///
    /// - Parameters:
    ///   - pid: The daemon's process ID.
    ///   - version: The daemon's version string.
    ///   - bootID: The kernel boot ID, if known.
    ///   - at: Unix seconds.
    /// - Returns: The new run, and the run before it if there was one (its `stoppedAt` is `nil` after a crash).
    package func recordStart(
        pid: Int32,
        version: String,
        bootID: String?,
        at: Int64
    ) throws(StoreError) -> (current: RunRecord, previous: RunRecord?) {
        let result = try withConnection("recording the start of a run") {
            (connection) throws(SQLiteError) -> (current: RunRecord, previous: RunRecord?) in
            try connection.transaction { () throws(SQLiteError) -> (current: RunRecord, previous: RunRecord?) in
                let previous = try connection.query(
                    "SELECT id, started_at, stopped_at, pid, version, boot_id FROM runs ORDER BY id DESC LIMIT 1"
                ).first.map(Self.run(from:))
                try connection.execute(
                    "INSERT INTO runs (started_at, stopped_at, pid, version, boot_id) VALUES (?, NULL, ?, ?, ?)",
                    [.integer(at), .integer(Int64(pid)), .text(version), SQLiteValue(bootID)]
                )
                let current = RunRecord(
                    id: connection.lastInsertRowID,
                    startedAt: at,
                    stoppedAt: nil,
                    pid: pid,
                    version: version,
                    bootID: bootID
                )
                return (current, previous)
            }
        }
        currentRunID = result.current.id
        return result
    }

    /// Marks a run as cleanly stopped.
    ///
    /// - Parameters:
    ///   - runID: The ``RunRecord/id`` from ``recordStart(pid:version:bootID:at:)``.
    ///   - at: Unix seconds.
    /// - Throws: ``StoreError`` with ``StoreError/Code/notFound`` when no run has that ID.
    package func recordCleanStop(runID: Int64, at: Int64) throws(StoreError) {
        let changed = try withConnection("recording a clean stop") { (connection) throws(SQLiteError) -> Int in
            try connection.execute("UPDATE runs SET stopped_at = ? WHERE id = ?", [.integer(at), .integer(runID)])
        }
        guard changed == 1 else {
            throw StoreError(
                code: .notFound,
                message: "No run with ID \(runID) in the database at \(path); cannot record its clean stop. "
                    + "This is a bug in the caller.",
                path: path
            )
        }
    }

    /// Schema version, size on disk and run counts.
    package func statistics() throws(StoreError) -> StoreStatistics {
        let excluded = currentRunID ?? -1  // rowids are positive, so -1 excludes nothing
        let (version, starts, unclean) = try withConnection("reading statistics") {
            (connection) throws(SQLiteError) -> (Int, Int, Int) in
            let counts = try connection.query(
                "SELECT count(*), count(*) FILTER (WHERE stopped_at IS NULL AND id != ?) FROM runs",
                [.integer(excluded)]
            )
            return (
                try connection.userVersion(),
                Int(counts.first?[0].int64 ?? 0),
                Int(counts.first?[1].int64 ?? 0)
            )
        }
        return StoreStatistics(
            schemaVersion: version,
            sizeBytes: Self.fileSize(path) + Self.fileSize(path + "-wal"),
            daemonStarts: starts,
            uncleanShutdowns: unclean
        )
    }

    /// Gives back the memory of SQLite's page cache, up to `cache_size` (2 MiB), as after a big refresh, whose last
    /// pages (those of the episode count that follows it) nothing is about to read again.
    package func releaseMemory() {
        connection?.releaseMemory()
    }

    /// A cheap round trip (`SELECT 1`) proving the connection is alive; the watchdog calls it.
    package func healthCheck() throws(StoreError) {
        let value = try withConnection("running the health check") { (connection) throws(SQLiteError) in
            try connection.scalar("SELECT 1")
        }
        guard value == .integer(1) else {
            throw StoreError(
                code: .sqlite,
                message: "The health check on the database at \(path) returned \(String(describing: value)) "
                    + "instead of 1. Restart singlecastd.",
                path: path
            )
        }
    }

    /// Closes the connection; later calls throw ``StoreError/Code/closed``. Calling it again does nothing.
    ///
    /// Closing the last connection checkpoints the WAL into the main file and removes `-wal`.
    ///
    /// - Throws: ``StoreError`` when SQLite refuses to close; the store then stays open.
    package func close() throws(StoreError) {
        guard let connection else { return }
        do throws(SQLiteError) {
            try connection.close()
        } catch {
            throw StoreError(error, path: path, while: "closing it")
        }
        self.connection = nil
    }

    private static func run(from row: Row) -> RunRecord {
        RunRecord(
            id: row[0].int64 ?? 0,
            startedAt: row[1].int64 ?? 0,
            stoppedAt: row[2].int64,
            pid: Int32(truncatingIfNeeded: row[3].int64 ?? 0),
            version: row[4].string ?? "",
            bootID: row[5].string
        )
    }

    /// The size of a file in bytes, or 0 when it does not exist (a `-wal` file comes and goes).
    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
