import Foundation
import SinglecastStore
import Testing

/// When the start reads the whole database file (`PRAGMA quick_check`): it costs seconds for a big store, so only
/// where damage is to be expected.
@Suite("Store open check")
struct StoreOpenCheckTests {
    /// A store of 2,000 downloads whose last run stopped cleanly, then the root page of `downloads` (which the start
    /// does not read) overwritten. Returns the bytes written.
    private func damagedAfterACleanStop(_ path: String) async throws -> Data {
        let store = try Store(path: path)
        let run = try await store.recordStart(pid: 1, version: "test", bootID: nil, at: 1)
        let root = try await store.withConnection { (connection) throws(SQLiteError) -> Int64? in
            try connection.transaction { () throws(SQLiteError) in
                for n in 0..<2_000 {
                    try connection.execute(
                        """
                        INSERT INTO downloads (url, directory, file_name, state, position, added_at)
                        VALUES (?, '/d', ?, 'completed', ?, 0)
                        """,
                        [.text("http://a.example/\(n).mp3"), .text("\(n).mp3"), .integer(Int64(n))]
                    )
                }
            }
            return try connection.scalar("SELECT rootpage FROM sqlite_schema WHERE name = 'downloads'")?.int64
        }
        try await store.recordCleanStop(runID: run.current.id, at: 2)
        try await store.close()  // Checkpoints the WAL into the main file.

        var bytes = try #require(contents(of: path))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let page = Int(try #require(root))
        #expect(page > 2 && bytes.count >= page * pageSize)
        for offset in (page - 1) * pageSize..<((page - 1) * pageSize + 512) { bytes[offset] = 0xA5 }
        try bytes.write(to: URL(fileURLWithPath: path))
        return bytes
    }

    @Test("after a clean stop the start skips the whole-file check; after an unclean one it refuses the damage")
    func wholeFileCheckOnlyAfterAnUncleanStop() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            _ = try await damagedAfterACleanStop(path)
            // The page is not read at the start: the file opens.
            let reopened = try Store(path: path)
            // This run ends without recording a clean stop, as after kill -9.
            _ = try await reopened.recordStart(pid: 2, version: "test", bootID: nil, at: 3)
            try await reopened.close()
            let before = try #require(contents(of: path))

            let error = try #require(throws: StoreError.self) { try Store(path: path) }
            #expect(error.code == .corrupt)
            #expect(error.message.contains(path))
            #expect(contents(of: path) == before, "a refused database is left untouched")
        }
    }

    @Test("a file no run has stopped cleanly with is checked whole")
    func wholeFileCheckWithoutACleanStop() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/singlecast.db"
            _ = try await damagedAfterACleanStop(path)
            // The same file with its runs gone: nothing says it was last closed cleanly.
            let store = try Store(path: path)
            _ = try await store.withConnection { (connection) throws(SQLiteError) in
                try connection.execute("DELETE FROM runs")
            }
            try await store.close()
            #expect(throws: StoreError.self) { try Store(path: path) }
        }
    }
}
