import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

// The podcast catalogue's answers as the protocol's results: each result is built here and nowhere else.

extension PodcastInfo {
    init(_ summary: PodcastSummary) {
        let podcast = summary.record
        self.init(
            id: podcast.id,
            title: podcast.title,
            author: podcast.author,
            feedURL: podcast.feedURL,
            link: podcast.link,
            description: podcast.description,
            artworkURL: podcast.artworkURL,
            artworkPath: podcast.artworkPath,
            itunesID: podcast.itunesID,
            episodes: summary.counts?.total ?? 0,
            newEpisodes: summary.counts?.new ?? 0,
            autoDownload: AutoDownload(summary.autoDownload),
            keep: podcast.keep,
            refreshedAt: podcast.refreshedAt.map(iso8601),
            succeededAt: podcast.succeededAt.map(iso8601),
            nextRefreshAt: podcast.nextRefreshAt.map(iso8601),
            lastError: podcast.lastError,
            gone: podcast.gone,
            hasCredentials: podcast.authUser != nil,
            duplicateItems: podcast.duplicateItems,
            nameTemplate: podcast.nameTemplate,
            folder: podcast.folder,
            refreshInterval: podcast.refreshInterval.map { Int($0 / 1000) },
            rules: podcast.rules.map {
                EpisodeRules(stored: $0).values.reduce(into: [:]) { $0[$1.key.rawValue] = $1.value }
            }
        )
    }

    /// A podcast a refresh could not report on (unsubscribed, or stopped): only its id is known.
    static func placeholder(_ id: Int64) -> PodcastInfo {
        PodcastInfo(
            id: id,
            title: "",
            author: nil,
            feedURL: "",
            link: nil,
            description: "",
            artworkURL: nil,
            artworkPath: nil,
            itunesID: nil,
            episodes: 0,
            newEpisodes: 0,
            autoDownload: .off,
            keep: nil,
            refreshedAt: nil,
            succeededAt: nil,
            nextRefreshAt: nil,
            lastError: nil,
            gone: false,
            hasCredentials: false
        )
    }
}

extension EpisodeInfo {
    init(_ listed: ListedEpisode) {
        let episode = listed.record
        let download = listed.download
        self.init(
            id: episode.id,
            podcastID: episode.podcastID,
            title: episode.title,
            description: episode.description,
            guid: episode.guid,
            link: episode.link,
            published: episode.publishedAt.map(iso8601),
            durationSeconds: episode.durationSeconds,
            enclosureURL: episode.enclosureURL,
            enclosureType: episode.enclosureType,
            enclosureLength: episode.enclosureLength,
            season: episode.season,
            episode: episode.episodeNumber,
            chaptersURL: episode.chaptersURL,
            transcriptURL: episode.transcriptURL,
            isNew: episode.isNew,
            downloadID: download?.id,
            downloadState: download.map { DownloadState($0.state) },
            file: download?.file,
            episodeType: episode.episodeType,
            playedAt: episode.playedAt.map(iso8601),
            pinned: episode.pinned ? true : nil,
            skipped: listed.skipped
        )
        sidecars = listed.sidecars?.map { sidecar in
            EpisodeSidecarInfo(
                kind: sidecar.kind.rawValue,
                language: sidecar.language,
                mimeType: sidecar.mimeType,
                url: sidecar.url,
                state: sidecar.state.rawValue,
                file: sidecar.path,
                error: sidecar.error,
                rel: sidecar.rel
            )
        }
    }
}

extension SubscribeResult {
    init(_ outcome: SubscribeOutcome) {
        self.init(
            podcast: PodcastInfo(outcome.podcast),
            existing: outcome.existing,
            queued: outcome.queued,
            discovered: outcome.discovery.map { Discovered(page: $0.page, feed: $0.feed, others: $0.others) }
        )
    }
}

extension UnsubscribeResult {
    init(_ outcome: UnsubscribeOutcome) {
        self.init(
            podcast: PodcastInfo(outcome.podcast),
            cancelledDownloads: outcome.cancelledDownloads,
            deletedFiles: outcome.deletedFiles
        )
    }
}

