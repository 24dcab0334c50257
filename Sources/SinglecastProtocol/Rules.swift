/// Params of `played`, `unplayed`, `pin` and `unpin`: episodes by id, or with `all`, every episode of `podcast`.
package struct EpisodeMarkParams: Codable, Hashable, Sendable {
    package var episodes: [Int64]?
    package var podcast: String?
    /// Marks every episode of `podcast` (required with it, so that a podcast is never marked by accident).
    package var all: Bool?

    package init(episodes: [Int64]? = nil, podcast: String? = nil, all: Bool? = nil) {
        self.episodes = episodes
        self.podcast = podcast
        self.all = all
    }
}

/// Result of `played`, `unplayed`, `pin` and `unpin`.
package struct EpisodeMarkResult: Codable, Hashable, Sendable {
    /// Episodes whose mark changed.
    package var changed: [Int64]
    /// Episodes that had the mark already.
    package var unchanged: [Int64]

    package init(changed: [Int64], unchanged: [Int64]) {
        self.changed = changed
        self.unchanged = unchanged
    }
}

/// Params of `rules`: what a podcast's rules download and delete now, also for `changes` not yet applied.
package struct RulesParams: Codable, Hashable, Sendable {
    package var podcast: String
    /// Rule changes to try without storing them, as `set`'s `rules` takes them; `auto_download` and `keep` too.
    package var changes: [String: String]?
    package var autoDownload: AutoDownload?
    package var keep: Int?

    package init(
        podcast: String,
        changes: [String: String]? = nil,
        autoDownload: AutoDownload? = nil,
        keep: Int? = nil
    ) {
        self.podcast = podcast
        self.changes = changes
        self.autoDownload = autoDownload
        self.keep = keep
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case changes
        case autoDownload = "auto_download"
        case keep
    }
}

/// Result of `rules`.
package struct RulesResult: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo
    /// Whether `changes` were tried (nothing was stored either way).
    package var dryRun: Bool
    package var autoDownload: AutoDownload
    package var keep: Int?
    /// Every rule that applies, with where it comes from.
    package var rules: [Rule]
    /// Episodes the rules would queue now.
    package var download: [Episode]
    /// Downloaded files the rules would delete now, with the reason.
    package var delete: [Episode]
    /// Episodes the rules skip, with the reason.
    package var skipped: [Episode]

    package struct Rule: Codable, Hashable, Sendable {
        package var key: String
        package var value: String
        /// `podcast` (its own, set with `set`) or `configuration` (the default).
        package var source: String

        package init(key: String, value: String, source: String) {
            self.key = key
            self.value = value
            self.source = source
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case key
            case value
            case source
        }
    }

    package struct Episode: Codable, Hashable, Sendable {
        package var id: Int64
        package var title: String
        /// ISO 8601 UTC.
        package var published: String?
        package var reason: String?

        package init(id: Int64, title: String, published: String?, reason: String?) {
            self.id = id
            self.title = title
            self.published = published
            self.reason = reason
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id
            case title
            case published
            case reason
        }
    }

    package init(
        podcast: PodcastInfo,
        dryRun: Bool,
        autoDownload: AutoDownload,
        keep: Int?,
        rules: [Rule],
        download: [Episode],
        delete: [Episode],
        skipped: [Episode]
    ) {
        self.podcast = podcast
        self.dryRun = dryRun
        self.autoDownload = autoDownload
        self.keep = keep
        self.rules = rules
        self.download = download
        self.delete = delete
        self.skipped = skipped
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case podcast
        case dryRun = "dry_run"
        case autoDownload = "auto_download"
        case keep
        case rules
        case download
        case delete
        case skipped
    }
}

/// Params of the `episode.played`, `episode.unplayed` and `episode.deleted` events.
package struct EpisodeEventParams: Codable, Hashable, Sendable {
    package var episode: Int64
    package var podcast: Int64
    package var title: String
    /// ISO 8601 UTC: when it was played, or when its file was deleted.
    package var at: String
    /// `episode.deleted`: the file that went, where it went (the Trash, or nowhere) and why.
    package var file: String?
    package var trashedTo: String?
    package var reason: String?

    package init(
        episode: Int64,
        podcast: Int64,
        title: String,
        at: String,
        file: String? = nil,
        trashedTo: String? = nil,
        reason: String? = nil
    ) {
        self.episode = episode
        self.podcast = podcast
        self.title = title
        self.at = at
        self.file = file
        self.trashedTo = trashedTo
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case episode
        case podcast
        case title
        case at
        case file
        case trashedTo = "trashed_to"
        case reason
    }
}

/// Params of `podcast`.
package struct PodcastParams: Codable, Hashable, Sendable {
    /// An id or part of one podcast's title (see ``PodcastSelector``).
    package var podcast: String

    package init(podcast: String) { self.podcast = podcast }
}

/// Result of `podcast`: the podcast, the rules that apply to it, and the disk its downloaded files take.
package struct PodcastDetailResult: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo
    package var rules: [RulesResult.Rule]
    /// Completed downloads of its episodes.
    package var files: Int
    /// Their bytes, as downloaded.
    package var diskBytes: Int64

    package init(podcast: PodcastInfo, rules: [RulesResult.Rule], files: Int, diskBytes: Int64) {
        self.podcast = podcast
        self.rules = rules
        self.files = files
        self.diskBytes = diskBytes
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case rules
        case files
        case diskBytes = "disk_bytes"
    }
}

/// Params of the `episode.marked` event: one mark of many episodes (or any pin), one event for all of them.
package struct EpisodesMarkedParams: Codable, Hashable, Sendable {
    /// `played`, `unplayed`, `pinned` or `unpinned`.
    package var mark: String
    /// The episodes whose mark changed.
    package var episodes: [Int64]
    package var count: Int
    /// The podcast, when every episode of it was marked (`all: true`).
    package var podcast: Int64?
    /// ISO 8601 UTC.
    package var at: String

    package init(mark: String, episodes: [Int64], podcast: Int64?, at: String) {
        self.mark = mark
        self.episodes = episodes
        self.count = episodes.count
        self.podcast = podcast
        self.at = at
    }
}

/// The events of the `episodes` topic.
package enum EpisodeEvent: String, CaseIterable, Codable, Sendable {
    case played = "episode.played"
    case unplayed = "episode.unplayed"
    case marked = "episode.marked"
    case deleted = "episode.deleted"
}
