import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

/// The catalogue's side of a refresh: which podcasts are due, and storing what ``PodcastRefresher`` fetched —
/// the feed, what the auto-download policy queues, the event.
extension Subscriptions {
    // MARK: - Refresh

    /// Refreshes one podcast (by id or title), or every one, and answers in the order of their ids.
    package func refresh(_ selector: String?) async throws -> [RefreshReport] {
        let chosen: [Int64]
        if let selector {
            chosen = [try resolve(selector).id]
        } else {
            chosen = podcasts.keys.sorted()
        }
        var reports = await refresher.refresh(chosen).sorted { $0.id < $1.id }
        await countEpisodes(in: &reports, ofEvery: selector == nil)
        // A changed feed is stored without its fsync (``applyRefresh(_:to:schedule:jitter:)``): synced once for all
        // before the client reads of it. A feed found unchanged tells it nothing a power cut could take back.
        if reports.contains(where: { $0.outcome == .updated }) { try await syncCommitted() }
        return reports
    }

    /// The podcasts due at `now`, the longest overdue first.
    func duePodcasts(at now: Int64) -> [Int64] { RefreshSchedule.due(podcasts.values, now: now) }

    /// When the next podcast falls due, if any will.
    func nextRefreshDue() -> Int64? { RefreshSchedule.nextDue(podcasts.values) }

    func podcast(_ id: Int64) -> PodcastRecord? { podcasts[id] }

    /// The podcast, if a refresh of it may start: it is subscribed and not being unsubscribed.
    func refreshable(_ id: Int64) -> PodcastRecord? { leaving.contains(id) ? nil : podcasts[id] }

    /// What ``applyRefresh(_:to:schedule:jitter:)`` did, for ``finishRefresh(_:)`` once the artwork is fetched.
    struct AppliedRefresh: Sendable {
        var id: Int64
        /// The podcast as the refresh left it.
        var podcast: PodcastRecord
        var outcome: RefreshOutcome
        var failure: String?
        var inserted: Int
        var queued: [Int64]
        /// The size of the feed document stored, 0 when none was: the refresher trims the heap after big ones.
        var documentBytes: Int
        /// The feed changed: its artwork may have too.
        var wantsArtwork: Bool { failure == nil && outcome != .notModified }
    }

    /// What ``storeRefresh(_:to:schedule:jitter:)`` came to.
    enum StoredRefresh: Sendable {
        /// The answer; `documentBytes` as in ``AppliedRefresh/documentBytes``.
        case answered(RefreshReport, documentBytes: Int)
        /// The feed changed: its artwork is fetched before ``finishRefresh(_:)`` answers.
        case wantsArtwork(AppliedRefresh)
    }

    /// ``applyRefresh(_:to:schedule:jitter:)`` and, when no artwork is to be fetched, ``finishRefresh(_:)``: one call
    /// from the refresher instead of two for every unchanged feed.
    func storeRefresh(
        _ fetched: FeedFetcher.Fetched,
        to id: Int64,
        schedule: RefreshSchedule,
        jitter: Double
    ) async -> StoredRefresh? {
        guard let applied = await applyRefresh(fetched, to: id, schedule: schedule, jitter: jitter) else { return nil }
        if applied.wantsArtwork { return .wantsArtwork(applied) }
        return .answered(await finishRefresh(applied), documentBytes: applied.documentBytes)
    }

