import SinglecastSupport

/// What the daemon downloads by itself after each refresh of a podcast.
///
/// On the wire a string: `off`, `all-new` (every episode that appears after subscribing) or `latest:N` (the
/// N newest episodes, kept downloaded as new ones arrive).
package enum AutoDownload: Hashable, Sendable, Codable, CustomStringConvertible {
    case off
    case allNew
    case latest(Int)

    /// Parses `off`, `all-new`, `latest:N` (also `latest N`); `nil` for anything else.
    package init?(_ text: String) {
        let trimmed = text.trimmingWhitespace().lowercased()
        switch trimmed {
        case "off", "none": self = .off
        case "all-new", "all_new", "new": self = .allNew
        default:
            let parts = trimmed.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "=" })
            guard parts.count == 2, parts[0] == "latest", let count = Int(parts[1]), (1...10_000).contains(count)
            else { return nil }
            self = .latest(count)
        }
    }

    package var description: String {
        switch self {
        case .off: "off"
        case .allNew: "all-new"
        case .latest(let count): "latest:\(count)"
        }
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = AutoDownload(text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "'\(text)' is not an auto-download policy; use off, all-new or latest:N"
                )
            )
        }
        self = value
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// One subscription as `podcasts`, `subscribe` and the `podcast.*` events report it. Credentials never appear.
package struct PodcastInfo: Codable, Hashable, Sendable {
    package var id: Int64
    package var title: String
    package var author: String?
    package var feedURL: String
    package var link: String?
    package var description: String
    package var artworkURL: String?
    /// The cached artwork file, once downloaded.
    package var artworkPath: String?
    package var itunesID: Int64?
    package var episodes: Int
    /// Episodes not yet downloaded or seen since they appeared.
    package var newEpisodes: Int
    package var autoDownload: AutoDownload
    /// How many downloaded episodes to keep (older files are deleted); `nil`: keep all.
    package var keep: Int?
    /// ISO 8601 UTC of the last refresh attempt and of the last successful one.
    package var refreshedAt: String?
    package var succeededAt: String?
    package var nextRefreshAt: String?
    /// Why the last refresh failed; the episodes from the last good refresh stay.
    package var lastError: String?
    /// The feed answered `410 Gone`; it is asked again once a day, and any other answer clears this.
    package var gone: Bool
    package var hasCredentials: Bool
    /// Items of the last good refresh left out because an earlier item had the same guid (or identity).
    package var duplicateItems: Int
    /// Settings of this podcast's own, when set: its `name_template`, the folder `{podcast}` stands for, and its
    /// refresh interval in seconds.
    package var nameTemplate: String?
    package var folder: String?
    package var refreshInterval: Int?
    /// The podcast's own episode rules, by key; the configured ones are not repeated.
    package var rules: [String: String]?

    package init(
        id: Int64,
        title: String,
        author: String?,
        feedURL: String,
        link: String?,
        description: String,
        artworkURL: String?,
        artworkPath: String?,
        itunesID: Int64?,
        episodes: Int,
        newEpisodes: Int,
        autoDownload: AutoDownload,
        keep: Int?,
        refreshedAt: String?,
        succeededAt: String?,
        nextRefreshAt: String?,
        lastError: String?,
        gone: Bool,
        hasCredentials: Bool,
        duplicateItems: Int = 0,
        nameTemplate: String? = nil,
        folder: String? = nil,
        refreshInterval: Int? = nil,
        rules: [String: String]? = nil
    ) {
        self.rules = rules
        self.duplicateItems = duplicateItems
        self.nameTemplate = nameTemplate
        self.folder = folder
        self.refreshInterval = refreshInterval
        self.id = id
        self.title = title
        self.author = author
        self.feedURL = feedURL
        self.link = link
        self.description = description
        self.artworkURL = artworkURL
        self.artworkPath = artworkPath
        self.itunesID = itunesID
        self.episodes = episodes
        self.newEpisodes = newEpisodes
        self.autoDownload = autoDownload
        self.keep = keep
        self.refreshedAt = refreshedAt
        self.succeededAt = succeededAt
        self.nextRefreshAt = nextRefreshAt
        self.lastError = lastError
        self.gone = gone
        self.hasCredentials = hasCredentials
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case title
        case author
        case feedURL = "feed_url"
        case link
        case description
        case artworkURL = "artwork_url"
        case artworkPath = "artwork_path"
        case itunesID = "itunes_id"
        case episodes
        case newEpisodes = "new_episodes"
        case autoDownload = "auto_download"
        case keep
        case refreshedAt = "refreshed_at"
        case succeededAt = "succeeded_at"
        case nextRefreshAt = "next_refresh_at"
        case lastError = "last_error"
        case gone
        case hasCredentials = "has_credentials"
        case duplicateItems = "duplicate_items"
        case nameTemplate = "name_template"
        case folder
        case refreshInterval = "refresh_interval"
        case rules
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        author = try container.decodeIfPresent(String.self, forKey: .author)
        feedURL = try container.decode(String.self, forKey: .feedURL)
        link = try container.decodeIfPresent(String.self, forKey: .link)
        description = try container.decode(String.self, forKey: .description)
        artworkURL = try container.decodeIfPresent(String.self, forKey: .artworkURL)
        artworkPath = try container.decodeIfPresent(String.self, forKey: .artworkPath)
        itunesID = try container.decodeIfPresent(Int64.self, forKey: .itunesID)
        episodes = try container.decode(Int.self, forKey: .episodes)
        newEpisodes = try container.decode(Int.self, forKey: .newEpisodes)
        autoDownload = try container.decode(AutoDownload.self, forKey: .autoDownload)
        keep = try container.decodeIfPresent(Int.self, forKey: .keep)
        refreshedAt = try container.decodeIfPresent(String.self, forKey: .refreshedAt)
        succeededAt = try container.decodeIfPresent(String.self, forKey: .succeededAt)
        nextRefreshAt = try container.decodeIfPresent(String.self, forKey: .nextRefreshAt)
        lastError = try container.decodeIfPresent(String.self, forKey: .lastError)
        gone = try container.decode(Bool.self, forKey: .gone)
        hasCredentials = try container.decode(Bool.self, forKey: .hasCredentials)
        // Absent from daemons before it was added.
        duplicateItems = try container.decodeIfPresent(Int.self, forKey: .duplicateItems) ?? 0
        nameTemplate = try container.decodeIfPresent(String.self, forKey: .nameTemplate)
        folder = try container.decodeIfPresent(String.self, forKey: .folder)
        refreshInterval = try container.decodeIfPresent(Int.self, forKey: .refreshInterval)
        rules = try container.decodeIfPresent([String: String].self, forKey: .rules)
    }
}

