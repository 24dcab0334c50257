import FoundationEssentials
import SinglecastStore

/// What an enqueue of episodes does with each: answers with the download it has, or queues a new one placed by the
/// name template with the podcast's credentials, or skips it with the reason.
///
/// Pure: handed the episodes, their podcasts, their downloads and whether files exist, so every case is tested
/// without a store, a queue or a disk. The validation that refuses a whole requested enqueue (an episode with
/// nothing to download) comes before it; the auto-download policies never hand it such an episode.
struct EpisodeEnqueuePlan: Sendable {
    /// One episode's part.
    enum Step: Sendable {
        /// It has a live download, or a completed one whose file is there.
        case existing(DownloadSnapshot)
        /// A new download; ``EpisodeEnqueuePlan/replaced`` names a completed one whose file is gone.
        case new(DownloadRequest)
        /// Its podcast is gone, or it names no enclosure.
        case skipped(episode: Int64, reason: String)
    }

    /// Where the downloads go and how they are named.
    struct Placement: Sendable {
        var downloadDirectory: String
        /// The configured template, for podcasts without their own.
        var naming: EpisodeNaming
    }

    private(set) var steps: [Step] = []
    /// Completed downloads whose files are gone, which new downloads replace.
    private(set) var replaced: [Int64] = []

    /// - Parameters:
    ///   - downloads: The episodes' downloads, by id (a cancelled or forgotten one is absent).
    ///   - fileExists: Whether a completed download's file is still on disk.
    ///   - expedite: `--now`: the new downloads pass the download gate.
    init(
        episodes: [EpisodeRecord],
        podcasts: [Int64: PodcastRecord],
        downloads: [Int64: DownloadSnapshot],
        fileExists: (String) -> Bool,
        placement: Placement,
        priority: Int,
        expedite: Bool
    ) {
        for episode in episodes {
            guard let podcast = podcasts[episode.podcastID] else {
                steps.append(.skipped(episode: episode.id, reason: "its podcast is unsubscribed"))
                continue
            }
            guard let text = episode.enclosureURL, let url = URL(string: text) else {
                steps.append(.skipped(episode: episode.id, reason: "no http or https enclosure"))
                continue
            }
            if let download = episode.downloadID.flatMap({ downloads[$0] }) {
                // A completed download whose file is gone (deleted by hand) is fetched again when asked for.
                if download.state != .completed || fileExists(download.file) {
                    steps.append(.existing(download))
                    continue
                }
                replaced.append(download.id)
            }
            // A podcast's own template is parsed per request; it was checked when it was set.
            let naming =
                podcast.nameTemplate.map { EpisodeNaming(template: $0, portable: placement.naming.portable) }
                ?? placement.naming
            let place = naming.place(
                EpisodeNaming.Episode(
                    podcastTitle: podcast.folder ?? (podcast.title.isEmpty ? "podcast \(podcast.id)" : podcast.title),
                    title: episode.title,
                    published: episode.publishedAt.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                    enclosureURL: url,
                    enclosureType: episode.enclosureType,
                    season: episode.season,
                    episode: episode.episodeNumber,
                    guid: episode.guid,
                    id: episode.id
                )
            )
            // The feed's credentials go only to the feed's host, never to a CDN the feed names. Without credentials
            // there is nothing to compare (parsing both hosts was a quarter of the plan).
            let hasCredentials = podcast.authUser != nil || podcast.authPassword != nil
            let sameHost = hasCredentials && HTTPURL.sameHost(text, podcast.feedURL)
            steps.append(
                .new(
                    DownloadRequest(
                        url: text,
                        directory: ([placement.downloadDirectory] + place.folders).joined(separator: "/"),
                        name: place.fileName,
                        user: sameHost ? podcast.authUser : nil,
                        password: sameHost ? podcast.authPassword : nil,
                        priority: priority,
                        episode: episode.id,
                        enclosureType: episode.enclosureType,
                        now: expedite
                    )
                )
            )
        }
    }

    /// The new downloads, in the episodes' order.
    var requests: [DownloadRequest] {
        steps.compactMap { if case .new(let request) = $0 { request } else { nil } }
    }
}
