import SinglecastProtocol
import SinglecastStore

/// What the refresh (`Subscriptions+Refresh.swift`) still answers in the protocol's terms, until it moves out of the
/// catalogue into its own service: it reaches the wire through here, and the mappings stay at the edge
/// (`Router+PodcastsResults.swift`, `EventBus+Podcasts.swift`).
extension Subscriptions {
    func info(_ podcast: PodcastRecord) async throws -> PodcastInfo { PodcastInfo(try await summary(podcast)) }

    func info(_ podcast: PodcastRecord, counts: EpisodeCounts?) -> PodcastInfo {
        PodcastInfo(summary(podcast, counts: counts))
    }

    static func placeholderInfo(_ id: Int64) -> PodcastInfo { .placeholder(id) }

    func publish(_ event: PodcastEvent, _ podcast: PodcastInfo, newEpisodes: Int? = nil) {
        events.publish(event, podcast, newEpisodes: newEpisodes)
    }
}