/// One episode as `episodes` reports it.
package struct EpisodeInfo: Codable, Hashable, Sendable {
    package var id: Int64
    package var podcastID: Int64
    package var title: String
    /// Plain text (HTML stripped).
    package var description: String
    package var guid: String?
    package var link: String?
    /// ISO 8601 UTC.
    package var published: String?
    package var durationSeconds: Int?
    package var enclosureURL: String?
    package var enclosureType: String?
    package var enclosureLength: Int64?
    package var season: Int?
    package var episode: Int?
    package var chaptersURL: String?
    package var transcriptURL: String?
    /// Not yet downloaded or marked seen.
    package var isNew: Bool
    /// The download of this episode, once queued.
    package var downloadID: Int64?
    package var downloadState: DownloadState?
    package var file: String?
    /// `itunes:episodeType`: `full`, `trailer` or `bonus`.
    package var episodeType: String?
    /// ISO 8601 UTC: when the listener marked it played.
    package var playedAt: String?
    /// `true` when pinned: no rule deletes its file. Absent otherwise.
    package var pinned: Bool?
    /// Why the podcast's rules do not download it (`title excludes "trailer"`).
    package var skipped: String?
    /// Its chapters and transcript files (`episode` only; absent from lists and when there are none).
    package var sidecars: [EpisodeSidecarInfo]?

    package init(
        id: Int64,
        podcastID: Int64,
        title: String,
        description: String,
        guid: String?,
        link: String?,
        published: String?,
        durationSeconds: Int?,
        enclosureURL: String?,
        enclosureType: String?,
        enclosureLength: Int64?,
        season: Int?,
        episode: Int?,
        chaptersURL: String?,
        transcriptURL: String?,
        isNew: Bool,
        downloadID: Int64?,
        downloadState: DownloadState?,
        file: String?,
        episodeType: String? = nil,
        playedAt: String? = nil,
        pinned: Bool? = nil,
        skipped: String? = nil
    ) {
        self.episodeType = episodeType
        self.playedAt = playedAt
        self.pinned = pinned
        self.skipped = skipped
        self.id = id
        self.podcastID = podcastID
        self.title = title
        self.description = description
        self.guid = guid
        self.link = link
        self.published = published
        self.durationSeconds = durationSeconds
        self.enclosureURL = enclosureURL
        self.enclosureType = enclosureType
        self.enclosureLength = enclosureLength
        self.season = season
        self.episode = episode
        self.chaptersURL = chaptersURL
        self.transcriptURL = transcriptURL
        self.isNew = isNew
        self.downloadID = downloadID
        self.downloadState = downloadState
        self.file = file
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case podcastID = "podcast_id"
        case title
        case description
        case guid
        case link
        case published
        case durationSeconds = "duration_seconds"
        case enclosureURL = "enclosure_url"
        case enclosureType = "enclosure_type"
        case enclosureLength = "enclosure_length"
        case season
        case episode
        case chaptersURL = "chapters_url"
        case transcriptURL = "transcript_url"
        case isNew = "new"
        case downloadID = "download_id"
        case downloadState = "download_state"
        case file
        case episodeType = "episode_type"
        case playedAt = "played_at"
        case pinned
        case skipped
        case sidecars
    }
}

