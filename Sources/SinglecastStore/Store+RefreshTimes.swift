/// Only what a refresh that found a feed unchanged changes of its podcast.
private let refreshTimesSQL = """
    UPDATE podcasts SET refreshed_at = ?, succeeded_at = ?, next_refresh_at = ?, last_error = ?, gone = ? WHERE id = ?
    """

extension Store {
    /// Records what refreshes that found their feeds unchanged (`304`, not moved) changed of their podcasts, in one
    /// transaction: when each was refreshed and succeeded, when it refreshes next, no error, not gone.
    ///
    /// Those five columns only: writing all thirty of each (``savePodcasts(_:durability:)``) was most of the store's
    /// thread in a refresh of 1,000 unchanged feeds (docs/ARCHITECTURE.md, Refreshing many feeds). Whoever changes
    /// anything else of a podcast saves it.
    package func saveRefreshTimes(_ podcasts: [PodcastRecord], durability: Durability) throws(StoreError) {
        try withConnection("saving refresh times") { connection throws(SQLiteError) in
            try connection.transaction(durability) { () throws(SQLiteError) in
                try connection.withCachedStatement(refreshTimesSQL) { (update) throws(SQLiteError) in
                    for podcast in podcasts {
                        try update.bind([
                            SQLiteValue(podcast.refreshedAt), SQLiteValue(podcast.succeededAt),
                            SQLiteValue(podcast.nextRefreshAt), SQLiteValue(podcast.lastError),
                            .integer(podcast.gone ? 1 : 0), .integer(podcast.id),
                        ])
                        while try update.step() {}
                        update.reset()
                    }
                }
            }
        }
    }
}
