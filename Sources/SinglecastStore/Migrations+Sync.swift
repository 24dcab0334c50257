extension Migrations {
    /// The sync outbox and its cursors (issue 22). Kept apart from ``all``'s list so that a migration added in
    /// parallel only renumbers this one.
    ///
    /// The outbox is written by triggers, so every local change (a subscription, a completed download, a deleted
    /// file, a played mark) and its outbox row commit in one transaction whatever code made the change: a crash
    /// cannot keep one without the other. The triggers record only while `sync_state` has the row `recording`,
    /// which the daemon sets when sync is configured, so that without sync nothing accumulates.
    static func syncOutbox(_ version: Int) -> Migration {
        Migration(
            version,
            "sync outbox",
            """
            -- Changes the gPodder server has not acknowledged yet, oldest first. kind: add and remove (subscriptions),
            -- download, delete, play, new (episode actions). at: Unix milliseconds of the change.
            CREATE TABLE sync_outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL CHECK (kind IN ('add', 'remove', 'download', 'delete', 'play', 'new')),
                podcast_url TEXT NOT NULL,
                episode_url TEXT NULL,
                guid TEXT NULL,
                position INTEGER NULL, -- seconds, play only
                total INTEGER NULL,    -- seconds, play only
                at INTEGER NOT NULL
            ) STRICT;
            -- Named values: recording (present while sync is configured), device_since:<device> and actions_since
            -- (the server's timestamps), uploaded_all, last_success, last_attempt (Unix ms), last_error (text).
            CREATE TABLE sync_state (name TEXT PRIMARY KEY, value ANY) STRICT;

            \(syncTriggers)
            """
        )
    }

    /// The triggers that write the outbox, as migration 13 created them; migration 16 drops and recreates them
    /// unchanged around its table rebuilds (a rename checks every trigger, and these name `sync_outbox`).
    static let syncTriggers = """
        CREATE TRIGGER sync_podcast_added AFTER INSERT ON podcasts
        WHEN EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, at) VALUES ('add', new.feed_url, new.subscribed_at);
        END;
        CREATE TRIGGER sync_podcast_removed AFTER DELETE ON podcasts
        WHEN EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, at)
            VALUES ('remove', old.feed_url, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
        END;
        -- A feed that moved (301, itunes:new-feed-url, set --feed-url) is the old URL removed and the new added.
        CREATE TRIGGER sync_podcast_moved AFTER UPDATE OF feed_url ON podcasts
        WHEN old.feed_url != new.feed_url AND EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, at)
            VALUES ('remove', old.feed_url, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
            INSERT INTO sync_outbox (kind, podcast_url, at)
            VALUES ('add', new.feed_url, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
        END;
        -- An episode's download completed: the phone learns the home server has the file.
        CREATE TRIGGER sync_episode_downloaded AFTER UPDATE OF state ON downloads
        WHEN new.state = 'completed' AND old.state != 'completed'
            AND EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, episode_url, guid, at)
            SELECT 'download', p.feed_url, e.enclosure_url, e.guid, COALESCE(new.completed_at, 0)
            FROM episodes e JOIN podcasts p ON p.id = e.podcast_id
            WHERE e.download_id = new.id AND e.enclosure_url IS NOT NULL;
        END;
        CREATE TRIGGER sync_episode_file_deleted AFTER UPDATE OF file_deleted_at ON episodes
        WHEN old.file_deleted_at IS NULL AND new.file_deleted_at IS NOT NULL AND new.enclosure_url IS NOT NULL
            AND EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, episode_url, guid, at)
            SELECT 'delete', feed_url, new.enclosure_url, new.guid, new.file_deleted_at
            FROM podcasts WHERE id = new.podcast_id;
        END;
        -- Played is a play action at the end of the episode; unplayed is the API's new.
        CREATE TRIGGER sync_episode_played AFTER UPDATE OF played_at ON episodes
        WHEN old.played_at IS NULL AND new.played_at IS NOT NULL AND new.enclosure_url IS NOT NULL
            AND EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, episode_url, guid, position, total, at)
            SELECT 'play', feed_url, new.enclosure_url, new.guid, COALESCE(new.duration, 0),
                COALESCE(new.duration, 0), new.played_at
            FROM podcasts WHERE id = new.podcast_id;
        END;
        CREATE TRIGGER sync_episode_unplayed AFTER UPDATE OF played_at ON episodes
        WHEN old.played_at IS NOT NULL AND new.played_at IS NULL AND new.enclosure_url IS NOT NULL
            AND EXISTS (SELECT 1 FROM sync_state WHERE name = 'recording') BEGIN
            INSERT INTO sync_outbox (kind, podcast_url, episode_url, guid, at)
            SELECT 'new', feed_url, new.enclosure_url, new.guid,
                CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
            FROM podcasts WHERE id = new.podcast_id;
        END;
        """
}