/// Params of `subscribe`: exactly one of `url` and `itunes_id`.
package struct SubscribeParams: Codable, Hashable, Sendable {
    package var url: String?
    package var itunesID: Int64?
    /// Basic auth for a private feed; credentials written into the URL are moved here.
    package var user: String?
    package var password: String?
    package var autoDownload: AutoDownload?
    package var keep: Int?
    /// Episode rules of the podcast's own, by key, as `set` takes them: applied before anything is downloaded.
    package var rules: [String: String]?

    package init(
        url: String? = nil,
        itunesID: Int64? = nil,
        user: String? = nil,
        password: String? = nil,
        autoDownload: AutoDownload? = nil,
        keep: Int? = nil,
        rules: [String: String]? = nil
    ) {
        self.rules = rules
        self.url = url
        self.itunesID = itunesID
        self.user = user
        self.password = password
        self.autoDownload = autoDownload
        self.keep = keep
    }

    enum CodingKeys: String, CodingKey {
        case url
        case itunesID = "itunes_id"
        case user
        case password
        case autoDownload = "auto_download"
        case keep
        case rules
    }
}

/// Result of `subscribe`.
package struct SubscribeResult: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo
    /// `true` when the feed was already subscribed (nothing changed but the given settings).
    package var existing: Bool
    /// Downloads the auto-download policy queued.
    package var queued: [Int64]
    /// The URL given answered a web page: the feed found on it, and the others it names.
    package var discovered: Discovered?

    package struct Discovered: Codable, Hashable, Sendable {
        package var page: String
        package var feed: String
        package var others: [String]

        package init(page: String, feed: String, others: [String]) {
            self.page = page
            self.feed = feed
            self.others = others
        }
    }

    package init(podcast: PodcastInfo, existing: Bool, queued: [Int64], discovered: Discovered? = nil) {
        self.podcast = podcast
        self.existing = existing
        self.queued = queued
        self.discovered = discovered
    }
}

/// Params naming one podcast: its id, or part of its title that matches one podcast only (the daemon's `TitleMatch`).
package struct PodcastSelector: Codable, Hashable, Sendable {
    package var podcast: String

    package init(podcast: String) { self.podcast = podcast }
}

/// Params of `unsubscribe`.
package struct UnsubscribeParams: Codable, Hashable, Sendable {
    package var podcast: String
    /// Also deletes its downloaded files (and cancels its unfinished downloads, which happens anyway).
    package var deleteFiles: Bool?

    package init(podcast: String, deleteFiles: Bool? = nil) {
        self.podcast = podcast
        self.deleteFiles = deleteFiles
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case deleteFiles = "delete_files"
    }
}

/// Result of `unsubscribe`.
package struct UnsubscribeResult: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo
    package var cancelledDownloads: [Int64]
    package var deletedFiles: [String]

    package init(podcast: PodcastInfo, cancelledDownloads: [Int64], deletedFiles: [String]) {
        self.podcast = podcast
        self.cancelledDownloads = cancelledDownloads
        self.deletedFiles = deletedFiles
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case cancelledDownloads = "cancelled_downloads"
        case deletedFiles = "deleted_files"
    }
}

/// Params of `podcasts`: without them, every subscription; with them, one page of the listing.
package struct PodcastsParams: Codable, Hashable, Sendable {
    /// At most this many podcasts, at least 1 (default: all).
    package var limit: Int?
    /// Only podcasts whose id is greater: the `next` of the page before.
    package var after: Int64?

    package init(limit: Int? = nil, after: Int64? = nil) {
        self.limit = limit
        self.after = after
    }
}

