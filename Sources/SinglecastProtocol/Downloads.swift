/// The lifecycle of one download, as clients see it.
package enum DownloadState: String, CaseIterable, Codable, Sendable {
    /// Waiting for a free slot, or for its next retry time (`next_retry_at`).
    case queued
    /// Transferring now.
    case active
    /// Held by the user (`pause`) or by the daemon (`pause_reason`, e.g. `disk_full`); `resume` releases it.
    case paused
    /// Gave up: a permanent HTTP error or too many attempts; `retry` queues it again.
    case failed
    /// The file is complete, verified and in its final place.
    case completed
    /// Cancelled by the user; seen only in the `download.removed` event that forgets it.
    case cancelled
}

/// A failure recorded on a download, with a stable code such as `http_status` or `network`.
package struct DownloadErrorInfo: Codable, Hashable, Sendable {
    package var code: String
    package var message: String
    /// The HTTP status, when the server answered with an error.
    package var httpStatus: Int?

    package init(code: String, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case code
        case message
        case httpStatus = "http_status"
    }
}

/// One download as `downloads`, `show` and the `download.*` events report it. Secrets never appear here.
package struct DownloadInfo: Codable, Hashable, Sendable {
    package var id: Int64
    package var url: String
    /// Where the last redirect chain ended; `nil` before the first response.
    package var finalURL: String?
    /// The final path of the file (while downloading, the bytes are in `<file>.part`).
    package var file: String
    package var state: DownloadState
    /// Why the daemon paused it: `disk_full`, or the download gate's `outside_window` (outside every configured
    /// download window) or `metered` (a metered network); `nil` when the user did or it is not paused. The gate's
    /// pauses end by themselves when it opens.
    package var pauseReason: String?
    /// ISO 8601 UTC time at which a download paused with `outside_window` resumes (the next window opening).
    package var resumesAt: String?
    /// `true` when queued with `now`: it runs outside the download windows and on a metered network.
    package var now: Bool?
    /// Higher runs first; within one priority, lower `position` first.
    package var priority: Int
    package var position: Int64
    package var bytesDone: Int64
    /// `nil` while the size is unknown.
    package var bytesTotal: Int64?
    /// Current speed in bytes per second while active.
    package var speed: Double?
    /// Seconds left at the current speed, when the size is known.
    package var etaSeconds: Double?
    /// ISO 8601 UTC time since which an active transfer has received no bytes; `nil` while bytes arrive or
    /// from a daemon that does not report stalls.
    package var stalledSince: String?
    package var attempts: Int
    package var lastError: DownloadErrorInfo?
    /// ISO 8601 UTC time of the next attempt, while waiting to retry.
    package var nextRetryAt: String?
    /// ISO 8601 UTC.
    package var addedAt: String
    package var completedAt: String?
    /// Extra request headers' names (values are not shown, as they may hold tokens).
    package var headerNames: [String]
    /// Whether Basic credentials are set (they are never shown).
    package var hasCredentials: Bool
    /// The episode the download was made for, with its podcast; `nil` for a download by URL.
    package var episode: DownloadEpisode?
    /// The host whose per-host slots are all taken while this due download waits for one; `nil` otherwise.
    package var waitingForHost: String?

    package init(
        id: Int64,
        url: String,
        finalURL: String?,
        file: String,
        state: DownloadState,
        pauseReason: String?,
        priority: Int,
        position: Int64,
        bytesDone: Int64,
        bytesTotal: Int64?,
        speed: Double?,
        etaSeconds: Double?,
        attempts: Int,
        lastError: DownloadErrorInfo?,
        nextRetryAt: String?,
        addedAt: String,
        completedAt: String?,
        headerNames: [String],
        hasCredentials: Bool,
        stalledSince: String? = nil,
        resumesAt: String? = nil,
        now: Bool? = nil,
        episode: DownloadEpisode? = nil,
        waitingForHost: String? = nil
    ) {
        self.episode = episode
        self.waitingForHost = waitingForHost
        self.id = id
        self.url = url
        self.finalURL = finalURL
        self.file = file
        self.state = state
        self.pauseReason = pauseReason
        self.priority = priority
        self.position = position
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.speed = speed
        self.etaSeconds = etaSeconds
        self.attempts = attempts
        self.lastError = lastError
        self.nextRetryAt = nextRetryAt
        self.addedAt = addedAt
        self.completedAt = completedAt
        self.headerNames = headerNames
        self.hasCredentials = hasCredentials
        self.stalledSince = stalledSince
        self.resumesAt = resumesAt
        self.now = now
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case url
        case finalURL = "final_url"
        case file
        case state
        case pauseReason = "pause_reason"
        case resumesAt = "resumes_at"
        case now
        case priority
        case position
        case bytesDone = "bytes_done"
        case bytesTotal = "bytes_total"
        case speed
        case etaSeconds = "eta_seconds"
        case stalledSince = "stalled_since"
        case attempts
        case lastError = "last_error"
        case nextRetryAt = "next_retry_at"
        case addedAt = "added_at"
        case completedAt = "completed_at"
        case headerNames = "header_names"
        case hasCredentials = "has_credentials"
        case episode
        case waitingForHost = "waiting_for_host"
    }
}

