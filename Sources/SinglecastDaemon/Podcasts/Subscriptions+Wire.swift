import CPosix
import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// The podcasts and episodes as the protocol shows them, and the events that announce them.
extension Subscriptions {
    func info(_ podcast: PodcastRecord) async throws -> PodcastInfo {
        info(podcast, counts: try await counts()[podcast.id])
    }

    func info(_ podcast: PodcastRecord, counts: EpisodeCounts?) -> PodcastInfo {
        PodcastInfo(
            id: podcast.id,
            title: podcast.title,
            author: podcast.author,
            feedURL: podcast.feedURL,
            link: podcast.link,
            description: podcast.description,
            artworkURL: podcast.artworkURL,
            artworkPath: podcast.artworkPath,
            itunesID: podcast.itunesID,
            episodes: counts?.total ?? 0,
            newEpisodes: counts?.new ?? 0,
            autoDownload: AutoDownload(policy(for: podcast).fetch),
            keep: podcast.keep,
            refreshedAt: podcast.refreshedAt.map(Self.iso8601),
            succeededAt: podcast.succeededAt.map(Self.iso8601),
            nextRefreshAt: podcast.gone ? nil : podcast.nextRefreshAt.map(Self.iso8601),
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

    /// - Parameter skipped: Why the podcast's rules do not download it, for an episode without a download.
    static func info(_ episode: EpisodeRecord, download: DownloadInfo?, skipped: String? = nil) -> EpisodeInfo {
        EpisodeInfo(
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
            downloadState: download?.state,
            file: download?.file,
            episodeType: episode.episodeType,
            playedAt: episode.playedAt.map(iso8601),
            pinned: episode.pinned ? true : nil,
            skipped: skipped
        )
    }

    static func placeholderInfo(_ id: Int64) -> PodcastInfo {
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

    func publish(_ event: PodcastEvent, _ podcast: PodcastInfo, newEpisodes: Int? = nil) {
        events.publish(
            .podcasts,
            method: event.rawValue,
            params: PodcastEventParams(podcast: podcast, newEpisodes: newEpisodes)
        )
    }

    static func iso8601(_ milliseconds: Int64) -> String { UTCTimestamp.string(milliseconds: milliseconds) }
}

extension EpisodePolicy.Fetch {
    /// The protocol's `auto_download` value as the policy's.
    init(_ wire: AutoDownload) {
        switch wire {
        case .off: self = .off
        case .allNew: self = .allNew
        case .latest(let count): self = .latest(count)
        }
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