    /// Stores what a refresh fetched and queues what the podcast's policy asks for; `nil` when the podcast was
    /// unsubscribed (or is being) while its feed was fetched, and nothing is stored.
    ///
    /// - Parameters:
    ///   - schedule: The refresher's schedule, for the podcast's next refresh.
    func applyRefresh(
        _ fetched: FeedFetcher.Fetched,
        to id: Int64,
        schedule: RefreshSchedule,
        jitter: Double
    ) async -> AppliedRefresh? {
        // Read after the fetch, not before: `set` may have changed the podcast meanwhile.
        guard let current = podcasts[id], !leaving.contains(id) else { return nil }
        // A podcast that never stored its feed is a subscription a crash interrupted between storing the podcast and
        // its feed: this refresh finishes it as `subscribe` would have, so its back catalogue is not new.
        let finishing = current.succeededAt == nil
        let now = self.now()
        let change = FeedUpdate.apply(
            fetched.update,
            to: current,
            now: now,
            nextRefreshAt: schedule.nextRefresh(of: current, after: now, jitter: jitter),
            urlTaken: { url in podcasts.values.contains { $0.id != id && $0.feedURL == url } }
        )
        for line in change.log { logger.log(line.level, line.message) }
        podcasts[id] = change.podcast
        var applied = AppliedRefresh(
            id: id,
            podcast: change.podcast,
            outcome: change.outcome,
            failure: change.failure,
            inserted: 0,
            queued: [],
            documentBytes: 0
        )
        var inserted: [Int64] = []
        // Stored without an fsync, unless the feed moved: a power cut may roll a refresh back (the podcast's
        // validators with it), and the next refresh fetches it again. A client's `refresh` syncs before it answers, a
        // download queued after it syncs it with its own commit (the WAL is synced in order), and a move stays
        // durable, since the old URL may stop answering (docs/ARCHITECTURE.md, Refreshing many feeds).
        let moved = change.podcast.feedURL != current.feedURL
        if case .updated(let feed, _, _) = fetched {
            do {
                inserted = try await storeFeed(
                    id,
                    feed,
                    markNew: !finishing,
                    durability: moved ? .powerLoss : .processCrash
                )
                if finishing {
                    logger.notice(
                        "finished the subscription to \(ListSummary.title(change.podcast.title)), interrupted before its feed was "
                            + "stored: its \(ListSummary.count(inserted.count, "episode")) are its back catalogue, not new"
                    )
                    inserted = []
                }
                applied.inserted = inserted.count
                applied.documentBytes = feed.documentSize
            } catch {
                applied.failure = "cannot save the refresh: \(error)"
                applied.outcome = .failed
            }
        } else {
            // A feed found unchanged only moves the podcast's refresh times on: a power cut that rolls them back makes
            // the next start refresh it again, so its commit skips the fsync, one per feed of a refresh
            // (docs/ARCHITECTURE.md, Refreshing many feeds).
            if change.outcome == .notModified && !moved {
                await saveUnchanged(change.podcast)
            } else {
                try? await save(change.podcast)
            }
        }
        if applied.failure == nil {
            do {
                applied.queued = try await applyPolicy(id, inserted: inserted, initial: finishing)
            } catch {
                logger.error("auto-download for \(change.podcast.title) failed: \(error)")
            }
        }
        return applied
    }

    /// Saves a podcast a refresh found unchanged together with the others found meanwhile: one transaction, without
    /// an fsync, for many. The first refresh to get here waits ``unchangedGathering`` for more, saves, and again while
    /// more arrive; the others return at once. What they found is in memory: a crash before it is stored only has
    /// those feeds refreshed again, and a refresh of many feeds ends once the last save did.
    func saveUnchanged(_ podcast: PodcastRecord) async {
        podcasts[podcast.id] = podcast
        unchangedToSave.insert(podcast.id)
        guard !savingUnchanged else { return }
        savingUnchanged = true
        defer { savingUnchanged = false }
        while !unchangedToSave.isEmpty {
            // Cancelled (the refresh was stopped), it saves at once what it has.
            try? await Task.sleep(for: Self.unchangedGathering)
            // Each as it is now; only its refresh times and state: whoever changed anything else saved it.
            let batch = unchangedToSave.sorted().compactMap { podcasts[$0] }
            unchangedToSave = []
            try? await store.saveRefreshTimes(batch, durability: .processCrash)
        }
    }

    /// How long the saver of unchanged feeds gathers others before each save. Without it a refresh of 1,000
    /// unchanged feeds from a fast server saved them two at a time, 500 transactions and 1,000 hops to the store's
    /// thread: a quarter of the refresh's CPU (docs/ARCHITECTURE.md, Refreshing many feeds). A refresh answers at
    /// most this much later.
    static let unchangedGathering: Duration = .milliseconds(2)

    /// The answer to a refresh, announced as the `refreshed` event.
    ///
    /// Its episode counts are read here only for a watcher of the event: a client's `refresh` counts them for its
    /// answer once every feed is done (``countEpisodes(in:ofEvery:)``), and a timer's refresh answers no one. Counting
    /// each podcast as its refresh ended was a query and two hops to the store's thread per feed, a fifth of the CPU
    /// of a refresh of 1,000 unchanged feeds (docs/ARCHITECTURE.md, Refreshing many feeds).
    func finishRefresh(_ applied: AppliedRefresh) async -> RefreshReport {
        // Read again: the artwork may have been stored since. Unsubscribed meanwhile, the answer shows the podcast as
        // the refresh left it.
        let final = podcasts[applied.id] ?? applied.podcast
        var result = summary(final, counts: nil)
        if events.isWatched(.podcasts) {
            result = (try? await summary(final)) ?? result
            events.podcastRefreshed(result, newEpisodes: applied.inserted)
        }
        return RefreshReport(
            id: applied.id,
            podcast: result,
            outcome: applied.outcome,
            newEpisodes: applied.inserted,
            queued: applied.queued,
            error: applied.failure
        )
    }

