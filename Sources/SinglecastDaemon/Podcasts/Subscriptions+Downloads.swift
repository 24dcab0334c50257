import SinglecastStore

/// A download as `downloads` and `show` list it: with the episode it was made for, if any.
package struct ListedDownload: Sendable, Hashable {
    package var download: DownloadSnapshot
    package var episode: EpisodeMention?
}

/// What `downloads` asks for; checked when made.
package struct DownloadListQuery: Sendable, Hashable {
    package var state: DownloadRecord.State?
    /// A podcast selector, resolved as every podcast command resolves it.
    package var podcast: String?
    package var limit: Int?

    package init(state: DownloadRecord.State? = nil, podcast: String? = nil, limit: Int? = nil) throws(PodcastError) {
        try ListingLimit.check(limit)
        self.state = state
        self.podcast = podcast
        self.limit = limit
    }
}

extension Subscriptions {
    /// `downloads`: the queue's listing in its order (``DownloadQueue/list(state:only:)``), each download with its
    /// episode, only a podcast's when asked, cut to `limit`.
    package func downloads(_ query: DownloadListQuery) async throws -> [ListedDownload] {
        let podcast = try query.podcast.map(resolve)
        let linked: [EpisodeRecord]
        do {
            linked = try await store.downloadedEpisodes()
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        // A download two feeds share is named by the first episode linked to it, or by the asked podcast's.
        var episodeOf: [Int64: EpisodeRecord] = [:]
        for episode in linked.sorted(by: { $0.id < $1.id }) {
            guard let download = episode.downloadID else { continue }
            if episodeOf[download] == nil
                || (podcast != nil && episode.podcastID == podcast?.id
                    && episodeOf[download]?.podcastID != podcast?.id)
            {
                episodeOf[download] = episode
            }
        }
        let only = podcast.map { podcast in
            Set(linked.compactMap { $0.podcastID == podcast.id ? $0.downloadID : nil })
        }
        var listed = await queue.list(state: query.state, only: only)
        if let limit = query.limit, listed.count > limit { listed = Array(listed.prefix(limit)) }
        return listed.map { download in
            ListedDownload(
                download: download,
                episode: episodeOf[download.id].map { mention($0, download: download.id) }
            )
        }
    }

    /// `show`: one download with its episode.
    package func download(_ id: Int64) async throws -> ListedDownload {
        let download = try await queue.show(id)
        let found = (try? await store.episodeOfDownload(id))
        return ListedDownload(
            download: download,
            episode: found.map { EpisodeMention($0.episode, podcast: $0.podcast, download: .listed(id)) }
        )
    }

    private func mention(_ episode: EpisodeRecord, download: Int64) -> EpisodeMention {
        EpisodeMention(episode, podcast: podcasts[episode.podcastID]?.title ?? "", download: .listed(download))
    }
}
