import FoundationEssentials
import SinglecastStore
import SinglecastSupport

/// Episode rules: a podcast's policy, and `rules`, which shows what the rules would do without doing it.
extension Subscriptions {
    /// A podcast's policy: its own rules over the configured ones.
    func policy(for podcast: PodcastRecord) -> EpisodePolicy {
        var policy = EpisodePolicy(podcast, defaults: settings.rules)
        policy.requireHTTPS = settings.transfer.requireHTTPS
        return policy
    }

    // MARK: - rules

    /// `rules`: the rules that apply to a podcast, what they would download and delete now, and why episodes are
    /// skipped; with changes (of the rules, `autoDownload` or `keep`), for those changes, without storing them.
    package func rules(_ params: PodcastChange) async throws -> RulesReport {
        let podcast = try resolve(params.podcast)
        let dryRun = params.rules != nil || params.autoDownload != nil || params.keep != nil
        let tried = try changed(podcast, by: params)
        let policy = policy(for: tried)
        let now = self.now()
        let episodes: [EpisodeRecord]
        do {
            episodes = try await store.episodes(of: podcast.id, fields: .listing)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        func entry(_ episode: EpisodeRecord, _ reason: String?) -> RulesReport.Entry {
            RulesReport.Entry(episode: episode, reason: reason)
        }
        // Timed from here to the skipped list: the policy over every episode, not the store or the answer.
        let started = ContinuousClock.now
        let candidates = episodes.map(EpisodePolicy.Candidate.init)
        let wanted = Set(policy.wanted(newest: candidates, inserted: [], initial: true, now: now))
        var skipped: [RulesReport.Entry] = []
        if policy.fetch != .off {
            // Room for every episode at once: grown by doubling, the list of entries (each a whole episode) was
            // copied a dozen times, each time into fresh pages.
            skipped.reserveCapacity(candidates.count)
            var texts = EpisodePolicy.SkipTexts()
            // By index: zipping the episodes with their candidates copied every record, skipped or not.
            for index in candidates.indices where !candidates[index].hasDownload {
                guard let skip = policy.skip(candidates[index], now: now) else { continue }
                skipped.append(entry(episodes[index], texts.text(skip)))
            }
        }
        let evaluated = ContinuousClock.now - started
        let rules = ruleSettings(own: tried.rules)
        var retentionRules = podcasts.mapValues { self.policy(for: $0).retention }
        retentionRules[podcast.id] = policy.retention
        let retention = try await self.retention.evaluate(rules: retentionRules)
        let plan = retention.plan
        logger.debug(
            "rules: \(episodes.count) episodes of podcast \(podcast.id) evaluated in "
                + "\(RuleTiming.milliseconds(evaluated)) ms (\(wanted.count) to download, \(skipped.count) skipped); "
                + "retention: \(retention.files.count) files evaluated in \(RuleTiming.milliseconds(retention.planning)) ms "
                + "(store \(RuleTiming.milliseconds(retention.reading)) ms)"
        )
        let byID = Dictionary(uniqueKeysWithValues: episodes.map { ($0.id, $0) })
        let refusals = await self.retention.refusals
        return RulesReport(
            podcast: try await summary(podcast),
            dryRun: dryRun,
            autoDownload: policy.fetch,
            keep: policy.keep,
            rules: rules,
            download: episodes.filter { wanted.contains($0.id) }.map { entry($0, nil) },
            delete: plan.deletions.compactMap { deletion in
                byID[deletion.file.episodeID].map { episode in
                    let refused = refusals[episode.id].map { "; could not be deleted: \($0)" } ?? ""
                    return entry(episode, deletion.reason.description + refused)
                }
            },
            skipped: skipped
        )
    }
}
