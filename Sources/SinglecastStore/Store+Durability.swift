internal import CSQLite

extension Store {
    /// Makes every commit so far survive a power cut, ``Durability/processCrash`` ones included: one fsync for many
    /// commits that skipped theirs, before the client they were made for is answered.
    ///
    /// A checkpoint syncs the WAL before it copies the WAL's pages into the database file, and syncs that file once
    /// they are all in it. The store has one connection, so no reader holds a page back and the checkpoint copies
    /// every frame; when none is left to copy, an earlier checkpoint synced them all already.
    package func syncCommitted() throws(StoreError) {
        try withConnection("syncing the database") { (connection) throws(SQLiteError) in
            let sql = "PRAGMA wal_checkpoint(PASSIVE)"
            // (busy, frames in the WAL, frames copied into the database file)
            let row = try connection.query(sql).first
            let (busy, frames, copied) = (row?[0].int64, row?[1].int64, row?[2].int64)
            guard busy == 0, let frames, frames >= 0, copied == frames else {
                throw SQLiteError(
                    code: SQLITE_BUSY,
                    message:
                        "the checkpoint copied \(copied ?? -1) of \(frames ?? -1) WAL frames (busy: \(busy ?? -1))",
                    sql: sql
                )
            }
        }
    }
}
