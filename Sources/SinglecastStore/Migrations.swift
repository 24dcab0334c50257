/// One step of the schema: applied once, in order, inside its own transaction.
package struct Migration: Sendable {
    /// The `user_version` the database has after this step; versions run 1, 2, 3… with no gaps.
    package var version: Int
    /// A short name for logs and errors.
    package var name: String
    /// One or more `;`-separated statements.
    package var sql: String

    package init(_ version: Int, _ name: String, _ sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// The store's schema history, recorded in `PRAGMA user_version` (GRDB's `DatabaseMigrator` idea, minus the
/// table).
///
/// - Important: Append only. A shipped migration never changes, because databases in the field already
///   ran it; fix mistakes with a new migration.
package enum Migrations {
    /// Every migration, oldest first. To change the schema, append one line.
    package static let all: [Migration] = [
        Migration(
            1,
            "runs",
            """
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                started_at INTEGER NOT NULL, -- Unix seconds
                stopped_at INTEGER NULL,     -- Unix seconds; NULL until a clean stop
                pid INTEGER NOT NULL,
                version TEXT NOT NULL,
                boot_id TEXT NULL
            ) STRICT;
            """
        ),
        Migration(
            2,
            "downloads",
            """
            CREATE TABLE downloads (
                id INTEGER PRIMARY KEY,
                url TEXT NOT NULL,
                final_url TEXT NULL,
                directory TEXT NOT NULL,
                file_name TEXT NOT NULL,
                state TEXT NOT NULL
                    CHECK (state IN ('queued', 'active', 'paused', 'failed', 'completed', 'cancelled')),
                pause_reason TEXT NULL,
                priority INTEGER NOT NULL DEFAULT 0,
                position INTEGER NOT NULL,
                bytes_done INTEGER NOT NULL DEFAULT 0, -- last checkpoint: bytes of the .part known to be on disk
                bytes_total INTEGER NULL,
                etag TEXT NULL,
                last_modified TEXT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                error_code TEXT NULL,
                error_message TEXT NULL,
                error_http_status INTEGER NULL,
                next_attempt_at INTEGER NULL,          -- Unix milliseconds
                added_at INTEGER NOT NULL,             -- Unix milliseconds
                completed_at INTEGER NULL,             -- Unix milliseconds
                headers TEXT NOT NULL DEFAULT '',      -- "Name: value" lines
                auth_user TEXT NULL,
                auth_password TEXT NULL,
                delete_partial INTEGER NOT NULL DEFAULT 0
            ) STRICT;
            -- One live download per URL: enqueueing it again returns the existing one.
            CREATE UNIQUE INDEX downloads_live_url ON downloads(url) WHERE state NOT IN ('completed', 'cancelled');
            CREATE INDEX downloads_order ON downloads(state, priority DESC, position);
            """
        ),
        Migration(
            3,
            "podcasts",
            """
            CREATE TABLE podcasts (
                id INTEGER PRIMARY KEY,
                feed_url TEXT NOT NULL UNIQUE,
                title TEXT NOT NULL DEFAULT '',
                author TEXT NULL,
                description TEXT NOT NULL DEFAULT '',
                link TEXT NULL,
                language TEXT NULL,
                artwork_url TEXT NULL,
                artwork_path TEXT NULL,
                artwork_etag TEXT NULL,
                artwork_last_modified TEXT NULL,
                itunes_id INTEGER NULL,
                auth_user TEXT NULL,
                auth_password TEXT NULL,
                etag TEXT NULL,                         -- of the last feed response, for conditional GET
                last_modified TEXT NULL,
                subscribed_at INTEGER NOT NULL,         -- Unix milliseconds, like every time below
                refreshed_at INTEGER NULL,              -- last attempt
                succeeded_at INTEGER NULL,              -- last success (200 or 304)
                next_refresh_at INTEGER NULL,
                last_error TEXT NULL,
                gone INTEGER NOT NULL DEFAULT 0,        -- the feed answered 410
                auto_download TEXT NOT NULL DEFAULT 'off',
                keep INTEGER NULL
            ) STRICT;
            CREATE TABLE episodes (
                id INTEGER PRIMARY KEY,
                podcast_id INTEGER NOT NULL REFERENCES podcasts(id) ON DELETE CASCADE,
                identity TEXT NOT NULL,                 -- guid, else link, else enclosure without query + title
                guid TEXT NULL,
                title TEXT NOT NULL,
                description TEXT NOT NULL DEFAULT '',
                link TEXT NULL,
                published_at INTEGER NULL,
                duration INTEGER NULL,                  -- seconds
                enclosure_url TEXT NULL,
                enclosure_type TEXT NULL,
                enclosure_length INTEGER NULL,
                season INTEGER NULL,
                episode_number INTEGER NULL,
                chapters_url TEXT NULL,
                transcript_url TEXT NULL,
                integrity TEXT NULL,                    -- podcast:integrity "type value"
                first_seen_at INTEGER NOT NULL,
                feed_order INTEGER NOT NULL DEFAULT 0,  -- position in the feed when last seen
                is_new INTEGER NOT NULL DEFAULT 1,
                download_id INTEGER NULL,
                UNIQUE (podcast_id, identity)
            ) STRICT;
            CREATE INDEX episodes_by_date ON episodes(podcast_id, published_at DESC);
            CREATE INDEX episodes_by_download ON episodes(download_id) WHERE download_id IS NOT NULL;
            """
        ),
        Migration(
            4,
            "download ids are never reused",
            """
            -- Without AUTOINCREMENT SQLite gives a new row max(id) + 1, so cancelling the newest download freed its
            -- id for the next enqueue: a client holding the old id, or an episode's download_id, then named another
            -- download. The table is rebuilt (SQLite cannot add AUTOINCREMENT in place) with the same columns.
            CREATE TABLE downloads_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                url TEXT NOT NULL,
                final_url TEXT NULL,
                directory TEXT NOT NULL,
                file_name TEXT NOT NULL,
                state TEXT NOT NULL
                    CHECK (state IN ('queued', 'active', 'paused', 'failed', 'completed', 'cancelled')),
                pause_reason TEXT NULL,
                priority INTEGER NOT NULL DEFAULT 0,
                position INTEGER NOT NULL,
                bytes_done INTEGER NOT NULL DEFAULT 0,
                bytes_total INTEGER NULL,
                etag TEXT NULL,
                last_modified TEXT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                error_code TEXT NULL,
                error_message TEXT NULL,
                error_http_status INTEGER NULL,
                next_attempt_at INTEGER NULL,
                added_at INTEGER NOT NULL,
                completed_at INTEGER NULL,
                headers TEXT NOT NULL DEFAULT '',
                auth_user TEXT NULL,
                auth_password TEXT NULL,
                delete_partial INTEGER NOT NULL DEFAULT 0
            ) STRICT;
            INSERT INTO downloads_new (
                id, url, final_url, directory, file_name, state, pause_reason, priority, position, bytes_done,
                bytes_total, etag, last_modified, attempts, error_code, error_message, error_http_status,
                next_attempt_at, added_at, completed_at, headers, auth_user, auth_password, delete_partial
            )
            SELECT
                id, url, final_url, directory, file_name, state, pause_reason, priority, position, bytes_done,
                bytes_total, etag, last_modified, attempts, error_code, error_message, error_http_status,
                next_attempt_at, added_at, completed_at, headers, auth_user, auth_password, delete_partial
            FROM downloads;
            DROP TABLE downloads;
            ALTER TABLE downloads_new RENAME TO downloads;
            CREATE UNIQUE INDEX downloads_live_url ON downloads(url) WHERE state NOT IN ('completed', 'cancelled');
            CREATE INDEX downloads_order ON downloads(state, priority DESC, position);
            -- Ids already freed cannot be known, except those episodes still point at: start past all of them.
            DELETE FROM sqlite_sequence WHERE name = 'downloads';
            INSERT INTO sqlite_sequence (name, seq) VALUES (
                'downloads',
                MAX(
                    (SELECT COALESCE(MAX(id), 0) FROM downloads),
                    (SELECT COALESCE(MAX(download_id), 0) FROM episodes)
                )
            );
            """
        ),
        Migration(
            5,
            "partial names, listed downloads, podcast and episode ids never reused",
            """
            -- The partial file keeps the name it was created with when the final name changes at completion (a
            -- file took the name meanwhile); NULL means file_name + '.part'. Without it a crash between recording
            -- the new name and the rename sent the download to the new name's '.part', which may be another
            -- download's kept partial file.
            ALTER TABLE downloads ADD COLUMN partial_name TEXT NULL;
            -- 'clear --completed' takes a completed download off the list; an episode may still point at it and
            -- its file, so the row stays until nothing does.
            ALTER TABLE downloads ADD COLUMN listed INTEGER NOT NULL DEFAULT 1;
            -- Items of the last good refresh dropped because an earlier item had the same identity.
            ALTER TABLE podcasts ADD COLUMN duplicate_items INTEGER NOT NULL DEFAULT 0;
            -- A podcast's own settings, NULL for the configured ones.
            ALTER TABLE podcasts ADD COLUMN name_template TEXT NULL;
            ALTER TABLE podcasts ADD COLUMN folder TEXT NULL;
            ALTER TABLE podcasts ADD COLUMN refresh_interval INTEGER NULL; -- milliseconds
            -- Without AUTOINCREMENT a new row gets max(id) + 1, so unsubscribing the newest podcast freed its id
            -- (and its episodes' ids) for the next subscription. The podcasts table cannot be rebuilt with
            -- AUTOINCREMENT inside a migration's transaction: dropping it would cascade to the episodes. Inserts
            -- take their id past this high-water mark instead, which the triggers raise on every delete.
            -- Completed downloads whose on_complete program has not been started yet; written with the completion,
            -- removed just before the program starts (so it runs at most once, also across a crash).
            CREATE TABLE pending_hooks (download_id INTEGER PRIMARY KEY) STRICT;
            CREATE TABLE id_high_water (name TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;
            INSERT INTO id_high_water (name, value) VALUES
                ('podcasts', (SELECT COALESCE(MAX(id), 0) FROM podcasts)),
                ('episodes', (SELECT COALESCE(MAX(id), 0) FROM episodes));
            CREATE TRIGGER podcasts_high_water AFTER DELETE ON podcasts BEGIN
                UPDATE id_high_water SET value = MAX(value, old.id) WHERE name = 'podcasts';
            END;
            CREATE TRIGGER episodes_high_water AFTER DELETE ON episodes BEGIN
                UPDATE id_high_water SET value = MAX(value, old.id) WHERE name = 'episodes';
            END;
            """
        ),
        Migration(
            6,
            "episode lists ordered by an index alone",
            """
            -- A listing orders by published_at, feed_order and id. With only published_at in the index, each
            -- episode's row was read to order it, in the index's order: for a feed whose dates repeat that jumps
            -- across the table and rereads the same pages. With the whole order in the index the ids come from the
            -- index alone, and the rows are then read in id order.
            DROP INDEX episodes_by_date;
            CREATE INDEX episodes_by_date ON episodes(podcast_id, published_at DESC, feed_order, id);
            """
        ),
        Migration(
            7,
            "episode rules: types, played and pinned episodes, files deleted by rule or request",
            """
            -- A podcast's own rules, `key = value` lines in the configuration's syntax; NULL for none.
            ALTER TABLE podcasts ADD COLUMN rules TEXT NULL;
            ALTER TABLE episodes ADD COLUMN episode_type TEXT NULL;  -- itunes:episodeType: full, trailer, bonus
            ALTER TABLE episodes ADD COLUMN played_at INTEGER NULL;
            ALTER TABLE episodes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
            -- The episode's file was deleted (by a rule or on request) and is not downloaded again by itself.
            ALTER TABLE episodes ADD COLUMN file_deleted_at INTEGER NULL;
            ALTER TABLE episodes ADD COLUMN file_deleted_reason TEXT NULL;
            -- The listener asked for this episode (enqueue, download, redownload): keep and delete_older_than,
            -- which choose among what the rules downloaded, leave its file alone.
            ALTER TABLE episodes ADD COLUMN requested INTEGER NOT NULL DEFAULT 0;
            """
        ),
        Migration(
            8,
            "downloads that pass the download gate",
            """
            -- Queued with --now: runs outside the download windows and on a metered network. Stored with the row, as
            -- the request's wish outlives a restart, a retry and a pause.
            ALTER TABLE downloads ADD COLUMN bypass_gate INTEGER NOT NULL DEFAULT 0;
            """
        ),
        Migration(
            9,
            "episode counts from an index",
            """
            -- Every Podcast object carries its episode totals, recounted after any write to the episodes (a played
            -- mark, a refresh). With 100,000 episodes the count read the whole table, 0.2 s; from this index it
            -- reads only the index.
            CREATE INDEX episodes_by_new ON episodes(podcast_id, is_new);
            """
        ),
        Migration(
            10,
            "the size of each feed's last document",
            """
            -- A refresh reserves memory for a feed before it fetches it, from the size of its last document: kept
            -- here, a restart does not forget it, so big feeds still take turns on the first refresh after one.
            -- Written only by Store.setFeedDocumentSize, never with the podcast's other fields.
            ALTER TABLE podcasts ADD COLUMN feed_size INTEGER;
            """
        ),
        Migration(
            11,
            "the speed limit set at runtime",
            """
            -- `limit` outlives a restart. Row 'speed_limit': value in bytes per second, NULL for unlimited; without
            -- the row the configured speed_limit applies. Written only by Store.setSpeedLimitOverride.
            CREATE TABLE runtime_settings (name TEXT PRIMARY KEY, value INTEGER) STRICT;
            """
        ),
        Migration(
            12,
            "chapters and transcripts saved beside the episode",
            """
            -- What the feed offers to save beside the episode's file (podcast:chapters, podcast:transcript), one
            -- "kind<TAB>format<TAB>language<TAB>MIME type<TAB>rel<TAB>URL" line each; NULL for none. Written with the episode.
            ALTER TABLE episodes ADD COLUMN sidecar_offers TEXT NULL;
            -- Each offer of an episode whose download completed, tied to that download: when its file goes, these go.
            -- Not a foreign key to downloads: retention deletes download rows in the transaction that owns the files.
            CREATE TABLE sidecars (
                id INTEGER PRIMARY KEY,
                episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
                download_id INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('chapters', 'transcript')),
                format TEXT NOT NULL,                   -- the file's extension: json, vtt, srt, html
                language TEXT NOT NULL DEFAULT '',      -- '' when the feed gives none
                mime_type TEXT NOT NULL,
                url TEXT NOT NULL,
                rel TEXT NULL,                          -- podcast:transcript@rel, such as captions
                state TEXT NOT NULL DEFAULT 'wanted' CHECK (state IN ('wanted', 'saved', 'refused')),
                path TEXT NULL,                         -- the saved file
                bytes INTEGER NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NULL,           -- Unix milliseconds; NULL: at once
                error TEXT NULL,                        -- why the last attempt failed, or why it was refused
                UNIQUE (download_id, episode_id, kind, format, language)
            ) STRICT;
            CREATE INDEX sidecars_by_episode ON sidecars(episode_id);
            CREATE INDEX sidecars_wanted ON sidecars(next_attempt_at) WHERE state = 'wanted';
            """
        ),
        syncOutbox(13),
        Migration(
            14,
            "downloaded episodes that offer chapters or transcripts",
            """
            -- The take-up of sidecar offers (Store.takeUpSidecarOffers) runs after every completed download and every
            -- refreshed feed: it reads the downloaded episodes that offer something, not every downloaded episode.
            CREATE INDEX episodes_offering_sidecars ON episodes(download_id)
                WHERE download_id IS NOT NULL AND sidecar_offers IS NOT NULL;
            """
        ),
        Migration(
            15,
            "episodes whose sidecar offers are yet to be taken up",
            """
            -- Reading every downloaded episode that offers something at each take-up cost 38 ms with 20,000 of them,
            -- after every completed download and every refreshed feed, with the store's one connection held. The
            -- triggers below note each episode whose offers or download changed, or whose download completed; a
            -- take-up reads only those and forgets them (Store.takeUpSidecarOffers). They are the one owner of the
            -- rule, whatever statement makes the change.
            CREATE TABLE sidecar_offers_pending (episode_id INTEGER PRIMARY KEY) STRICT;
            INSERT INTO sidecar_offers_pending (episode_id)
                SELECT id FROM episodes WHERE download_id IS NOT NULL AND sidecar_offers IS NOT NULL;
            DROP INDEX episodes_offering_sidecars;
            -- NOT EXISTS rather than OR IGNORE: a trigger's conflict clause gives way to the outer statement's.
            CREATE TRIGGER sidecar_offers_of_new_episode AFTER INSERT ON episodes
                WHEN NEW.download_id IS NOT NULL AND NEW.sidecar_offers IS NOT NULL
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id) SELECT NEW.id
                    WHERE NOT EXISTS (SELECT 1 FROM sidecar_offers_pending WHERE episode_id = NEW.id);
            END;
            CREATE TRIGGER sidecar_offers_of_changed_episode AFTER UPDATE OF download_id, sidecar_offers ON episodes
                WHEN NEW.download_id IS NOT NULL AND NEW.sidecar_offers IS NOT NULL
                    AND (OLD.download_id IS NOT NEW.download_id OR OLD.sidecar_offers IS NOT NEW.sidecar_offers)
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id) SELECT NEW.id
                    WHERE NOT EXISTS (SELECT 1 FROM sidecar_offers_pending WHERE episode_id = NEW.id);
            END;
            CREATE TRIGGER sidecar_offers_of_completed_download AFTER UPDATE OF state ON downloads
                WHEN NEW.state = 'completed' AND OLD.state IS NOT 'completed'
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id)
                    SELECT e.id FROM episodes e WHERE e.download_id = NEW.id AND e.sidecar_offers IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM sidecar_offers_pending p WHERE p.episode_id = e.id);
            END;
            CREATE TRIGGER sidecar_offers_of_inserted_download AFTER INSERT ON downloads
                WHEN NEW.state = 'completed'
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id)
                    SELECT e.id FROM episodes e WHERE e.download_id = NEW.id AND e.sidecar_offers IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM sidecar_offers_pending p WHERE p.episode_id = e.id);
            END;
            """
        ),
        checksWithoutTemporaryTables(16),
    ]

    /// The schema version a fully migrated database has.
    package static var latestVersion: Int { all.count }

    /// Applies every migration newer than the database, up to `target`, each in its own `BEGIN IMMEDIATE`
    /// transaction that also bumps `user_version`.
    ///
    /// A crash between two migrations leaves a consistent database at the earlier version, and the next
    /// start carries on from there.
    ///
    /// - Parameters:
    ///   - connection: A configured connection (``Connection/configureForStore()``).
    ///   - target: The version to stop at; tests use it to build every older schema.
    /// - Returns: The versions applied, possibly none.
    /// - Throws: ``SQLiteError`` from the failing migration, whose transaction is rolled back.
    @discardableResult
    package static func apply(
        to connection: Connection,
        upTo target: Int = latestVersion
    ) throws(SQLiteError)
        -> [Int]
    {
        precondition(all.indices.allSatisfy { all[$0].version == $0 + 1 }, "migration versions must be 1, 2, 3…")
        precondition((0...latestVersion).contains(target), "no migration has version \(target)")
        var applied: [Int] = []
        let current = try connection.userVersion()
        for migration in all where migration.version > current && migration.version <= target {
            let ran = try connection.transaction { () throws(SQLiteError) -> Bool in
                // Re-read under the write lock: another process may have migrated since the check above.
                guard try connection.userVersion() < migration.version else { return false }
                try connection.executeScript(migration.sql)
                try connection.setUserVersion(migration.version)
                return true
            }
            if ran { applied.append(migration.version) }
        }
        return applied
    }
}
