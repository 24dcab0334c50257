// The catalogue's commands in the domain's terms. The router builds them from requests
// (`Router+Podcasts.swift`), checking there which field combinations a request may have.

/// `subscribe`: one feed, by its URL or by its iTunes id, and how its episodes download.
package struct SubscribeCommand: Sendable, Hashable {
    package enum Feed: Sendable, Hashable {
        case url(String)
        /// Looked up in the directory.
        case itunesID(Int64)
    }

    package struct Credentials: Sendable, Hashable {
        package var user: String
        package var password: String

        package init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    package var feed: Feed
    /// Given apart from the URL; they take the place of any written into it.
    package var credentials: Credentials?
    package var autoDownload: EpisodePolicy.Fetch?
    /// 0 keeps every episode.
    package var keep: Int?

    package init(
        feed: Feed,
        credentials: Credentials? = nil,
        autoDownload: EpisodePolicy.Fetch? = nil,
        keep: Int? = nil
    ) {
        self.feed = feed
        self.credentials = credentials
        self.autoDownload = autoDownload
        self.keep = keep
    }
}

/// `unsubscribe`.
package struct UnsubscribeCommand: Sendable, Hashable {
    /// An id or a title (``Subscriptions/resolve(_:)``).
    package var podcast: String
    package var deleteFiles: Bool

    package init(podcast: String, deleteFiles: Bool = false) {
        self.podcast = podcast
        self.deleteFiles = deleteFiles
    }
}

/// `episodes`: which episodes of a podcast to list.
package struct EpisodeQuery: Sendable, Hashable {
    package var podcast: String
    package var onlyNew: Bool
    package var unplayed: Bool
    package var limit: Int?
    /// Without descriptions and enclosure URLs.
    package var brief: Bool

    package init(podcast: String, onlyNew: Bool = false, unplayed: Bool = false, limit: Int? = nil, brief: Bool = false)
    {
        self.podcast = podcast
        self.onlyNew = onlyNew
        self.unplayed = unplayed
        self.limit = limit
        self.brief = brief
    }
}

/// A podcast's settings to change (`set`), or to try without storing them (`rules`); `nil` leaves one as it is.
package struct PodcastChange: Sendable, Hashable {
    package var podcast: String
    package var autoDownload: EpisodePolicy.Fetch?
    /// 0 keeps every episode.
    package var keep: Int?
    /// Empty goes back to the configured template.
    package var nameTemplate: String?
    /// Empty goes back to the podcast's title.
    package var folder: String?
    /// Seconds; 0 goes back to the configured interval.
    package var refreshInterval: Int?
    /// Rules by name; an empty value removes the podcast's own.
    package var rules: [String: String]?

    package init(
        podcast: String,
        autoDownload: EpisodePolicy.Fetch? = nil,
        keep: Int? = nil,
        nameTemplate: String? = nil,
        folder: String? = nil,
        refreshInterval: Int? = nil,
        rules: [String: String]? = nil
    ) {
        self.podcast = podcast
        self.autoDownload = autoDownload
        self.keep = keep
        self.nameTemplate = nameTemplate
        self.folder = folder
        self.refreshInterval = refreshInterval
        self.rules = rules
    }
}

/// `download`: a podcast's newest episodes.
package struct DownloadLatestCommand: Sendable, Hashable {
    package var podcast: String
    package var latest: Int
    /// Pass the download gate.
    package var now: Bool

    package init(podcast: String, latest: Int, now: Bool = false) {
        self.podcast = podcast
        self.latest = latest
        self.now = now
    }
}

/// `enqueue` with episodes: the episodes, and plain URL requests the queue already validated, queued together.
package struct EpisodeEnqueueCommand: Sendable, Hashable {
    package var episodes: [Int64]
    package var priority: Int?
    /// Pass the download gate.
    package var now: Bool
    package var urls: [DownloadRequest]

    package init(episodes: [Int64], priority: Int? = nil, now: Bool = false, urls: [DownloadRequest] = []) {
        self.episodes = episodes
        self.priority = priority
        self.now = now
        self.urls = urls
    }
}