/// Result of `podcasts`.
package struct PodcastsResult: Codable, Hashable, Sendable {
    package var podcasts: [PodcastInfo]
    /// The `after` of the next page; absent when no podcast follows.
    package var next: Int64?

    package init(podcasts: [PodcastInfo], next: Int64? = nil) {
        self.podcasts = podcasts
        self.next = next
    }
}

/// Params of `episodes`.
package struct EpisodesParams: Codable, Hashable, Sendable {
    package var podcast: String
    /// Only episodes not yet downloaded or seen.
    package var new: Bool?
    /// Newest first; at most this many (default: all).
    package var limit: Int?
    /// Only what a list shows: `description` is empty and `guid`, `link`, the enclosure, season and episode
    /// numbers, chapters and transcript are left out. A podcast's 100,000 episodes are a third of the bytes.
    package var brief: Bool?
    /// Only episodes not marked played.
    package var unplayed: Bool?

    package init(podcast: String, new: Bool? = nil, limit: Int? = nil, brief: Bool? = nil, unplayed: Bool? = nil) {
        self.podcast = podcast
        self.new = new
        self.limit = limit
        self.brief = brief
        self.unplayed = unplayed
    }
}

/// Result of `episodes`.
package struct EpisodesResult: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo
    package var episodes: [EpisodeInfo]

    package init(podcast: PodcastInfo, episodes: [EpisodeInfo]) {
        self.podcast = podcast
        self.episodes = episodes
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case podcast
        case episodes
    }
}

/// Params of `refresh`: one podcast, or every one when `podcast` is absent.
package struct RefreshParams: Codable, Hashable, Sendable {
    package var podcast: String?
    /// Only what changed in full: the podcasts whose feed answered 304 are listed by id in
    /// ``RefreshResult/notModified``, not as entries (a refresh of 1,000 unchanged feeds answers in a few KB).
    package var brief: Bool?

    package init(podcast: String? = nil, brief: Bool? = nil) {
        self.podcast = podcast
        self.brief = brief
    }
}

/// Result of `refresh`: one entry per podcast refreshed, or, when brief, per podcast whose feed did not answer 304.
package struct RefreshResult: Codable, Hashable, Sendable {
    package struct Entry: Codable, Hashable, Sendable {
        package var podcast: PodcastInfo
        /// `updated`, `not_modified`, `moved`, `gone` or `failed`.
        package var outcome: String
        package var newEpisodes: Int
        package var queued: [Int64]
        package var error: String?

        package init(podcast: PodcastInfo, outcome: String, newEpisodes: Int, queued: [Int64], error: String?) {
            self.podcast = podcast
            self.outcome = outcome
            self.newEpisodes = newEpisodes
            self.queued = queued
            self.error = error
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case podcast
            case outcome
            case newEpisodes = "new_episodes"
            case queued
            case error
        }
    }

    package var refreshed: [Entry]
    /// A brief answer's podcasts whose feed answered 304, by id; absent from a full answer, where they are entries.
    package var notModified: [Int64]?

    package init(refreshed: [Entry], notModified: [Int64]? = nil) {
        self.refreshed = refreshed
        self.notModified = notModified
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case refreshed
        case notModified = "not_modified"
    }
}

/// Params of `set`: changes a podcast's download policy.
package struct SetPodcastParams: Codable, Hashable, Sendable {
    package var podcast: String
    package var autoDownload: AutoDownload?
    /// A number of episodes to keep, or 0 to keep all.
    package var keep: Int?

    /// This podcast's own `name_template`; `""` goes back to the configured one.
    package var nameTemplate: String?
    /// The folder name that `{podcast}` stands for (default: the podcast's title); `""` goes back to the title.
    package var folder: String?
    /// This podcast's own refresh interval in seconds; 0 goes back to the configured `refresh_interval`.
    package var refreshInterval: Int?
    /// Episode rules of its own, by key (`title_exclude`), written as in the configuration; `""` goes back to the
    /// configured rule.
    package var rules: [String: String]?
    /// A new feed URL (http or https): the feed moved, or answered 410. It is fetched at once.
    package var feedURL: String?

    package init(
        podcast: String,
        autoDownload: AutoDownload? = nil,
        keep: Int? = nil,
        nameTemplate: String? = nil,
        folder: String? = nil,
        refreshInterval: Int? = nil,
        rules: [String: String]? = nil,
        feedURL: String? = nil
    ) {
        self.rules = rules
        self.feedURL = feedURL
        self.podcast = podcast
        self.autoDownload = autoDownload
        self.keep = keep
        self.nameTemplate = nameTemplate
        self.folder = folder
        self.refreshInterval = refreshInterval
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case autoDownload = "auto_download"
        case keep
        case nameTemplate = "name_template"
        case folder
        case refreshInterval = "refresh_interval"
        case feedURL = "feed_url"
        case rules
    }
}

