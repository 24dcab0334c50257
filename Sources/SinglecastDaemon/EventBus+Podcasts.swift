import SinglecastProtocol
import SinglecastStore

/// The podcast side's events as the protocol's: the catalogue and retention hand over domain values, and each event's
/// params are built here and nowhere else.
extension EventBus {
    func podcastSubscribed(_ podcast: PodcastSummary) { publish(.subscribed, PodcastInfo(podcast)) }

    func podcastUnsubscribed(_ podcast: PodcastSummary) { publish(.unsubscribed, PodcastInfo(podcast)) }

    func podcastRefreshed(_ podcast: PodcastSummary, newEpisodes: Int) {
        publish(.refreshed, PodcastInfo(podcast), newEpisodes: newEpisodes)
    }

    private func publish(_ event: PodcastEvent, _ podcast: PodcastInfo, newEpisodes: Int? = nil) {
        publish(
            .podcasts,
            method: event.rawValue,
            params: PodcastEventParams(podcast: podcast, newEpisodes: newEpisodes)
        )
    }

    /// Whether anyone watches episode events: marking a long back catalogue need not read episodes for no one.
    var episodesWatched: Bool { isWatched(.episodes) }

    /// `episode.marked`: one event for a mark of many episodes, however many they are.
    func episodesMarked(_ ids: [Int64], _ mark: EpisodeMark, podcast: Int64?, at: Int64) {
        publish(
            .episodes,
            method: EpisodeEvent.marked.rawValue,
            params: EpisodesMarkedParams(mark: mark.rawValue, episodes: ids, podcast: podcast, at: iso8601(at))
        )
    }

    /// `episode.played` or `episode.unplayed`, one per episode.
    func episodesMarked(_ episodes: [EpisodeRecord], played: Bool, at: Int64) {
        for episode in episodes {
            publish(
                .episodes,
                method: (played ? EpisodeEvent.played : .unplayed).rawValue,
                params: EpisodeEventParams(
                    episode: episode.id,
                    podcast: episode.podcastID,
                    title: episode.title,
                    at: iso8601(at)
                )
            )
        }
    }

    /// `episode.deleted`: retention deleted the episode's file, or moved it to the Trash.
    func episodeFileDeleted(_ episode: EpisodeRecord, file: String, trashedTo: String?, reason: String, at: Int64) {
        publish(
            .episodes,
            method: EpisodeEvent.deleted.rawValue,
            params: EpisodeEventParams(
                episode: episode.id,
                podcast: episode.podcastID,
                title: episode.title,
                at: iso8601(at),
                file: file,
                trashedTo: trashedTo,
                reason: reason
            )
        )
    }
}