    /// Fills in the episode counts of the podcasts `reports` show: with `every` podcast refreshed, from one count of
    /// all of them (kept until the next write to the episodes, so the answer of a refresh that changed nothing
    /// counts nothing), else podcast by podcast.
    func countEpisodes(in reports: inout [RefreshReport], ofEvery every: Bool) async {
        let all = every ? try? await counts() : nil
        for index in reports.indices {
            guard let podcast = reports[index].podcast, podcast.counts == nil else { continue }
            let counted =
                if let all {
                    all[podcast.record.id] ?? EpisodeCounts(total: 0, new: 0)
                } else {
                    try? await counts(of: podcast.record.id)
                }
            reports[index].podcast?.counts = counted
        }
    }

    /// What a refresh that could not run to its end reports: its podcast was unsubscribed, or it was stopped.
    static func failedRefresh(_ id: Int64, _ error: String) -> RefreshReport {
        RefreshReport(id: id, podcast: nil, outcome: .failed, newEpisodes: 0, queued: [], error: error)
    }

    /// Stores the podcast as it is now (``FeedUpdate`` made it) and a parsed feed's episodes, read as they are
    /// stored, in one transaction.
    ///
    /// - Returns: The ids of the episodes inserted.
    func storeFeed(
        _ id: Int64,
        _ parsed: FeedFetcher.ParsedFeed,
        markNew: Bool,
        durability: Durability
    ) async throws -> [Int64] {
        // Read and handed to the store in one step: no await comes between.
        guard let podcast = podcasts[id] else { return [] }
        let now = self.now()
        episodesWritten()
        defer { episodesWritten() }
        let inserted = try await store.applyRefresh(podcast, durability: durability) { store in
            try parsed.episodes(of: id, markNew: markNew, now: now, into: store)
        }
        // A feed may add a transcript to an episode whose file is here already; one that offers none has nothing
        // to take up, and asking made an OPML import's store thread take up nothing after every feed.
        if parsed.offeredSidecars { sidecars.wanted() }
        return inserted
    }

    /// Queues what the podcast's policy asks for; retention then deletes what its rules let go of.
    ///
    /// - Parameter initial: The policy was just set (or the podcast subscribed): `latest:N` fills up to N at once,
    ///   while `all-new` only takes episodes that appear from now on.
    func applyPolicy(_ id: Int64, inserted ids: [Int64], initial: Bool) async throws -> [Int64] {
        // The policy as it is now is used across the reads below: a `set` that changes it meanwhile applies the new
        // one itself once saved, and the enqueue drops what it would link to a podcast unsubscribed meanwhile.
        guard let podcast = podcasts[id] else { return [] }
        let policy = policy(for: podcast)
        let now = self.now()
        var newest: [EpisodePolicy.Candidate] = []
        if case .latest(let count) = policy.fetch {
            // latest:N takes the newest N the rules let through: read more while skipped ones hide them.
            var limit = count + 20
            while true {
                let read = try await store.episodes(of: id, limit: limit, fields: .listing)
                newest = read.map(EpisodePolicy.Candidate.init)
                if policy.hasEnough(newest, readAll: read.count < limit, now: now) { break }
                limit *= 4
            }
        }
        // Only `all-new` looks at what a refresh inserted, and a subscription's back catalogue is not new.
        var inserted: [EpisodeRecord] = []
        if case .allNew = policy.fetch, !initial, !ids.isEmpty {
            inserted = try await store.episodes(ids: ids, fields: .listing)
        }
        let started = ContinuousClock.now
        let wanted = policy.wanted(
            newest: newest,
            inserted: inserted.map(EpisodePolicy.Candidate.init),
            initial: initial,
            now: now
        )
        if policy.fetch != .off {
            logger.debug(
                "auto-download: rules over \(newest.count + inserted.count) episodes of podcast \(id) evaluated in "
                    + "\(RuleTiming.milliseconds(.now - started)) ms, \(wanted.count) wanted"
            )
        }
        let queued = try await enqueueEpisodes(wanted, priority: nil, requested: false).map(\.id)
        if !queued.isEmpty {
            logger.info(
                "auto-download (\(policy.fetch.stored)) queued \(ListSummary.count(queued.count, "episode")) of "
                    + ListSummary.title(podcast.title)
            )
        }
        let retention = policy.retention
        if retention.keep != nil || retention.deletePlayedAfter != nil || retention.deleteOlderThan != nil
            || settings.maxStorage != nil
        {
            await retentionWanted()
        }
        return queued
    }

    /// Runs retention now, for a command whose answer should show its effect.
    func applyRetentionNow() async { await retention.runNow(retentionPolicies()) }
}
