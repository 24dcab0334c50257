import Foundation
import SinglecastStore
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("versions are 1, 2, 3… in order")
    func contiguousVersions() {
        #expect(Migrations.all.map(\.version) == Array(1...Migrations.all.count))
        #expect(Migrations.latestVersion == Migrations.all.count)
    }

    @Test("the README and the protocol document name the schema version the store migrates to")
    func documentedVersion() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let protocolDocument = try String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        #expect(readme.contains("(schema \(Migrations.latestVersion), "))
        #expect(!readme.contains("(schema \(Migrations.latestVersion - 1), "))
        #expect(protocolDocument.contains("\"schema_version\":\(Migrations.latestVersion),"))
    }

    @Test("an empty file is migrated to the latest version")
    func fromEmptyFile() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let store = try Store(path: path)
            #expect(try await store.statistics().schemaVersion == Store.latestSchemaVersion)
            try await store.close()
        }
    }

    @Test("a database SQLite created at user_version 0 keeps its data and is migrated")
    func fromVersionZero() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let connection = try Connection(path: path)
            try connection.execute("CREATE TABLE unrelated (note TEXT)")
            try connection.execute("INSERT INTO unrelated VALUES ('kept')")
            #expect(try connection.userVersion() == 0)
            try connection.close()
            #expect(try #require(contents(of: path)).count > 0)

            let store = try Store(path: path)
            let (version, note) = try await store.withConnection { (connection) throws(SQLiteError) in
                (try connection.userVersion(), try connection.scalar("SELECT note FROM unrelated"))
            }
            #expect(version == Store.latestSchemaVersion)
            #expect(note == "kept")
            try await store.close()
        }
    }

    @Test("each older schema version is migrated to the latest", arguments: 0..<Migrations.latestVersion)
    func fromPreviousVersion(version: Int) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let connection = try configuredConnection(path)
            #expect(
                try Migrations.apply(to: connection, upTo: version) == Array(stride(from: 1, through: version, by: 1))
            )
            #expect(try connection.userVersion() == version)
            try connection.close()

            let store = try Store(path: path)
            #expect(try await store.statistics().schemaVersion == Store.latestSchemaVersion)
            try await store.close()
        }
    }

    @Test("applying migrations twice does nothing the second time")
    func idempotent() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/singlecast.db")
            #expect(try Migrations.apply(to: connection) == Array(1...Migrations.latestVersion))
            #expect(try Migrations.apply(to: connection) == [])
        }
    }

    @Test("migration 4 keeps every download and never hands out an id a removed download or an episode had")
    func downloadIDsAreNotReused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let connection = try configuredConnection(path)
            try Migrations.apply(to: connection, upTo: 3)
            for id in 1...4 {
                try connection.execute(
                    """
                    INSERT INTO downloads (id, url, directory, file_name, state, position, added_at)
                    VALUES (?, ?, '/srv/d', ?, 'queued', ?, 0)
                    """,
                    [.integer(Int64(id)), .text("https://a/\(id)"), .text("\(id).mp3"), .integer(Int64(id))]
                )
            }
            try connection.execute("DELETE FROM downloads WHERE id = 4")
            try connection.execute("INSERT INTO podcasts (id, feed_url, subscribed_at) VALUES (1, 'https://a/feed', 0)")
            try connection.execute(
                "INSERT INTO episodes (podcast_id, identity, title, first_seen_at, download_id) VALUES (1, 'e', 'E', 0, 3)"
            )
            try connection.close()

            let store = try Store(path: path)
            #expect(try await store.downloads().map(\.url) == ["https://a/1", "https://a/2", "https://a/3"])
            #expect(try await store.downloads().map(\.id) == [1, 2, 3])
            try await store.deleteDownloads([3])
            // Id 3 is gone, but an episode still names it; 4 was freed before the migration and cannot be known.
            let fresh = DownloadRecord(url: "https://a/new", directory: "/srv/d", fileName: "new.mp3", addedAt: 0)
            #expect(try await store.enqueue([fresh]).map(\.record.id) == [4])
            try await store.deleteDownloads([4])
            #expect(try await store.enqueue([fresh]).map(\.record.id) == [5])
            try await store.close()
        }
    }

    @Test("no insert, update or delete of any table builds a temporary table, its triggers' included")
    func writesOpenNoTemporaryTable() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/singlecast.db")
            try Migrations.apply(to: connection)
            let tables = try connection.query(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).compactMap { $0[0].string }
            #expect(tables.contains("downloads") && tables.contains("sidecars") && tables.contains("sync_outbox"))
            for table in tables {
                let columns = try connection.query("SELECT name FROM pragma_table_info(?)", [.text(table)])
                    .compactMap { $0[0].string }
                let writes = [
                    (
                        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
                            + "(\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))",
                        columns.count
                    ),
                    (
                        "UPDATE \(table) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE rowid = ?",
                        columns.count + 1
                    ),
                    ("DELETE FROM \(table) WHERE rowid = ?", 1),
                ]
                for (write, parameters) in writes {
                    // EXPLAIN lists the statement's program and each trigger program it may run.
                    let bindings = [SQLiteValue](repeating: .null, count: parameters)
                    let opcodes = try connection.query("EXPLAIN \(write)", bindings).compactMap { $0[1].string }
                    let buildsTemporaryTable = opcodes.contains("OpenEphemeral")
                    #expect(!buildsTemporaryTable, "\(write)")
                }
            }
        }
    }

    @Test("migration 16 keeps every row, index and trigger, and hands out no id twice")
    func rebuiltTablesKeepRowsAndIDs() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            let connection = try configuredConnection(path)
            try Migrations.apply(to: connection, upTo: 15)
            try connection.execute("INSERT INTO podcasts (id, feed_url, subscribed_at) VALUES (1, 'https://a/feed', 0)")
            try connection.execute(
                """
                INSERT INTO episodes (id, podcast_id, identity, title, first_seen_at, download_id, sidecar_offers)
                VALUES (1, 1, 'e', 'E', 0, 2, 'chapters')
                """
            )
            for id in 1...3 {
                try connection.execute(
                    """
                    INSERT INTO downloads (id, url, directory, file_name, state, position, added_at, partial_name,
                        bypass_gate)
                    VALUES (?, ?, '/srv/d', ?, 'queued', ?, 0, 'p.part', 1)
                    """,
                    [.integer(Int64(id)), .text("https://a/\(id)"), .text("\(id).mp3"), .integer(Int64(id))]
                )
            }
            try connection.execute("DELETE FROM downloads WHERE id = 3")
            try connection.execute("INSERT INTO sync_state (name, value) VALUES ('recording', 1)")
            try connection.execute("INSERT INTO podcasts (id, feed_url, subscribed_at) VALUES (2, 'https://b/feed', 0)")
            try connection.execute("DELETE FROM sync_outbox")
            try connection.execute(
                """
                INSERT INTO sidecars (id, episode_id, download_id, kind, format, mime_type, url, state)
                VALUES (5, 1, 2, 'chapters', 'json', 'application/json+chapters', 'https://a/c.json', 'saved')
                """
            )
            let before = try snapshot(connection)
            #expect(try Migrations.apply(to: connection) == [16])
            #expect(try snapshot(connection) == before)
            #expect(try connection.query("PRAGMA foreign_key_check").isEmpty)

            // Past every id given, whether or not its row is left; the triggers still record.
            try connection.execute(
                """
                INSERT INTO downloads (url, directory, file_name, state, position, added_at)
                VALUES ('https://a/4', '/srv/d', '4.mp3', 'queued', 4, 0)
                """
            )
            #expect(try connection.scalar("SELECT MAX(id) FROM downloads")?.int64 == 4)
            try connection.execute("INSERT INTO podcasts (id, feed_url, subscribed_at) VALUES (3, 'https://c/feed', 0)")
            let outbox = try connection.query("SELECT id, kind FROM sync_outbox")
            #expect(outbox.map { "\($0[0].int64 ?? 0) \($0[1].string ?? "")" } == ["2 add"])
            try connection.execute("UPDATE downloads SET state = 'completed' WHERE id = 2")
            #expect(try connection.scalar("SELECT episode_id FROM sidecar_offers_pending")?.int64 == 1)
            // Noted once, however often it changes.
            try connection.execute("UPDATE downloads SET state = 'queued' WHERE id = 2")
            try connection.execute("UPDATE downloads SET state = 'completed' WHERE id = 2")
            #expect(try connection.scalar("SELECT COUNT(*) FROM sidecar_offers_pending")?.int64 == 1)
            #expect(throws: SQLiteError.self) {
                try connection.execute("UPDATE downloads SET state = 'lost' WHERE id = 2")
            }
        }
    }

    /// Every row of the rebuilt tables, the names of every index and trigger, and the ids handed out so far.
    private func snapshot(_ connection: Connection) throws -> [String] {
        var lines: [String] = []
        for table in ["downloads", "sync_outbox", "sidecars", "sqlite_sequence"] {
            for row in try connection.query("SELECT * FROM \(table) ORDER BY 1") {
                lines.append(table + ": " + row.values.map { "\($0)" }.joined(separator: "|"))
            }
        }
        let schema = "SELECT type, name, tbl_name FROM sqlite_schema WHERE type IN ('index', 'trigger') ORDER BY 2"
        lines += try connection.query(schema).map { row in row.values.map { "\($0)" }.joined(separator: " ") }
        return lines
    }

    @Test("migration 1 creates the runs table with the documented columns")
    func runsTable() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/singlecast.db")
            try Migrations.apply(to: connection, upTo: 1)
            let columns = try connection.query("SELECT name, type, \"notnull\", pk FROM pragma_table_info('runs')")
            #expect(columns.map { $0[0] } == ["id", "started_at", "stopped_at", "pid", "version", "boot_id"])
            #expect(columns.map { $0[1] } == ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "TEXT", "TEXT"])
            #expect(columns.map { $0[2] } == [0, 1, 0, 1, 1, 0])
            #expect(columns.map { $0[3] } == [1, 0, 0, 0, 0, 0])
        }
    }
}
