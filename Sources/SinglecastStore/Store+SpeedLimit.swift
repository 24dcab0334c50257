extension Store {
    /// The speed limit `limit` set, which outlives restarts: `nil` when none was set (the configured one applies),
    /// `.some(nil)` for unlimited.
    package func speedLimitOverride() throws(StoreError) -> Int64?? {
        try withConnection("reading the speed limit") { connection throws(SQLiteError) in
            let rows = try connection.query("SELECT value FROM runtime_settings WHERE name = 'speed_limit'")
            guard let row = rows.first else { return nil }
            return .some(row.int64(0))
        }
    }

    /// Records the speed limit `limit` set (`.some(nil)`: unlimited), or with `nil` forgets it.
    package func setSpeedLimitOverride(_ rate: Int64??) throws(StoreError) {
        try withConnection("saving the speed limit") { connection throws(SQLiteError) in
            switch rate {
            case .some(let rate):
                try connection.execute(
                    "INSERT OR REPLACE INTO runtime_settings (name, value) VALUES ('speed_limit', ?)",
                    [rate.map { .integer($0) } ?? .null]
                )
            case nil:
                try connection.execute("DELETE FROM runtime_settings WHERE name = 'speed_limit'")
            }
        }
    }
}
