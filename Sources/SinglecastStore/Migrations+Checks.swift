extension Migrations {
    /// Checks and triggers that write without a temporary table (issue 23).
    ///
    /// SQLite evaluates `x IN (a, b, c)` over three or more constants by building an in-memory b-tree of the list,
    /// and an `INSERT … SELECT` that reads its own table by copying the rows into one first. Each is a pager of
    /// its own, opened, zero-filled and closed: about 34,000 instructions per statement, on every write of a
    /// download (its insert, the name saved before the rename, the completion) and every noted sidecar offer,
    /// which was a tenth of the CPU a 64 KiB download cost. The tables are rebuilt with the same columns, rows,
    /// indexes and ids; their checks say the same with `OR`, and the triggers note an episode with `ON CONFLICT
    /// DO NOTHING`, which (unlike `OR IGNORE`) no outer statement's conflict clause overrides.
    static func checksWithoutTemporaryTables(_ version: Int) -> Migration {
        Migration(
            version,
            "checks and triggers that write without a temporary table",
            """
            -- Every trigger goes first and comes back last: a rename checks every trigger in the schema, and these
            -- name the tables rebuilt here.
            DROP TRIGGER sidecar_offers_of_new_episode;
            DROP TRIGGER sidecar_offers_of_changed_episode;
            DROP TRIGGER sidecar_offers_of_completed_download;
            DROP TRIGGER sidecar_offers_of_inserted_download;
            DROP TRIGGER sync_podcast_added;
            DROP TRIGGER sync_podcast_removed;
            DROP TRIGGER sync_podcast_moved;
            DROP TRIGGER sync_episode_downloaded;
            DROP TRIGGER sync_episode_file_deleted;
            DROP TRIGGER sync_episode_played;
            DROP TRIGGER sync_episode_unplayed;

            CREATE TABLE downloads_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                url TEXT NOT NULL,
                final_url TEXT NULL,
                directory TEXT NOT NULL,
                file_name TEXT NOT NULL,
                state TEXT NOT NULL CHECK (
                    state = 'queued' OR state = 'active' OR state = 'paused' OR state = 'failed'
                    OR state = 'completed' OR state = 'cancelled'
                ),
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
                delete_partial INTEGER NOT NULL DEFAULT 0,
                partial_name TEXT NULL,                -- NULL: file_name + '.part'
                listed INTEGER NOT NULL DEFAULT 1,
                bypass_gate INTEGER NOT NULL DEFAULT 0
            ) STRICT;
            INSERT INTO downloads_new (
                id, url, final_url, directory, file_name, state, pause_reason, priority, position, bytes_done,
                bytes_total, etag, last_modified, attempts, error_code, error_message, error_http_status,
                next_attempt_at, added_at, completed_at, headers, auth_user, auth_password, delete_partial,
                partial_name, listed, bypass_gate
            )
            SELECT
                id, url, final_url, directory, file_name, state, pause_reason, priority, position, bytes_done,
                bytes_total, etag, last_modified, attempts, error_code, error_message, error_http_status,
                next_attempt_at, added_at, completed_at, headers, auth_user, auth_password, delete_partial,
                partial_name, listed, bypass_gate
            FROM downloads;
            -- The ids handed out so far, not only those still in the table: no id is given twice.
            UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'downloads'))
                WHERE name = 'downloads_new';
            INSERT INTO sqlite_sequence (name, seq)
                SELECT 'downloads_new', seq FROM sqlite_sequence WHERE name = 'downloads'
                AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'downloads_new');
            DROP TABLE downloads;
            ALTER TABLE downloads_new RENAME TO downloads;
            CREATE UNIQUE INDEX downloads_live_url ON downloads(url) WHERE state NOT IN ('completed', 'cancelled');
            CREATE INDEX downloads_order ON downloads(state, priority DESC, position);

            CREATE TABLE sync_outbox_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL CHECK (
                    kind = 'add' OR kind = 'remove' OR kind = 'download' OR kind = 'delete' OR kind = 'play'
                    OR kind = 'new'
                ),
                podcast_url TEXT NOT NULL,
                episode_url TEXT NULL,
                guid TEXT NULL,
                position INTEGER NULL, -- seconds, play only
                total INTEGER NULL,    -- seconds, play only
                at INTEGER NOT NULL
            ) STRICT;
            INSERT INTO sync_outbox_new (id, kind, podcast_url, episode_url, guid, position, total, at)
                SELECT id, kind, podcast_url, episode_url, guid, position, total, at FROM sync_outbox;
            UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'sync_outbox'))
                WHERE name = 'sync_outbox_new';
            INSERT INTO sqlite_sequence (name, seq)
                SELECT 'sync_outbox_new', seq FROM sqlite_sequence WHERE name = 'sync_outbox'
                AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'sync_outbox_new');
            DROP TABLE sync_outbox;
            ALTER TABLE sync_outbox_new RENAME TO sync_outbox;

            CREATE TABLE sidecars_new (
                id INTEGER PRIMARY KEY,
                episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
                download_id INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind = 'chapters' OR kind = 'transcript'),
                format TEXT NOT NULL,                   -- the file's extension: json, vtt, srt, html
                language TEXT NOT NULL DEFAULT '',      -- '' when the feed gives none
                mime_type TEXT NOT NULL,
                url TEXT NOT NULL,
                rel TEXT NULL,                          -- podcast:transcript@rel, such as captions
                state TEXT NOT NULL DEFAULT 'wanted' CHECK (state = 'wanted' OR state = 'saved' OR state = 'refused'),
                path TEXT NULL,                         -- the saved file
                bytes INTEGER NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NULL,           -- Unix milliseconds; NULL: at once
                error TEXT NULL,                        -- why the last attempt failed, or why it was refused
                UNIQUE (download_id, episode_id, kind, format, language)
            ) STRICT;
            INSERT INTO sidecars_new (
                id, episode_id, download_id, kind, format, language, mime_type, url, rel, state, path, bytes, attempts,
                next_attempt_at, error
            )
            SELECT
                id, episode_id, download_id, kind, format, language, mime_type, url, rel, state, path, bytes, attempts,
                next_attempt_at, error
            FROM sidecars;
            DROP TABLE sidecars;
            ALTER TABLE sidecars_new RENAME TO sidecars;
            CREATE INDEX sidecars_by_episode ON sidecars(episode_id);
            CREATE INDEX sidecars_wanted ON sidecars(next_attempt_at) WHERE state = 'wanted';

            -- The sidecar triggers note an episode once with ON CONFLICT rather than NOT EXISTS, which read the table
            -- being written and so copied the rows through a temporary table; the outbox's are unchanged.

            CREATE TRIGGER sidecar_offers_of_new_episode AFTER INSERT ON episodes
                WHEN NEW.download_id IS NOT NULL AND NEW.sidecar_offers IS NOT NULL
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id) VALUES (NEW.id) ON CONFLICT (episode_id) DO NOTHING;
            END;
            CREATE TRIGGER sidecar_offers_of_changed_episode AFTER UPDATE OF download_id, sidecar_offers ON episodes
                WHEN NEW.download_id IS NOT NULL AND NEW.sidecar_offers IS NOT NULL
                    AND (OLD.download_id IS NOT NEW.download_id OR OLD.sidecar_offers IS NOT NEW.sidecar_offers)
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id) VALUES (NEW.id) ON CONFLICT (episode_id) DO NOTHING;
            END;
            CREATE TRIGGER sidecar_offers_of_completed_download AFTER UPDATE OF state ON downloads
                WHEN NEW.state = 'completed' AND OLD.state IS NOT 'completed'
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id)
                    SELECT e.id FROM episodes e WHERE e.download_id = NEW.id AND e.sidecar_offers IS NOT NULL
                    ON CONFLICT (episode_id) DO NOTHING;
            END;
            CREATE TRIGGER sidecar_offers_of_inserted_download AFTER INSERT ON downloads
                WHEN NEW.state = 'completed'
            BEGIN
                INSERT INTO sidecar_offers_pending (episode_id)
                    SELECT e.id FROM episodes e WHERE e.download_id = NEW.id AND e.sidecar_offers IS NOT NULL
                    ON CONFLICT (episode_id) DO NOTHING;
            END;
            \(syncTriggers)
            """
        )
    }
}
