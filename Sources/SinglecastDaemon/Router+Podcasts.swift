import SinglecastProtocol

// The podcast methods' requests as the domain's commands, and its answers as results: the podcast layer does not
// read the wire's shapes (which field combinations a request may have) nor build its results.

extension EpisodeChoice {
    /// `episodes`, or `podcast` with `all`: marking a whole podcast needs `all: true`, so it is never done by accident.
    init(_ params: EpisodeMarkParams) throws(PodcastError) {
        switch (params.episodes, params.podcast) {
        case (let ids?, nil):
            self = .episodes(ids)
        case (nil, let selector?):
            guard params.all == true else {
                throw PodcastError.invalid(
                    "marking a whole podcast needs 'all': true, so that it is never done by accident",
                    parameter: "all"
                )
            }
            self = .wholePodcast(selector)
        default:
            throw PodcastError.invalid("give exactly one of 'episodes' and 'podcast'", parameter: "episodes")
        }
    }
}

extension EpisodeMarkResult {
    init(_ outcome: MarkOutcome) { self.init(changed: outcome.changed, unchanged: outcome.unchanged) }
}

extension DeleteResult {
    init(_ deleted: (episodes: [Int64], files: Subscriptions.LetGo)) {
        self.init(episodes: deleted.episodes, deletedFiles: deleted.files.deleted, keptFiles: deleted.files.kept)
    }
}
