// The catalogue's commands in the domain's terms. The router builds them from requests (`Router+Podcasts.swift`),
// checking there which field combinations a request may have; their memberwise initializers serve it and the tests.

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
    }

    package var feed: Feed
    /// Given apart from the URL; they take the place of any written into it.
    package var credentials: Credentials?
    package var autoDownload: EpisodePolicy.Fetch?
    /// 0 keeps every episode.
    package var keep: Int?
    /// The podcast's own rules, as ``PodcastChange/rules``: in force before its first download.
    package var rules: [String: String]? = nil
}

/// `unsubscribe`.
package struct UnsubscribeCommand: Sendable, Hashable {
    /// An id or a title (``Subscriptions/resolve(_:)``).
    package var podcast: String
    package var deleteFiles = false
}

/// The `limit` of every listing (`podcasts`, `episodes`, `inbox`, `downloads`): at most this many, at least 1; `nil`
/// lists all. The one place that says which limits are refused, so every listing refuses them alike.
package enum ListingLimit {
    /// - Throws: ``PodcastError`` `invalid_params` naming `limit` when it is below 1.
    package static func check(_ limit: Int?) throws(PodcastError) {
        if let limit, limit < 1 { throw .invalid("'limit' must be at least 1", parameter: "limit") }
    }
}

/// `podcasts`: which page of the subscriptions to list, in id order; checked when made.
///
/// The cursor is a podcast id (keyset paging), not a position: a podcast subscribed or unsubscribed between two pages
/// moves no other podcast from one page to another, so none is listed twice or skipped. A new subscription takes an id
/// greater than every podcast's now (SQLite's rowid), so it shows up on a later page, unless every podcast from the
/// cursor on left meanwhile: the ids of podcasts gone from the end are given again.
package struct PodcastPage: Sendable, Hashable {
    /// Only podcasts whose id is greater.
    package var after: Int64?
    package var limit: Int?

    package init(after: Int64? = nil, limit: Int? = nil) throws(PodcastError) {
        try ListingLimit.check(limit)
        self.after = after
        self.limit = limit
    }

    /// Every podcast at once, as `podcasts` without parameters answers.
    package var isWhole: Bool { after == nil && limit == nil }
}

/// `episodes`: which episodes of a podcast to list.
package struct EpisodeQuery: Sendable, Hashable {
    package var podcast: String
    package var onlyNew = false
    package var unplayed = false
    package var limit: Int?
    /// Without descriptions and enclosure URLs.
    package var brief = false
}

/// A podcast's settings to change (`set`), or to try without storing them (`rules`); `nil` leaves one as it is.
package struct PodcastChange: Sendable, Hashable {
    package var podcast: String
    package var autoDownload: EpisodePolicy.Fetch?
    /// 0 keeps every episode.
    package var keep: Int?
    /// Empty goes back to the configured template.
    package var nameTemplate: String?
    /// Empty removes the podcast's own.
    package var folder: String?
    /// Seconds; 0 goes back to the configured interval.
    package var refreshInterval: Int?
    /// Rules by name, each as ``EpisodeRules/set(_:to:)`` reads its value.
    package var rules: [String: String]?
    /// A new feed URL (`set` only).
    package var feedURL: String? = nil
}

/// `download`: a podcast's newest episodes.
package struct DownloadLatestCommand: Sendable, Hashable {
    package var podcast: String
    package var latest: Int
    /// Pass the download gate.
    package var now = false
}

/// `enqueue` with episodes: the episodes, and plain URL requests the queue already validated, queued together.
package struct EpisodeEnqueueCommand: Sendable, Hashable {
    package var episodes: [Int64]
    package var priority: Int?
    /// Pass the download gate.
    package var now = false
    package var urls: [DownloadRequest] = []
}
