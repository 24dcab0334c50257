/// One file singlecast moved to the Trash, as `trash` lists it.
package struct TrashedFileInfo: Codable, Hashable, Sendable {
    /// What `restore` takes: short, and the same while the file stays in the Trash.
    package var id: String
    /// Where the file is in the Trash.
    package var file: String
    /// Where it was, and goes back to.
    package var original: String
    package var size: Int64
    /// ISO 8601, UTC.
    package var trashedAt: String
    package var episode: Int64?
    package var episodeTitle: String?
    package var podcast: Int64?
    package var podcastTitle: String?

    package init(
        id: String,
        file: String,
        original: String,
        size: Int64,
        trashedAt: String,
        episode: Int64? = nil,
        episodeTitle: String? = nil,
        podcast: Int64? = nil,
        podcastTitle: String? = nil
    ) {
        self.id = id
        self.file = file
        self.original = original
        self.size = size
        self.trashedAt = trashedAt
        self.episode = episode
        self.episodeTitle = episodeTitle
        self.podcast = podcast
        self.podcastTitle = podcastTitle
    }

    enum CodingKeys: String, CodingKey {
        case id
        case file
        case original
        case size
        case trashedAt = "trashed_at"
        case episode
        case episodeTitle = "episode_title"
        case podcast
        case podcastTitle = "podcast_title"
    }
}

/// Result of `trash`: singlecast's files in the Trash, newest first.
package struct TrashResult: Codable, Hashable, Sendable {
    package var files: [TrashedFileInfo]
    package var totalBytes: Int64
    /// `false` with `use_trash = false`: files are deleted, never trashed, and nothing is listed.
    package var useTrash: Bool

    package init(files: [TrashedFileInfo], totalBytes: Int64, useTrash: Bool) {
        self.files = files
        self.totalBytes = totalBytes
        self.useTrash = useTrash
    }

    enum CodingKeys: String, CodingKey {
        case files
        case totalBytes = "total_bytes"
        case useTrash = "use_trash"
    }
}

/// Params of `restore`: ids from `trash`.
package struct RestoreParams: Codable, Hashable, Sendable {
    package var ids: [String]

    package init(ids: [String]) { self.ids = ids }
}

/// Result of `restore`.
package struct RestoreResult: Codable, Hashable, Sendable {
    package struct Restored: Codable, Hashable, Sendable {
        package var id: String
        /// Where the file is now.
        package var file: String
        package var episode: Int64?
        /// The episode's completed download, new.
        package var download: Int64?
        /// The episode was pinned so that retention keeps it.
        package var pinned: Bool

        package init(id: String, file: String, episode: Int64?, download: Int64?, pinned: Bool) {
            self.id = id
            self.file = file
            self.episode = episode
            self.download = download
            self.pinned = pinned
        }
    }

    package struct Refused: Codable, Hashable, Sendable {
        package var id: String
        package var file: String
        package var reason: String

        package init(id: String, file: String, reason: String) {
            self.id = id
            self.file = file
            self.reason = reason
        }
    }

    package var restored: [Restored]
    package var refused: [Refused]

    package init(restored: [Restored], refused: [Refused]) {
        self.restored = restored
        self.refused = refused
    }
}

/// Params of `purge`: `older_than`, a duration as the configuration writes one (`30d`, `2w`); absent empties all of
/// singlecast's files.
package struct PurgeParams: Codable, Hashable, Sendable {
    package var olderThan: String?

    package init(olderThan: String? = nil) { self.olderThan = olderThan }

    enum CodingKeys: String, CodingKey {
        case olderThan = "older_than"
    }
}

/// Result of `purge`.
package struct PurgeResult: Codable, Hashable, Sendable {
    /// The files emptied (their places in the Trash).
    package var purged: [String]
    package var freedBytes: Int64
    /// Files that stay, with why.
    package var failed: [RestoreResult.Refused]

    package init(purged: [String], freedBytes: Int64, failed: [RestoreResult.Refused]) {
        self.purged = purged
        self.freedBytes = freedBytes
        self.failed = failed
    }

    enum CodingKeys: String, CodingKey {
        case purged
        case freedBytes = "freed_bytes"
        case failed
    }
}