/// The episode a download belongs to, as `downloads` and `show` name it.
package struct DownloadEpisode: Codable, Hashable, Sendable {
    /// The episode's id, as `episodes` lists it (not the download's).
    package var id: Int64
    package var title: String
    package var podcastID: Int64
    /// The podcast's title.
    package var podcast: String

    package init(id: Int64, title: String, podcastID: Int64, podcast: String) {
        self.id = id
        self.title = title
        self.podcastID = podcastID
        self.podcast = podcast
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case title
        case podcastID = "podcast_id"
        case podcast
    }
}

/// Params of `enqueue`.
package struct EnqueueParams: Codable, Hashable, Sendable {
    /// http or https URLs; with `episodes`, at least one of the two.
    package var urls: [String]
    /// Episode ids (see `episodes`), each saved into its podcast's folder under the configured name template.
    package var episodes: [Int64]?
    /// Absolute directory for the files; default: the configured download directory.
    package var directory: String?
    /// File name (only with exactly one URL); default: derived from the URL, sanitized.
    package var name: String?
    /// Extra request headers, `Name: value` each.
    package var headers: [String]?
    /// Basic authentication; both or neither.
    package var user: String?
    package var password: String?
    /// Higher runs first; default 0.
    package var priority: Int?
    /// Run outside the download windows and on a metered network (`--now`), for these downloads only; an existing
    /// download named again is let through too.
    package var now: Bool?

    package init(
        urls: [String],
        directory: String? = nil,
        name: String? = nil,
        headers: [String]? = nil,
        user: String? = nil,
        password: String? = nil,
        priority: Int? = nil,
        episodes: [Int64]? = nil,
        now: Bool? = nil
    ) {
        self.now = now
        self.urls = urls
        self.episodes = episodes
        self.directory = directory
        self.name = name
        self.headers = headers
        self.user = user
        self.password = password
        self.priority = priority
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        urls = try container.decodeIfPresent([String].self, forKey: .urls) ?? []
        episodes = try container.decodeIfPresent([Int64].self, forKey: .episodes)
        directory = try container.decodeIfPresent(String.self, forKey: .directory)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        headers = try container.decodeIfPresent([String].self, forKey: .headers)
        user = try container.decodeIfPresent(String.self, forKey: .user)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority)
        now = try container.decodeIfPresent(Bool.self, forKey: .now)
    }
}

