extension Store {
    /// The size of the last document fetched for the podcast whose feed is at `feedURL`, if one was recorded: what its
    /// next refresh reserves from the feed memory budget before it fetches, across restarts.
    package func feedDocumentSize(of feedURL: String) throws(StoreError) -> Int64? {
        try withConnection("reading a feed's size") { connection throws(SQLiteError) in
            try connection.queryCached("SELECT feed_size FROM podcasts WHERE feed_url = ?", [.text(feedURL)]).first?
                .int64(0)
        }
    }

    /// Records the size of a document fetched from `feedURL`.
    ///
    /// Kept apart from the podcast's other fields, so that saving a podcast read before the fetch does not put
    /// back an older size.
    ///
    /// - Returns: `false` when no podcast has that feed (yet: a subscription's feed is fetched before its podcast is
    ///   stored), so nothing was recorded.
    @discardableResult
    package func setFeedDocumentSize(_ bytes: Int64, of feedURL: String) throws(StoreError) -> Bool {
        try withConnection("recording a feed's size") { connection throws(SQLiteError) in
            // Without an fsync (one a grown feed, most of a refresh's time): a size a power cut rolls back only makes
            // the next refresh reserve the older size first.
            try connection.transaction(.processCrash) { () throws(SQLiteError) in
                try connection.executeCached(
                    "UPDATE podcasts SET feed_size = ? WHERE feed_url = ?",
                    [.integer(bytes), .text(feedURL)]
                ) > 0
            }
        }
    }
}
