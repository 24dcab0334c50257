import SinglecastStore

// What the download queue answers, in the domain's terms. The router turns them into results
// (`Router+DownloadsResults.swift`), and the event bus into events (`EventBus+Downloads.swift`).

/// A download as the queue sees it now: its record, and what only the running queue knows (the transfer's progress,
/// its pace, the download gate).
package struct DownloadSnapshot: Sendable, Hashable {
    package var record: DownloadRecord
    /// Bytes in the file now: the running transfer's count, else the partial file's size, or a completed download's
    /// total. (``DownloadRecord/bytesDone`` is the last checkpoint.)
    package var bytesDone: Int64
    package var bytesTotal: Int64?
    /// Whole bytes per second; only an active download has one.
    package var speed: Double?
    /// Whole seconds left; only an active download fast enough to tell has one.
    package var etaSeconds: Double?
    /// Unix milliseconds since when an active download has received nothing.
    package var stalledSince: Int64?
    /// Unix milliseconds at which a download paused outside the download windows resumes.
    package var resumesAt: Int64?
    /// The host whose per-host slots are all taken while this due, queued download waits for one.
    package var waitingForHost: String?

    package var id: Int64 { record.id }
    package var url: String { record.url }
    package var file: String { record.path }
    package var state: DownloadRecord.State { record.state }
    package var pauseReason: String? { record.pauseReason }
    package var attempts: Int { record.attempts }
}

/// One download an enqueue answers with: a new one, or the live download of the same URL (or of the same episode)
/// that it found instead.
package struct EnqueuedDownload: Sendable, Hashable {
    package var id: Int64
    package var url: String
    package var existing: Bool
    package var file: String
    package var state: DownloadRecord.State
    package var pauseReason: String?
    /// The episode it was queued for, when an episode id asked for it.
    package var episode: EpisodeMention?

    package init(
        id: Int64,
        url: String,
        existing: Bool,
        file: String,
        state: DownloadRecord.State,
        pauseReason: String?
    ) {
        self.id = id
        self.url = url
        self.existing = existing
        self.file = file
        self.state = state
        self.pauseReason = pauseReason
    }
}

/// The listed downloads by state, the transfer rate and what holds downloads back, as `status` reports them.
package struct QueueCounts: Sendable, Hashable {
    package var active = 0
    package var queued = 0
    package var paused = 0
    package var failed = 0
    package var completed = 0
    /// Sum of the active downloads' speeds, bytes per second.
    package var rate: Double = 0
    /// The global speed limit in force, bytes per second; `nil` = unlimited.
    package var rateLimit: Int64?
    package var gate: Gate

    /// The download gate.
    package struct Gate: Sendable, Hashable {
        package var closedBecause: GateReason?
        package var windows: DownloadWindows
        /// Unix milliseconds of the next window boundary.
        package var nextWindowChange: Int64?
        /// NetworkManager's answer; `nil` until it gives one, or when nothing can be metered.
        package var metered: Bool?
    }
}