/// Result of `enqueue`: one entry per URL, in order.
package struct EnqueueResult: Codable, Hashable, Sendable {
    package struct Entry: Codable, Hashable, Sendable {
        package var id: Int64
        package var url: String
        /// `true` when this URL was already queued and its existing download is returned.
        package var existing: Bool
        package var file: String
        /// The state of the download now; a daemon that does not send it leaves it `nil`.
        package var state: DownloadState?
        /// Why it is paused (see ``DownloadInfo/pauseReason``); a new download is paused with `outside_window` or
        /// `metered` when the download gate holds it.
        package var pauseReason: String?
        /// The episode this download is for, when the request named episode ids.
        package var episode: DownloadEpisode?

        package init(
            id: Int64,
            url: String,
            existing: Bool,
            file: String,
            state: DownloadState? = nil,
            pauseReason: String? = nil,
            episode: DownloadEpisode? = nil
        ) {
            self.episode = episode
            self.id = id
            self.url = url
            self.existing = existing
            self.file = file
            self.state = state
            self.pauseReason = pauseReason
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id
            case url
            case existing
            case file
            case state
            case pauseReason = "pause_reason"
            case episode
        }
    }

    package var downloads: [Entry]

    package init(downloads: [Entry]) { self.downloads = downloads }
}

/// Params of `downloads`.
package struct DownloadsParams: Codable, Hashable, Sendable {
    /// Only downloads in this state; default: all.
    package var state: DownloadState?
    /// Only the downloads of this podcast's episodes: its id or title, matched as `episodes` matches it.
    package var podcast: String?
    /// At most this many downloads, the first in the listing's order; at least 1.
    package var limit: Int?

    package init(state: DownloadState? = nil, podcast: String? = nil, limit: Int? = nil) {
        self.state = state
        self.podcast = podcast
        self.limit = limit
    }
}

/// Result of `downloads`: unfinished downloads in queue order (active first, then queued and paused by priority and
/// position), then failed ones newest first, then completed ones most recently completed first.
package struct DownloadsResult: Codable, Hashable, Sendable {
    package var downloads: [DownloadInfo]

    package init(downloads: [DownloadInfo]) { self.downloads = downloads }
}

/// Params of `show`.
package struct ShowParams: Codable, Hashable, Sendable {
    package var id: Int64

    package init(id: Int64) { self.id = id }
}

/// Params of `pause`, `resume`, `retry` and `cancel`: some ids, or all.
package struct SelectionParams: Codable, Hashable, Sendable {
    package var ids: [Int64]?
    /// Every download the command applies to (not allowed together with `ids`).
    package var all: Bool?
    /// `cancel` only: delete the partial `<file>.part` too; without it a non-empty partial file stays for the user.
    package var deletePartial: Bool?
    /// `resume` only: the downloads pass the download gate from now on, as if queued with `now`.
    package var now: Bool?

    package init(ids: [Int64]? = nil, all: Bool? = nil, deletePartial: Bool? = nil, now: Bool? = nil) {
        self.ids = ids
        self.all = all
        self.deletePartial = deletePartial
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case ids
        case all
        case deletePartial = "delete_partial"
        case now
    }
}

/// Result of `pause`, `resume`, `retry`, `cancel`, `move` and `clear`: the ids the command changed.
package struct ChangedResult: Codable, Hashable, Sendable {
    package var changed: [Int64]
    /// `resume`: those of `changed` the closed download gate keeps paused; `nil` when none.
    package var held: [Int64]?
    /// `resume`: why the gate is closed (`outside_window` or `metered`) when it holds some.
    package var gate: String?
    /// `move`: the moved download's new priority, when the move changed it.
    package var priority: Int?
    /// `pause`, `resume`, `retry`: the downloads named that were left as they were, and why.
    package var unchanged: [Unchanged]?

    package struct Unchanged: Codable, Hashable, Sendable {
        package var id: Int64
        package var state: String
        /// Why, and what to use instead: `download 1 is completed; use redownload`.
        package var reason: String

        package init(id: Int64, state: String, reason: String) {
            self.id = id
            self.state = state
            self.reason = reason
        }
    }

    package init(
        changed: [Int64],
        held: [Int64]? = nil,
        gate: String? = nil,
        priority: Int? = nil,
        unchanged: [Unchanged]? = nil
    ) {
        self.changed = changed
        self.held = held
        self.gate = gate
        self.priority = priority
        self.unchanged = unchanged
    }
}

/// Params of `move`: exactly one of `top`, `bottom`, `before`.
package struct MoveParams: Codable, Hashable, Sendable {
    package var id: Int64
    package var top: Bool?
    package var bottom: Bool?
    package var before: Int64?

    package init(id: Int64, top: Bool? = nil, bottom: Bool? = nil, before: Int64? = nil) {
        self.id = id
        self.top = top
        self.bottom = bottom
        self.before = before
    }
}

