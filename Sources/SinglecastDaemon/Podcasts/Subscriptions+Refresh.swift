import CPosix
import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// Refreshing a podcast: fetching and parsing its feed within the fetch limits, joining a refresh already running,
/// storing what it found, and queueing what its auto-download policy asks for.
extension Subscriptions {
    // MARK: - Refresh

    /// Fetches and parses feeds with the current settings, within the fetch limits.
    var feeds: FeedFetcher {
        FeedFetcher(
            fetch: limitedFetch,
            maxFeedBytes: settings.maxFeedBytes,
            memory: (feedMemory, settings.feedMemoryBudget),
            store: store,
            deadline: settings.fetchDeadline,
            transfer: settings.transfer
        )
    }

    /// The engine's fetch, within the limiter's per-host and total limits.
    var limitedFetch: @Sendable (FetchRequest) async throws(TransferError) -> FetchResult {
        { [limiter, engine] (request) throws(TransferError) in try await limiter.fetch(request, on: engine) }
    }

    /// A big feed's document and records are freed once its refresh or subscription is over, but glibc keeps the
    /// memory in its arenas, and SQLite its page cache: give both back then, so that one 100,000-item feed does not
    /// hold memory for good.
    func trimHeapAfterBigFeeds() async {
        guard bigFeedsStored > 0, refreshing.isEmpty else { return }
        bigFeedsStored = 0
        await store.releaseMemory()
        _ = cposix_trim_heap()
    }

    struct RunningRefresh {
        let stop = Completion()
        var waiters: [CheckedContinuation<RefreshResult.Entry, Never>] = []
    }

    /// Refreshes one podcast and applies its auto-download policy, or joins the refresh of it already running.
    ///
    /// The refresh runs in the caller's task (the refresher's task group, or the connection of a client that
    /// asked), not a task of its own: it is cancelled with its caller, and ``RunningRefresh/stop`` (unsubscribe, the
    /// refresher stopping) ends it early.
    func refreshAndApply(_ id: Int64) async -> RefreshResult.Entry? {
        if refreshing[id] != nil {
            return await withCheckedContinuation { refreshing[id]?.waiters.append($0) }
        }
        guard podcasts[id] != nil, !leaving.contains(id) else { return nil }
        let running = RunningRefresh()
        refreshing[id] = running
        let entry = await withTaskGroup(of: RefreshResult.Entry?.self) { group in
            group.addTask { await self.performRefresh(id) }
            group.addTask {
                try? await running.stop.wait()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? Self.failedRefresh(id, "stopped before it finished")
        }
        for waiter in refreshing.removeValue(forKey: id)?.waiters ?? [] { waiter.resume(returning: entry) }
        await trimHeapAfterBigFeeds()
        return entry
    }

    /// What a refresh that could not run to its end reports: its podcast was unsubscribed, or it was stopped.
    static func failedRefresh(_ id: Int64, _ error: String) -> RefreshResult.Entry {
        RefreshResult.Entry(
            podcast: placeholderInfo(id),
            outcome: RefreshOutcome.failed.rawValue,
            newEpisodes: 0,
            queued: [],
            error: error
        )
    }

    func performRefresh(_ id: Int64) async -> RefreshResult.Entry {
        guard let podcast = podcasts[id] else { return Self.failedRefresh(id, "unsubscribed") }
        let fetched = await feeds.fetch(podcast, conditional: true)
        let now = self.now()
        guard let current = podcasts[id] else { return Self.failedRefresh(id, "unsubscribed during the refresh") }
        let change = FeedUpdate.apply(
            fetched.update,
            to: current,
            now: now,
            nextRefreshAt: schedule.nextRefresh(of: current, after: now, jitter: jitter()),
            urlTaken: { url in podcasts.values.contains { $0.id != id && $0.feedURL == url } }
        )
        for line in change.log { logger.log(line.level, line.message) }
        podcasts[id] = change.podcast
        var outcome = change.outcome
        var failure = change.failure
        var inserted: [Int64] = []
        if case .updated(let feed, _, _) = fetched {
            do {
                inserted = try await storeFeed(id, feed, markNew: true)
            } catch {
                failure = "cannot save the refresh: \(error)"
                outcome = .failed
            }
        } else {
            try? await save(change.podcast)
        }
        var queued: [Int64] = []
        if failure == nil {
            do {
                queued = try await applyPolicy(id, inserted: inserted, initial: false)
            } catch {
                logger.error("auto-download for \(change.podcast.title) failed: \(error)")
            }
            if outcome != .notModified { await refreshArtwork(id) }
        }
        let final = podcasts[id] ?? change.podcast
        let result = (try? await info(final)) ?? info(final, counts: nil)
        publish(.refreshed, result, newEpisodes: inserted.count)
        return RefreshResult.Entry(
            podcast: result,
            outcome: outcome.rawValue,
            newEpisodes: inserted.count,
            queued: queued,
            error: failure
        )
    }

    /// Stores the podcast as it is now (``FeedUpdate`` made it) and a parsed feed's episodes, read as they are
    /// stored, in one transaction.
    ///
    /// - Returns: The ids of the episodes inserted.
    func storeFeed(_ id: Int64, _ parsed: FeedFetcher.ParsedFeed, markNew: Bool) async throws -> [Int64] {
        guard let podcast = podcasts[id] else { return [] }
        let now = self.now()
        episodesWritten()
        defer { episodesWritten() }
        let inserted = try await store.applyRefresh(podcast) { store in
            try parsed.episodes(of: id, markNew: markNew, now: now, into: store)
        }
        if parsed.documentSize >= 1 << 20 { bigFeedsStored += 1 }
        return inserted
    }

    /// Queues what the podcast's policy asks for; retention then deletes what its rules let go of.
    ///
    /// - Parameter initial: The policy was just set (or the podcast subscribed): `latest:N` fills up to N at once,
    ///   while `all-new` only takes episodes that appear from now on.
    func applyPolicy(_ id: Int64, inserted ids: [Int64], initial: Bool) async throws -> [Int64] {
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
        let queued = try await enqueueEpisodes(wanted, priority: nil, requested: false).downloads.map(\.id)
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