/// Params of `download`: queues a podcast's newest episodes.
package struct DownloadLatestParams: Codable, Hashable, Sendable {
    package var podcast: String
    package var latest: Int
    /// Run outside the download windows and on a metered network, as `enqueue`'s `now`.
    package var now: Bool?

    package init(podcast: String, latest: Int, now: Bool? = nil) {
        self.podcast = podcast
        self.latest = latest
        self.now = now
    }
}

/// Params of `delete` and `redownload`: episodes by id.
package struct EpisodeSelectionParams: Codable, Hashable, Sendable {
    package var episodes: [Int64]

    package init(episodes: [Int64]) { self.episodes = episodes }
}

/// Result of `delete`.
package struct DeleteResult: Codable, Hashable, Sendable {
    /// The episodes that had a file or a download and no longer have one.
    package var episodes: [Int64]
    /// Files deleted.
    package var deletedFiles: [String]
    /// Files another episode (of another podcast) still refers to, so they stay.
    package var keptFiles: [String]
    /// Where each deleted file is in the Trash, by its old path; absent with `use_trash = false`.
    package var trashedTo: [String: String]?

    package init(episodes: [Int64], deletedFiles: [String], keptFiles: [String], trashedTo: [String: String]? = nil) {
        self.episodes = episodes
        self.deletedFiles = deletedFiles
        self.keptFiles = keptFiles
        self.trashedTo = trashedTo
    }

    enum CodingKeys: String, CodingKey {
        case episodes
        case deletedFiles = "deleted_files"
        case keptFiles = "kept_files"
        case trashedTo = "trashed_to"
    }
}

/// Params of `inbox`.
package struct InboxParams: Codable, Hashable, Sendable {
    /// At most this many episodes (default: all).
    package var limit: Int?

    package init(limit: Int? = nil) { self.limit = limit }
}

/// Result of `inbox`: new episodes of every podcast, newest first, and the podcasts they belong to.
package struct InboxResult: Codable, Hashable, Sendable {
    package var episodes: [EpisodeInfo]
    package var podcasts: [PodcastInfo]

    package init(episodes: [EpisodeInfo], podcasts: [PodcastInfo]) {
        self.episodes = episodes
        self.podcasts = podcasts
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case episodes
        case podcasts
    }
}

/// Params of `import`: the OPML document's text (the client reads the file, which the daemon may not see).
package struct ImportParams: Codable, Hashable, Sendable {
    package var opml: String

    package init(opml: String) { self.opml = opml }
}

/// Result of `import`: one entry per feed in the document.
package struct ImportResult: Codable, Hashable, Sendable {
    package struct Entry: Codable, Hashable, Sendable {
        package var url: String
        package var title: String?
        /// `subscribed`, `already` or `failed`.
        package var outcome: String
        package var podcastID: Int64?
        package var error: String?

        package init(url: String, title: String?, outcome: String, podcastID: Int64?, error: String?) {
            self.url = url
            self.title = title
            self.outcome = outcome
            self.podcastID = podcastID
            self.error = error
        }

        enum CodingKeys: String, CodingKey {
            case url
            case title
            case outcome
            case podcastID = "podcast_id"
            case error
        }
    }

    package var feeds: [Entry]

    package init(feeds: [Entry]) { self.feeds = feeds }
}

/// Result of `export`: an OPML 2.0 document of every subscription.
package struct ExportResult: Codable, Hashable, Sendable {
    package var opml: String
    package var count: Int

    package init(opml: String, count: Int) {
        self.opml = opml
        self.count = count
    }
}

/// The events of the `podcasts` topic; each carries a ``PodcastEventParams``.
package enum PodcastEvent: String, CaseIterable, Codable, Sendable {
    case subscribed = "podcast.subscribed"
    case refreshed = "podcast.refreshed"
    case unsubscribed = "podcast.unsubscribed"
}

/// Params of every `podcast.*` event.
package struct PodcastEventParams: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo
    /// For `podcast.refreshed`: how many episodes appeared.
    package var newEpisodes: Int?

    package init(podcast: PodcastInfo, newEpisodes: Int? = nil) {
        self.podcast = podcast
        self.newEpisodes = newEpisodes
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case newEpisodes = "new_episodes"
    }
}

/// Result of `set`: the podcast with its new settings.
package struct PodcastResult: Codable, Hashable, Sendable {
    package var podcast: PodcastInfo

    package init(podcast: PodcastInfo) { self.podcast = podcast }
}