extension PodcastsResult {
    init(_ listing: PodcastListing) { self.init(podcasts: listing.podcasts.map(PodcastInfo.init), next: listing.next) }
}

extension RefreshResult {
    /// - Parameter brief: The podcasts whose feed answered 304 by id only (``RefreshParams/brief``).
    init(_ reports: [RefreshReport], brief: Bool) {
        let listed = brief ? reports.filter { $0.outcome != .notModified } : reports
        self.init(
            refreshed: listed.map {
                Entry(
                    podcast: $0.podcast.map(PodcastInfo.init) ?? .placeholder($0.id),
                    outcome: $0.outcome.rawValue,
                    newEpisodes: $0.newEpisodes,
                    queued: $0.queued,
                    error: $0.error
                )
            },
            notModified: brief ? reports.lazy.filter { $0.outcome == .notModified }.map(\.id) : nil
        )
    }
}

extension PodcastResult {
    init(_ podcast: PodcastSummary) { self.init(podcast: PodcastInfo(podcast)) }
}

extension EpisodesResult {
    init(_ listing: EpisodeListing) {
        self.init(podcast: PodcastInfo(listing.podcast), episodes: listing.episodes.map(EpisodeInfo.init))
    }
}

extension InboxResult {
    init(_ inbox: InboxListing) {
        self.init(episodes: inbox.episodes.map(EpisodeInfo.init), podcasts: inbox.podcasts.map(PodcastInfo.init))
    }
}

extension RulesResult {
    init(_ report: RulesReport) {
        func entries(_ entries: [RulesReport.Entry]) -> [Episode] {
            entries.map {
                Episode(
                    id: $0.episode.id,
                    title: $0.episode.title,
                    published: $0.episode.publishedAt.map(iso8601),
                    reason: $0.reason
                )
            }
        }
        self.init(
            podcast: PodcastInfo(report.podcast),
            dryRun: report.dryRun,
            autoDownload: AutoDownload(report.autoDownload),
            keep: report.keep,
            rules: report.rules.map(Rule.init),
            download: entries(report.download),
            delete: entries(report.delete),
            skipped: entries(report.skipped)
        )
    }
}

extension RulesResult.Rule {
    init(_ setting: RulesReport.Setting) {
        self.init(key: setting.key.rawValue, value: setting.value, source: setting.source.rawValue)
    }
}

extension PodcastDetailResult {
    init(_ details: PodcastDetails) {
        self.init(
            podcast: PodcastInfo(details.podcast),
            rules: details.rules.map(RulesResult.Rule.init),
            files: details.files,
            diskBytes: details.bytes
        )
    }
}

extension ImportResult {
    init(_ feeds: [ImportedFeed]) {
        self.init(
            feeds: feeds.map { feed in
                switch feed.outcome {
                case .subscribed(let podcast):
                    Entry(url: feed.url, title: feed.title, outcome: "subscribed", podcastID: podcast, error: nil)
                case .already(let podcast):
                    Entry(url: feed.url, title: feed.title, outcome: "already", podcastID: podcast, error: nil)
                case .failed(let message):
                    Entry(url: feed.url, title: feed.title, outcome: "failed", podcastID: nil, error: message)
                }
            }
        )
    }
}

extension ExportResult {
    init(_ export: OPMLExport) { self.init(opml: export.document, count: export.count) }
}

extension EpisodeMarkResult {
    init(_ outcome: MarkOutcome) { self.init(changed: outcome.changed, unchanged: outcome.unchanged) }
}

extension DeleteResult {
    init(_ deleted: (episodes: [Int64], files: Subscriptions.LetGo)) {
        self.init(
            episodes: deleted.episodes,
            deletedFiles: deleted.files.deleted,
            keptFiles: deleted.files.kept,
            trashedTo: deleted.files.trashed.isEmpty ? nil : deleted.files.trashed
        )
    }
}

extension AutoDownload {
    init(_ fetch: EpisodePolicy.Fetch) {
        switch fetch {
        case .off: self = .off
        case .allNew: self = .allNew
        case .latest(let count): self = .latest(count)
        }
    }
}

/// Times in results and events: ISO 8601 UTC.
func iso8601(_ milliseconds: Int64) -> String { UTCTimestamp.string(milliseconds: milliseconds) }
