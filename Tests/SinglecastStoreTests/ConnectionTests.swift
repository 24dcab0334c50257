import Foundation
import SinglecastStore
import Testing

@Suite("Connection and Statement")
struct ConnectionTests {
    @Test("a cached statement runs again with new bindings, a nested use of it prepares its own, and close succeeds")
    func cachedStatement() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT)")
            let insert = "INSERT INTO t (id, value) VALUES (?, ?)"
            for id in 1...3 {
                try connection.withCachedStatement(insert) { (statement) throws(SQLiteError) in
                    try statement.bind([.integer(Int64(id)), .text("v\(id)")])
                    while try statement.step() {}
                    if id == 2 {
                        // The same SQL while the cached statement is in use: one of its own.
                        try connection.withCachedStatement(insert) { (nested) throws(SQLiteError) in
                            try nested.bind([.integer(20), .text("nested")])
                            while try nested.step() {}
                        }
                    }
                }
            }
            // A failing run leaves the statement reset for the next one.
            #expect(throws: SQLiteError.self) {
                try connection.withCachedStatement(insert) { (statement) throws(SQLiteError) in
                    try statement.bind([.integer(1), .text("duplicate")])
                    while try statement.step() {}
                }
            }
            try connection.withCachedStatement(insert) { (statement) throws(SQLiteError) in
                try statement.bind([.integer(4), .text("v4")])
                while try statement.step() {}
            }
            let read = try connection.query("SELECT id, value FROM t ORDER BY id")
            #expect(read.map { $0[0].int64 } == [1, 2, 3, 4, 20])
            #expect(read.map { $0[1].string } == ["v1", "v2", "v3", "v4", "nested"])
            // Closing finalizes what the cache holds: an unfinalized statement would make it fail.
            try connection.close()
            #expect(connection.isClosed)
        }
    }

    @Test("text round-trips, including Unicode, the empty string and embedded NUL")
    func textRoundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT)")
            let samples = ["plain", "", "Grüße, 世界 🎧 — naïve café", "a\u{0}b", String(repeating: "x", count: 100_000)]
            for sample in samples {
                try connection.execute("INSERT INTO t (value) VALUES (?)", [.text(sample)])
            }
            let read = try connection.query("SELECT value, typeof(value) FROM t ORDER BY id")
            #expect(read.map { $0[0].string } == samples)
            #expect(read.allSatisfy { $0[1] == "text" })
        }
    }

    @Test("integers, reals and NULL read back in their stored types")
    func scalarTypes() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            let row = try #require(
                try connection.query(
                    "SELECT ? AS big, ? AS small, ? AS real, ? AS absent",
                    [.integer(.max), .integer(.min), .real(0.25), .null]
                ).first
            )
            #expect(row.columns == ["big", "small", "real", "absent"])
            #expect(row["big"] == .integer(.max))
            #expect(row["small"] == .integer(.min))
            #expect(row["real"] == .real(0.25))
            #expect(row["absent"] == .null)
            #expect(row["missing"] == nil)

            try connection.withStatement("SELECT NULL, 7") { (statement) throws(SQLiteError) in
                #expect(try statement.step())
                #expect(statement.isNull(0))
                #expect(statement.string(0) == nil)
                #expect(statement.blob(0) == nil)
                #expect(statement.int64(0) == nil)
                #expect(statement.double(0) == nil)
                #expect(statement.int64(1) == 7)
                #expect(try !statement.step())
            }
        }
    }

    @Test("an empty blob is stored as a blob, not NULL, and reads back empty")
    func emptyBlob() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, data BLOB)")
            try connection.execute("INSERT INTO t (data) VALUES (?), (?)", [.blob([]), .blob([0, 1, 255])])
            let rows = try connection.query("SELECT data, typeof(data), length(data) FROM t ORDER BY id")
            #expect(rows.map { $0[1] } == ["blob", "blob"])
            #expect(rows.map { $0[0] } == [.blob([]), .blob([0, 1, 255])])
            #expect(rows.map { $0[2] } == [0, 3])
        }
    }

    @Test("the empty string stays text rather than NULL")
    func emptyStringIsNotNull() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            #expect(try connection.scalar("SELECT typeof(?)", [.text("")]) == "text")
        }
    }

    @Test("a syntax error throws with the SQL attached")
    func syntaxError() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            let sql = "SELEC 1"
            let error = try #require(throws: SQLiteError.self) { try connection.execute(sql) }
            #expect(error.primaryCode == 1)  // SQLITE_ERROR
            #expect(error.sql == sql)
            #expect(error.message.contains("syntax error"))
            #expect(error.description.contains(sql))
        }
    }

    @Test("blank SQL and a wrong number of bindings are errors, not crashes")
    func misuse() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            let blank = try #require(throws: SQLiteError.self) { try connection.execute("  -- nothing\n") }
            #expect(blank.primaryCode == 21)  // SQLITE_MISUSE
            let count = try #require(throws: SQLiteError.self) { try connection.execute("SELECT ?, ?", [1]) }
            #expect(count.primaryCode == 25)  // SQLITE_RANGE
            #expect(count.sql == "SELECT ?, ?")
        }
    }

    @Test("constraint violations report the extended result code")
    func extendedCodes() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (name TEXT UNIQUE)")
            try connection.execute("INSERT INTO t VALUES ('a')")
            let error = try #require(throws: SQLiteError.self) {
                try connection.execute("INSERT INTO t VALUES (?)", ["a"])
            }
            #expect(error.primaryCode == 19)  // SQLITE_CONSTRAINT
            #expect(error.code == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        }
    }

    @Test("a statement can be reset and run again with new bindings")
    func resetAndRebind() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (n INTEGER)")
            try connection.transaction { () throws(SQLiteError) in
                try connection.withStatement("INSERT INTO t VALUES (?)", [0]) { (statement) throws(SQLiteError) in
                    #expect(try !statement.step())
                    for n in 1..<5 {
                        statement.reset()
                        try statement.bind([.integer(Int64(n))])
                        #expect(try !statement.step())
                    }
                }
            }
            #expect(try connection.scalar("SELECT sum(n) FROM t") == 10)
        }
    }

    @Test("a transaction commits on return and rolls back on a thrown error")
    func transactionRollback() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (n INTEGER)")
            let planted = SQLiteError(code: 1, message: "planted failure")
            let thrown = try #require(throws: SQLiteError.self) {
                try connection.transaction { () throws(SQLiteError) in
                    try connection.execute("INSERT INTO t VALUES (1)")
                    #expect(!connection.isAutocommit)
                    throw planted
                }
            }
            #expect(thrown == planted)
            #expect(connection.isAutocommit)
            #expect(try connection.scalar("SELECT count(*) FROM t") == 0)

            // A failing statement inside the transaction rolls back the earlier ones too.
            #expect(throws: SQLiteError.self) {
                try connection.transaction { () throws(SQLiteError) in
                    try connection.execute("INSERT INTO t VALUES (2)")
                    try connection.execute("INSERT INTO missing VALUES (3)")
                }
            }
            #expect(try connection.scalar("SELECT count(*) FROM t") == 0)

            try connection.transaction { () throws(SQLiteError) in try connection.execute("INSERT INTO t VALUES (4)") }
            #expect(try connection.scalar("SELECT count(*) FROM t") == 1)
        }
    }

    @Test("a transaction for a process crash only skips its fsync and leaves the connection at synchronous = FULL")
    func processCrashTransactionRestoresFullSync() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (n INTEGER)")
            // 2 is FULL, 1 is NORMAL; the pragmas and BEGIN/COMMIT run from the statement cache, so repeat them.
            for n in 1...3 {
                try connection.transaction(.processCrash) { () throws(SQLiteError) in
                    #expect(try connection.scalar("PRAGMA synchronous")?.int64 == 1)
                    try connection.execute("INSERT INTO t VALUES (?)", [.integer(Int64(n))])
                }
                #expect(try connection.scalar("PRAGMA synchronous")?.int64 == 2)
                try connection.transaction { () throws(SQLiteError) in
                    #expect(try connection.scalar("PRAGMA synchronous")?.int64 == 2)
                }
            }
            // A failed one too, and the cached BEGIN still works after it.
            #expect(throws: SQLiteError.self) {
                try connection.transaction(.processCrash) { () throws(SQLiteError) in
                    try connection.execute("INSERT INTO missing VALUES (1)")
                }
            }
            #expect(try connection.scalar("PRAGMA synchronous")?.int64 == 2)
            #expect(connection.isAutocommit)
            try connection.transaction { () throws(SQLiteError) in
                try connection.executeCached("INSERT INTO t VALUES (9)")
            }
            #expect(try connection.scalar("SELECT count(*) FROM t")?.int64 == 4)
            try connection.close()
        }
    }

    @Test("a cached query reads every row with new bindings each time and leaves no statement running")
    func cachedQuery() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.execute("CREATE TABLE t (n INTEGER, s TEXT)")
            for n in 1...5 {
                try connection.executeCached("INSERT INTO t VALUES (?, ?)", [.integer(Int64(n)), .text("v\(n)")])
            }
            let sql = "SELECT n, s FROM t WHERE n > ? ORDER BY n"
            #expect(try connection.queryCached(sql, [.integer(3)]).map { $0[1].string } == ["v4", "v5"])
            #expect(try connection.queryCached(sql, [.integer(0)]).map { $0[0].int64 } == [1, 2, 3, 4, 5])
            #expect(try connection.queryCached(sql, [.integer(9)]).isEmpty)
            #expect(throws: SQLiteError.self) { try connection.queryCached(sql, []) }
            // Reset after each use: nothing holds a read open, so the checkpoint copies every frame of the WAL.
            let checkpoint = try connection.query("PRAGMA wal_checkpoint(PASSIVE)").first
            #expect(checkpoint?[0].int64 == 0 && checkpoint?[1].int64 == checkpoint?[2].int64)
            try connection.close()
        }
    }

    @Test("a script runs every statement and names the one that fails")
    func script() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.executeScript("CREATE TABLE a (n INTEGER); INSERT INTO a VALUES (1);\n-- done\n")
            #expect(try connection.scalar("SELECT n FROM a") == 1)
            let error = try #require(throws: SQLiteError.self) {
                try connection.executeScript("INSERT INTO a VALUES (2); INSERT INTO nowhere VALUES (3);")
            }
            #expect(error.sql?.contains("nowhere") == true)
        }
    }

    @Test("close is idempotent and later calls throw")
    func closeConnection() async throws {
        try await withTemporaryDirectory { directory in
            let connection = try configuredConnection(directory + "/t.db")
            try connection.close()
            try connection.close()
            #expect(connection.isClosed)
            let error = try #require(throws: SQLiteError.self) { try connection.execute("SELECT 1") }
            #expect(error.primaryCode == 21)  // SQLITE_MISUSE
        }
    }
}
