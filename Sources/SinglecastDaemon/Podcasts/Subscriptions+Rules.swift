import FoundationEssentials
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

/// Episode rules: what the listener marked (played, pinned), what retention deletes, and `rules`, which shows what
/// the rules would do without doing it.
extension Subscriptions {
    /// A podcast's policy: its own rules over the configured ones.
    func policy(for podcast: PodcastRecord) -> EpisodePolicy {
        var policy = EpisodePolicy(podcast, defaults: settings.rules)
        policy.requireHTTPS = settings.transfer.requireHTTPS
        return policy
    }

    // MARK: - Played and pinned

    package func markPlayed(_ params: EpisodeMarkParams, played: Bool) async throws -> EpisodeMarkResult {
        let ids = try await markedEpisodes(params)
        let changed: [Int64]
        let at = now()
        do {
            changed = try await store.setPlayed(ids, at: played ? at : nil)
        } catch {
            throw PodcastError.store("cannot mark the episodes: \(error)")
        }
        if !changed.isEmpty {
            episodesWritten()
            // `played --all` of a long back catalogue is one event per episode, so they are read only when watched.
            let records = events.isWatched(.episodes) ? try await store.episodes(ids: changed, fields: .listing) : []
            for record in records {
                events.publish(
                    .episodes,
                    method: (played ? EpisodeEvent.played : .unplayed).rawValue,
                    params: EpisodeEventParams(
                        episode: record.id,
                        podcast: record.podcastID,
                        title: record.title,
                        at: UTCTimestamp.string(milliseconds: at)
                    )
                )
            }
            logger.info("marked \(changed.count) episode(s) \(played ? "played" : "unplayed")")
            // A played episode may be due for deletion now or later.
            await retentionWanted()
        }
        let changedSet = Set(changed)
        return EpisodeMarkResult(changed: changed, unchanged: ids.filter { !changedSet.contains($0) })
    }

    package func pin(_ params: EpisodeMarkParams, pinned: Bool) async throws -> EpisodeMarkResult {
        let ids = try await markedEpisodes(params)
        let changed: [Int64]
        do {
            changed = try await store.setPinned(ids, pinned)
        } catch {
            throw PodcastError.store("cannot pin the episodes: \(error)")
        }
        if !changed.isEmpty {
            // No count changes: the episode totals stay cached.
            logger.info("\(pinned ? "pinned" : "unpinned") \(changed.count) episode(s)")
            if !pinned { await retentionWanted() }
        }
        let changedSet = Set(changed)
        return EpisodeMarkResult(changed: changed, unchanged: ids.filter { !changedSet.contains($0) })
    }

    /// The episodes a mark applies to: by id, or every episode of a podcast with `all`.
    private func markedEpisodes(_ params: EpisodeMarkParams) async throws -> [Int64] {
        switch (params.episodes, params.podcast) {
        case (let ids?, nil):
            return try await existingEpisodes(ids).map(\.id)
        case (nil, let selector?):
            guard params.all == true else {
                throw PodcastError.invalid(
                    "marking a whole podcast needs 'all': true, so that it is never done by accident",
                    parameter: "all"
                )
            }
            let podcast = try resolve(selector)
            do {
                return try await store.episodeIDs(of: podcast.id)
            } catch {
                throw PodcastError.store("cannot read the episodes: \(error)")
            }
        default:
            throw PodcastError.invalid("give exactly one of 'episodes' and 'podcast'", parameter: "episodes")
        }
    }

    // MARK: - rules

    /// `rules`: the rules that apply to a podcast, what they would download and delete now, and why episodes are
    /// skipped; with `changes`, for those changes, without storing them.
    package func rules(_ params: RulesParams) async throws -> RulesResult {
        let podcast = try resolve(params.podcast)
        let dryRun = params.changes != nil || params.autoDownload != nil || params.keep != nil
        let tried = try changed(
            podcast,
            by: SetPodcastParams(
                podcast: params.podcast,
                autoDownload: params.autoDownload,
                keep: params.keep,
                rules: params.changes
            )
        )
        let policy = policy(for: tried)
        let now = self.now()
        let episodes: [EpisodeRecord]
        do {
            episodes = try await store.episodes(of: podcast.id, fields: .listing)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        func entry(_ episode: EpisodeRecord, _ reason: String?) -> RulesResult.Episode {
            RulesResult.Episode(
                id: episode.id,
                title: episode.title,
                published: episode.publishedAt.map { UTCTimestamp.string(milliseconds: $0) },
                reason: reason
            )
        }
        // Timed from here to the skipped list: the policy over every episode, not the store or the answer.
        let started = ContinuousClock.now
        let candidates = episodes.map(EpisodePolicy.Candidate.init)
        let wanted = Set(policy.wanted(newest: candidates, inserted: [], initial: true, now: now))
        let skipped: [RulesResult.Episode] =
            if case .off = policy.fetch {
                []
            } else {
                zip(episodes, candidates).compactMap { episode, candidate in
                    guard !candidate.hasDownload, let skip = policy.skip(candidate, now: now) else { return nil }
                    return entry(episode, skip.description)
                }
            }
        let evaluated = ContinuousClock.now - started
        var rules: [RulesResult.Rule] = []
        let own = EpisodeRules(stored: tried.rules)
        for key in EpisodeRules.Key.allCases {
            if let value = own.value(of: key) {
                rules.append(RulesResult.Rule(key: key.rawValue, value: value, source: "podcast"))
            } else if let value = settings.rules.value(of: key) {
                rules.append(RulesResult.Rule(key: key.rawValue, value: value, source: "configuration"))
            }
        }
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
        return RulesResult(
            podcast: try await info(podcast),
            dryRun: dryRun,
            autoDownload: AutoDownload(policy.fetch),
            keep: policy.keep,
            rules: rules,
            download: episodes.filter { wanted.contains($0.id) }.map { entry($0, nil) },
            delete: plan.deletions.compactMap { deletion in
                byID[deletion.file.episodeID].map { entry($0, deletion.reason.description) }
            },
            skipped: skipped
        )
    }
}
