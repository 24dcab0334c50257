import Foundation
import SinglecastStore
import Testing

@Suite("Store")
struct StoreTests {
    @Test("a fresh database is in WAL mode, fully migrated, synchronous FULL, with foreign keys on")
    func freshDatabase() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let store = try Store(path: path)
            #expect(store.path == path)
            let (mode, version, synchronous, foreignKeys) = try await store.withConnection {
                (connection) throws(SQLiteError) in
                (
                    try connection.scalar("PRAGMA journal_mode"),
                    try connection.userVersion(),
                    try connection.scalar("PRAGMA synchronous"),
                    try connection.scalar("PRAGMA foreign_keys")
                )
            }
            #expect(mode == "wal")
            #expect(version == Store.latestSchemaVersion)
            #expect(synchronous == 2)  // FULL
            #expect(foreignKeys == 1)
            try await store.healthCheck()
            let statistics = try await store.statistics()
            #expect(statistics.schemaVersion == Store.latestSchemaVersion)
            #expect(statistics.daemonStarts == 0)
            #expect(statistics.uncleanShutdowns == 0)
            #expect(statistics.sizeBytes > 0)
            try await store.close()
        }
    }

    /// SQL used to run on Swift's cooperative pool, which has one thread per core: two commits waiting for fsync
    /// stalled every other task of the daemon on this two-core machine.
    @Test("SQL runs on the store's own thread, not on the cooperative pool")
    func sqlRunsOnTheStoreThread() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/singlecast.db")
            let threads = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await store.withConnection { (connection) throws(SQLiteError) -> String in
                            _ = try connection.scalar("SELECT 1")
                            return Self.currentThreadName()
                        }
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(threads == ["singlecast-db"])
            try await store.close()
        }
    }

    /// The kernel's name for the calling thread, as `ps -L` shows it.
    private static func currentThreadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "unknown"
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the SQLite version and the schema version are reported")
    func versions() {
        #expect(Store.sqliteVersion.hasPrefix("3."))
        #expect(Store.latestSchemaVersion == Migrations.all.count)
        #expect(Store.latestSchemaVersion >= 1)
    }

    @Test("reopening is idempotent, runs survive, and the previous run and unclean count are reported")
    func runHistory() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"

            var store = try Store(path: path)
            let first = try await store.recordStart(pid: 100, version: "1.0.0", bootID: "boot-a", at: 1_000)
            #expect(first.previous == nil)
            #expect(
                first.current
                    == RunRecord(id: 1, startedAt: 1_000, stoppedAt: nil, pid: 100, version: "1.0.0", bootID: "boot-a")
            )
            #expect(try await store.statistics().uncleanShutdowns == 0)  // The current run does not count.
            try await store.close()  // No recordCleanStop: the first run "crashed".

            store = try Store(path: path)
            let second = try await store.recordStart(pid: 200, version: "1.0.1", bootID: nil, at: 2_000)
            #expect(second.previous == first.current)
            #expect(second.current.id == 2)
            #expect(second.current.bootID == nil)
            var statistics = try await store.statistics()
            #expect(statistics.daemonStarts == 2)
            #expect(statistics.uncleanShutdowns == 1)
            #expect(statistics.schemaVersion == Store.latestSchemaVersion)
            try await store.recordCleanStop(runID: second.current.id, at: 2_500)
            try await store.close()

            store = try Store(path: path)
            let third = try await store.recordStart(pid: 300, version: "1.0.1", bootID: "boot-b", at: 3_000)
            #expect(third.previous?.id == 2)
            #expect(third.previous?.stoppedAt == 2_500)
            statistics = try await store.statistics()
            #expect(statistics.daemonStarts == 3)
            #expect(statistics.uncleanShutdowns == 1)
            try await store.close()
        }
    }

    @Test("reopening an up-to-date database changes nothing")
    func reopenIsIdempotent() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            try await Store(path: path).close()
            let before = try #require(contents(of: path))
            for _ in 0..<3 {
                let store = try Store(path: path)
                #expect(try await store.statistics().schemaVersion == Store.latestSchemaVersion)
                try await store.close()
            }
            #expect(contents(of: path) == before)
        }
    }

    @Test("stopping an unknown run is reported as not found")
    func unknownRun() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/singlecast.db")
            let error = try await #require(throws: StoreError.self) {
                try await store.recordCleanStop(runID: 42, at: 1)
            }
            #expect(error.code == .notFound)
        }
    }

    @Test("close is idempotent and later calls throw")
    func closeStore() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/singlecast.db")
            try await store.close()
            try await store.close()
            for call in [
                { try await store.healthCheck() },
                { _ = try await store.statistics() },
                { _ = try await store.recordStart(pid: 1, version: "v", bootID: nil, at: 1) },
                { try await store.recordCleanStop(runID: 1, at: 1) },
            ] as [@Sendable () async throws -> Void] {
                let error = try await #require(throws: StoreError.self) { try await call() }
                #expect(error.code == .closed)
                #expect(error.path == store.path)
            }
        }
    }

    @Test("a newer schema is refused and the file is left untouched")
    func newerSchema() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            try await Store(path: path).close()
            let connection = try Connection(path: path)
            try connection.setUserVersion(999)
            try connection.close()
            let before = try #require(contents(of: path))

            let error = try #require(throws: StoreError.self) { try Store(path: path) }
            #expect(error.code == .newerSchema)
            #expect(error.message.contains("999"))
            #expect(error.message.contains(path))
            #expect(contents(of: path) == before)
        }
    }

    enum Garbage: String, CaseIterable {
        case randomBytes
        case text
        case tinyText
    }

    @Test("a file that is not SQLite is refused and left untouched", arguments: Garbage.allCases)
    func notADatabase(garbage: Garbage) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let bytes: [UInt8]
            switch garbage {
            case .randomBytes:
                var generator = SystemRandomNumberGenerator()
                bytes = (0..<8192).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            case .text:
                bytes = Array(String(repeating: "this is a podcast list, not a database\n", count: 200).utf8)
            case .tinyText:
                bytes = Array("hello\n".utf8)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let error = try #require(throws: StoreError.self) { try Store(path: path) }
            #expect(error.code == .notADatabase)
            #expect(error.sqliteCode.map { $0 & 0xFF } == 26)  // SQLITE_NOTADB
            #expect(error.message.contains(path))
            #expect(error.message.contains("never overwrites"))
            #expect(contents(of: path) == Data(bytes))
        }
    }

    @Test("a database with a damaged b-tree page is refused and left untouched")
    func corruptDatabase() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let store = try Store(path: path)
            try await store.withConnection { (connection) throws(SQLiteError) in
                try connection.transaction { () throws(SQLiteError) in
                    for n in 0..<2_000 {
                        try connection.execute(
                            "INSERT INTO runs (started_at, pid, version) VALUES (?, ?, ?)",
                            [.integer(Int64(n)), .integer(Int64(n)), .text(String(repeating: "v", count: 100))]
                        )
                    }
                }
            }
            try await store.close()  // Checkpoints the WAL into the main file.

            var bytes = try #require(contents(of: path))
            let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
            #expect(bytes.count > 4 * pageSize)
            // Page 2 is the root of `runs`; overwrite its b-tree header and cell pointers.
            for offset in pageSize..<(pageSize + 512) { bytes[offset] = 0xA5 }
            try bytes.write(to: URL(fileURLWithPath: path))

            let error = try #require(throws: StoreError.self) { try Store(path: path) }
            #expect([.corrupt, .notADatabase].contains(error.code))
            #expect(error.message.contains(path))
            #expect(contents(of: path) == bytes)
        }
    }

    @Test("a missing directory is reported with a clear message")
    func missingDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/does-not-exist/singlecast.db"
            let error = try #require(throws: StoreError.self) { try Store(path: path) }
            #expect(error.code == .cannotOpen)
            #expect(error.path == path)
            #expect(error.sqliteCode.map { $0 & 0xFF } == 14)  // SQLITE_CANTOPEN
            #expect(error.message.contains("\(directory)/does-not-exist does not exist"))
            #expect(!FileManager.default.fileExists(atPath: directory + "/does-not-exist"))
        }
    }

    @Test("a directory at the database path cannot be opened")
    func directoryAtPath() async throws {
        try await withTemporaryDirectory { directory in
            let error = try #require(throws: StoreError.self) { try Store(path: directory) }
            #expect(error.code == .cannotOpen)
            #expect(error.message.contains("is a directory"))
        }
    }

    @Test(
        "an unreadable directory is reported as cannot open",
        .enabled(if: !runningAsRoot, "root ignores file permissions")
    )
    func unreadableDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let locked = directory + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
            chmod(locked, 0)
            defer { chmod(locked, 0o700) }
            let error = try #require(throws: StoreError.self) { try Store(path: locked + "/singlecast.db") }
            #expect(error.code == .cannotOpen)
            #expect(error.message.contains("EACCES"))
        }
    }

    @Test(
        "a write-protected database is reported as read-only",
        .enabled(if: !runningAsRoot, "root ignores file permissions")
    )
    func writeProtectedFile() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            try await Store(path: path).close()
            chmod(path, 0o444)
            let error = try #require(throws: StoreError.self) { try Store(path: path) }
            #expect(error.code == .readOnly)
        }
    }

    @Test("errors carry stable codes and read as their message")
    func errorShape() {
        let error = StoreError(code: .newerSchema, message: "The message.", path: "/x.db")
        #expect(error.code.rawValue == "newer_schema")
        #expect(StoreError.Code.notADatabase.rawValue == "not_a_database")
        #expect(StoreError.Code.cannotOpen.rawValue == "cannot_open")
        #expect(StoreError.Code.readOnly.rawValue == "read_only")
        #expect("\(error)" == "The message.")
        #expect(error.localizedDescription == "The message.")
    }
}
