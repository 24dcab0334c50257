import SinglecastStore

/// Podcasts as the catalogue's answers show them.
extension Subscriptions {
    func summary(_ podcast: PodcastRecord) async throws -> PodcastSummary {
        summary(podcast, counts: try await counts(of: podcast.id))
    }

    func summary(_ podcast: PodcastRecord, counts: EpisodeCounts?) -> PodcastSummary {
        PodcastSummary(record: podcast, counts: counts, autoDownload: policy(for: podcast).fetch)
    }
}
