import FoundationEssentials
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

/// Episode rules: what the listener marked (played, pinned), what retention deletes, and `rules`, which shows what
/// the rules would do without doing it.
extension Subscriptions {
    /// A podcast's policy: its own rules over the configured ones.
    func policy(for podcast: PodcastRecord) -> EpisodePolicy {
        EpisodePolicy(podcast, defaults: settings.rules)
    }

    // MARK: - Played and pinned

    package func markPlayed(_ params: EpisodeMarkParams, played: Bool) async throws -> EpisodeMarkResult {
        let ids = try await markedEpisodes(params)
        let changed: [Int64]
        let at = Self.now()
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
            retentionWanted()
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
            if !pinned { retentionWanted() }
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

    // MARK: - Retention

    /// Deletes what the rules say should go, across every podcast, and returns when the next deletion falls due.
    @discardableResult
    func applyRetention() async -> Int64? {
        let evaluation: RetentionEvaluation
        do {
            evaluation = try await retentionPlan(rules: podcasts.mapValues { policy(for: $0).retention })
        } catch {
            logger.error("cannot evaluate the retention rules: \(error)")
            return nil
        }
        let (plan, files) = (evaluation.plan, evaluation.files)
        logger.debug(
            "retention: \(files.count) files of \(podcasts.count) podcasts evaluated in "
                + "\(Self.milliseconds(evaluation.planning)) ms (store \(Self.milliseconds(evaluation.reading)) ms), "
                + "\(plan.deletions.count) deletions"
        )
        guard !plan.deletions.isEmpty else { return plan.nextDue }
        let byReason = Dictionary(grouping: plan.deletions, by: \.reason)
        for (reason, deletions) in byReason.sorted(by: { $0.key.description < $1.key.description }) {
            let episodes = deletions.compactMap { files[$0.file.episodeID]?.record }
            do {
                let outcome = try await letGo(episodes, reason: reason.description)
                for episode in episodes {
                    let file = files[episode.id]?.download.file
                    if let file, let why = outcome.notDeleted[file] {
                        logger.warning("could not delete \(file) of episode \(episode.id) (\(reason)): \(why)")
                        retentionRefusals[episode.id] = why
                        continue
                    }
                    retentionRefusals[episode.id] = nil
                    let trashed = file.flatMap { outcome.trashed[$0] }
                    logger.notice(
                        "deleted \(file ?? "the file") of \(podcasts[episode.podcastID]?.title ?? "?") "
                            + "episode \(episode.id): \(reason)\(trashed.map { " (to the Trash: \($0))" } ?? "")"
                    )
                    events.publish(
                        .episodes,
                        method: EpisodeEvent.deleted.rawValue,
                        params: EpisodeEventParams(
                            episode: episode.id,
                            podcast: episode.podcastID,
                            title: episode.title,
                            at: UTCTimestamp.string(milliseconds: Self.now()),
                            file: file,
                            trashedTo: trashed,
                            reason: reason.description
                        )
                    )
                }
            } catch {
                logger.error("cannot delete \(episodes.count) episode file(s) (\(reason)): \(error)")
            }
        }
        return plan.nextDue
    }

    /// What retention would delete now, the files it looked at, and what the look took.
    struct RetentionEvaluation {
        var plan: Retention.Plan
        var files: [Int64: (record: EpisodeRecord, download: DownloadInfo)]
        /// Reading the downloaded episodes from the store and the completed downloads from the queue.
        var reading: Duration
        /// Matching them up and ``Retention/plan(files:rules:maxStorage:otherUsage:now:)``.
        var planning: Duration
    }

    /// What retention would delete now with `rules` for each podcast.
    func retentionPlan(rules: [Int64: Retention.Rules]) async throws -> RetentionEvaluation {
        let started = ContinuousClock.now
        let episodes = try await store.downloadedEpisodes()
        let completed = await queue.completedDownloads()
        let read = ContinuousClock.now
        var files: [Int64: (record: EpisodeRecord, download: DownloadInfo)] = [:]
        var linked: Set<Int64> = []
        var retained: [Retention.File] = []
        for episode in episodes {
            guard let id = episode.downloadID, let download = completed[id] else { continue }
            linked.insert(id)
            files[episode.id] = (episode, download)
            retained.append(
                Retention.File(
                    episodeID: episode.id,
                    podcastID: episode.podcastID,
                    downloadID: id,
                    date: episode.publishedAt ?? episode.firstSeenAt,
                    playedAt: episode.playedAt,
                    pinned: episode.pinned,
                    size: download.bytesDone,
                    requested: episode.requested
                )
            )
        }
        let other = completed.filter { !linked.contains($0.key) }.values.reduce(0) { $0 + $1.bytesDone }
        let plan = Retention.plan(
            files: retained,
            rules: rules,
            maxStorage: settings.maxStorage,
            otherUsage: other,
            now: Self.now()
        )
        return RetentionEvaluation(plan: plan, files: files, reading: read - started, planning: .now - read)
    }

    /// A duration in milliseconds with three decimals, for the debug lines that time the rules.
    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
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
        let now = Self.now()
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
        let retention = try await retentionPlan(rules: retentionRules)
        let plan = retention.plan
        logger.debug(
            "rules: \(episodes.count) episodes of podcast \(podcast.id) evaluated in "
                + "\(Self.milliseconds(evaluated)) ms (\(wanted.count) to download, \(skipped.count) skipped); "
                + "retention: \(retention.files.count) files evaluated in \(Self.milliseconds(retention.planning)) ms "
                + "(store \(Self.milliseconds(retention.reading)) ms)"
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
                byID[deletion.file.episodeID].map { episode in
                    let refused = retentionRefusals[episode.id].map { "; could not be deleted: \($0)" } ?? ""
                    return entry(episode, deletion.reason.description + refused)
                }
            },
            skipped: skipped
        )
    }
}