/// Params of `clear`: which finished downloads to forget (their files stay).
package struct ClearParams: Codable, Hashable, Sendable {
    package var completed: Bool?
    package var failed: Bool?
    /// Also delete the partial files of cleared failed downloads (empty ones are always deleted).
    package var deletePartial: Bool?

    package init(completed: Bool? = nil, failed: Bool? = nil, deletePartial: Bool? = nil) {
        self.completed = completed
        self.failed = failed
        self.deletePartial = deletePartial
    }

    enum CodingKeys: String, CodingKey {
        case completed
        case failed
        case deletePartial = "delete_partial"
    }
}

/// Params and result of `limit`: the global speed limit in bytes per second; `null`/0 = unlimited.
/// Without params, `limit` only reports the current limit.
package struct LimitParams: Codable, Hashable, Sendable {
    package var rate: Int64?
    /// Params only: forget the limit `limit` set; the configured `speed_limit` applies again.
    package var reset: Bool?

    package init(rate: Int64?, reset: Bool? = nil) {
        self.rate = rate
        self.reset = reset
    }
}

/// Params of every `download.*` event: the download as it is now.
package struct DownloadEventParams: Codable, Hashable, Sendable {
    package var download: DownloadInfo

    package init(download: DownloadInfo) { self.download = download }
}

/// Names of the download events sent to watchers of the `downloads` topic.
package enum DownloadEvent: String, CaseIterable, Sendable {
    case added = "download.added"
    case started = "download.started"
    /// At most 4 per second per download.
    case progress = "download.progress"
    case paused = "download.paused"
    case resumed = "download.resumed"
    case retrying = "download.retrying"
    case completed = "download.completed"
    case failed = "download.failed"
    case removed = "download.removed"
}

/// The `downloads` part of `status`.
package struct DownloadCounts: Codable, Hashable, Sendable {
    package var active: Int
    package var queued: Int
    package var paused: Int
    package var failed: Int
    package var completed: Int
    /// Sum of the active downloads' speeds, bytes per second.
    package var rate: Double
    /// The global speed limit, bytes per second; `nil` = unlimited.
    package var rateLimit: Int64?
    /// The download gate; `nil` from a daemon without one.
    package var gate: DownloadGateInfo?

    package init(
        active: Int,
        queued: Int,
        paused: Int,
        failed: Int,
        completed: Int,
        rate: Double,
        rateLimit: Int64?,
        gate: DownloadGateInfo? = nil
    ) {
        self.gate = gate
        self.active = active
        self.queued = queued
        self.paused = paused
        self.failed = failed
        self.completed = completed
        self.rate = rate
        self.rateLimit = rateLimit
    }

    enum CodingKeys: String, CodingKey {
        case active
        case queued
        case paused
        case failed
        case completed
        case rate
        case rateLimit = "rate_limit"
        case gate
    }
}

/// Whether downloads may run now: the configured download windows and the metered network.
package struct DownloadGateInfo: Codable, Hashable, Sendable {
    /// `outside_window` or `metered` while downloads wait (`--now` ones excepted); `nil` while they may run.
    package var closedBecause: String?
    /// The configured windows, e.g. `["01:00-06:00"]`; empty = always.
    package var windows: [String]
    /// ISO 8601 UTC time of the next window opening (outside the windows) or closing (inside one).
    package var nextWindowChange: String?
    /// Whether the network is metered; `nil` when `metered = ignore` or NetworkManager has not said.
    package var metered: Bool?

    package init(closedBecause: String?, windows: [String], nextWindowChange: String?, metered: Bool?) {
        self.closedBecause = closedBecause
        self.windows = windows
        self.nextWindowChange = nextWindowChange
        self.metered = metered
    }

    enum CodingKeys: String, CodingKey {
        case closedBecause = "closed_because"
        case windows
        case nextWindowChange = "next_window_change"
        case metered
    }
}
