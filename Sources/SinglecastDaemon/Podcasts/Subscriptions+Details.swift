import SinglecastStore

/// What `podcast` answers: a podcast with its settings, the rules that apply to it, and the disk its files take.
package struct PodcastDetails: Sendable, Hashable {
    package var podcast: PodcastSummary
    package var rules: [RulesReport.Setting]
    /// Its completed downloads, and their bytes as downloaded; a file another podcast shares counts for both.
    package var files: Int
    package var bytes: Int64
}

extension Subscriptions {
    /// `podcast`: everything `show-podcast` prints about one podcast.
    package func details(_ selector: String) async throws -> PodcastDetails {
        let podcast = try resolve(selector)
        let downloads = try await episodeRecords(of: podcast.id).compactMap(\.downloadID)
        let completed = await queue.infos(downloads).values.filter { $0.state == .completed }
        return PodcastDetails(
            podcast: try await summary(podcast),
            rules: ruleSettings(own: podcast.rules),
            files: completed.count,
            bytes: completed.reduce(0) { $0 + $1.bytesDone }
        )
    }

    /// Every rule that applies with a podcast's own `rules`: its own where it has one, else the configured one.
    func ruleSettings(own stored: String?) -> [RulesReport.Setting] {
        let own = EpisodeRules(stored: stored)
        return EpisodeRules.Key.allCases.compactMap { key in
            if let value = own.value(of: key) { return RulesReport.Setting(key: key, value: value, source: .podcast) }
            return settings.rules.value(of: key).map {
                RulesReport.Setting(key: key, value: $0, source: .configuration)
            }
        }
    }
}
