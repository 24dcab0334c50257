import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

// The download queue's answers as the protocol's results: each result is built here and nowhere else.

extension DownloadInfo {
    init(_ listed: ListedDownload) {
        self.init(listed.download)
        episode = listed.episode.map(DownloadEpisode.init)
    }

    init(_ download: DownloadSnapshot) {
        let record = download.record
        self.init(
            id: record.id,
            url: record.url,
            finalURL: record.finalURL,
            file: record.path,
            state: DownloadState(record.state),
            pauseReason: record.pauseReason,
            priority: record.priority,
            position: record.position,
            bytesDone: download.bytesDone,
            bytesTotal: download.bytesTotal,
            speed: download.speed,
            etaSeconds: download.etaSeconds,
            attempts: record.attempts,
            lastError: record.errorCode.map {
                DownloadErrorInfo(code: $0, message: record.errorMessage ?? "", httpStatus: record.errorHTTPStatus)
            },
            nextRetryAt: record.nextAttemptAt.map(iso8601),
            addedAt: iso8601(record.addedAt),
            completedAt: record.completedAt.map(iso8601),
            // Names only: the values may hold tokens.
            headerNames: record.headers.compactMap {
                $0.split(separator: ":").first.map { $0.trimmingWhitespace() }
            },
            hasCredentials: record.authUser != nil,
            stalledSince: download.stalledSince.map(iso8601),
            resumesAt: download.resumesAt.map(iso8601),
            now: record.bypassesGate ? true : nil,
            waitingForHost: download.waitingForHost
        )
    }
}

extension DownloadEpisode {
    init(_ episode: EpisodeMention) {
        self.init(id: episode.id, title: episode.title, podcastID: episode.podcastID, podcast: episode.podcast)
    }
}

extension DownloadState {
    /// Every stored state has its wire name; none is silently shown as another.
    init(_ state: DownloadRecord.State) {
        switch state {
        case .queued: self = .queued
        case .active: self = .active
        case .paused: self = .paused
        case .failed: self = .failed
        case .completed: self = .completed
        case .cancelled: self = .cancelled
        }
    }
}

extension DownloadsResult {
    init(_ downloads: [ListedDownload]) { self.init(downloads: downloads.map(DownloadInfo.init)) }
}

extension EnqueueResult {
    init(_ downloads: [EnqueuedDownload]) {
        self.init(
            downloads: downloads.map {
                Entry(
                    id: $0.id,
                    url: $0.url,
                    existing: $0.existing,
                    file: $0.file,
                    state: DownloadState($0.state),
                    pauseReason: $0.pauseReason,
                    episode: $0.episode.map(DownloadEpisode.init)
                )
            }
        )
    }
}

extension DownloadCounts {
    init(_ counts: QueueCounts) {
        self.init(
            active: counts.active,
            queued: counts.queued,
            paused: counts.paused,
            failed: counts.failed,
            completed: counts.completed,
            rate: counts.rate,
            rateLimit: counts.rateLimit,
            gate: DownloadGateInfo(
                closedBecause: counts.gate.closedBecause?.rawValue,
                windows: counts.gate.windows.windows.map(\.description),
                nextWindowChange: counts.gate.nextWindowChange.map(iso8601),
                metered: counts.gate.metered
            )
        )
    }
}

extension ChangedResult {
    /// `resume`'s answer: what it resumed, and what of that the closed gate holds, with why.
    init(_ resumed: DownloadQueue.Resumed) {
        self.init(
            changed: resumed.changed,
            held: resumed.held.isEmpty ? nil : resumed.held,
            gate: resumed.gate?.rawValue
        )
    }
}
