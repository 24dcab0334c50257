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

/// Settings of the podcast side that a reload may change.
package struct PodcastSettings: Sendable, Hashable {
    /// Time between refreshes of one podcast; each is jittered by ±10 % so many feeds do not refresh at once.
    package var refreshInterval: Duration = .seconds(3600)
    package var naming = EpisodeNaming()
    /// The largest feed document accepted.
    package var maxFeedBytes: Int64 = 100 << 20
    /// The memory feed documents and their parses may hold at once (`feed_memory_budget`).
    package var feedMemoryBudget: Int64 = 256 << 20
    /// The artwork cache's size; the least recently refreshed images go first.
    package var artworkCacheBytes: Int64 = 100 << 20
    /// The configured episode rules, which a podcast's own override rule by rule.
    package var rules = EpisodeRules()
    /// The budget for every downloaded file (`max_storage`), in bytes.
    package var maxStorage: Int64?
    package var transfer = TransferOptions()
    /// How long one feed or artwork fetch may take in all, however steadily its server trickles bytes.
    package var fetchDeadline: Duration = .seconds(120)
    /// Feed and artwork fetches running at once, in all and to one host (`refresh_concurrent`, `refresh_per_host`).
    package var fetchConcurrency = 16
    package var fetchesPerHost = 4

    package init() {}
}

/// Subscriptions, their feeds and episodes, and the auto-download policy that feeds the download queue.
///
/// The podcasts live in memory and in the store; every change is committed before it is answered or announced.
/// A refresh never loses what the last good one stored: a failure is recorded next to the old episodes.
package actor Subscriptions: Service {
    let store: Store
    private let engine: HTTPEngine
    let queue: DownloadQueue
    let events: EventBus
    let logger: Logger
    private let downloadDirectory: String
    private let artworkDirectory: String
    /// Finds a podcast's feed URL by its iTunes id (the directory's `lookup`).
    private let lookup: @Sendable (Int64) async throws -> String
    private(set) var settings: PodcastSettings

    /// Every subscription; read by the actor's extensions in other files.
    private(set) var podcasts: [Int64: PodcastRecord] = [:]
    /// Episode totals by podcast as the last count found them (a scan of every episode, tens of milliseconds with
    /// 100,000), or `nil` once a write may have changed them.
    private var episodeCounts: [Int64: EpisodeCounts]?
    /// Raised before and after every write to the episodes, so that a count that ran alongside one is not kept.
    private var episodeWrites = 0
    /// Refreshes running: the signal that stops each, and the callers waiting to share its result.
    private var refreshing: [Int64: RunningRefresh] = [:]
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// When the sleeping child of ``run()`` wakes the loop, if one sleeps.
    private var wake = WakeSchedule()
    /// Big feeds stored since the heap was last trimmed (``trimHeapAfterBigFeeds()``).
    private var bigFeedsStored = 0
    /// Bounds the fetches of feeds and artwork; replaced when a reload changes its limits (fetches already
    /// waiting in the old one finish there).
    private var limiter: FetchLimiter
    private let feedMemory = FeedMemoryLimiter(limit: PodcastSettings().feedMemoryBudget)
    /// New subscriptions whose artwork the service loop fetches, as children of its task group.
    private var artworkWanted: Set<Int64> = []
    /// Retention should run at the service loop's next turn (a completion, a played mark, changed rules); and
    /// when a rule next lets go of a file if nothing else happens first.
    private var retentionDue = true
    private var retentionNextAt: Int64?

    package init(
        store: Store,
        engine: HTTPEngine,
        queue: DownloadQueue,
        events: EventBus,
        logger: Logger,
        settings: PodcastSettings,
        downloadDirectory: String,
        artworkDirectory: String,
        lookup: @escaping @Sendable (Int64) async throws -> String
    ) {
        self.store = store
        self.engine = engine
        self.queue = queue
        self.events = events
        self.logger = logger
        self.settings = settings
        self.downloadDirectory = downloadDirectory
        self.artworkDirectory = artworkDirectory
        self.lookup = lookup
        self.limiter = FetchLimiter(limit: settings.fetchConcurrency, perHostLimit: settings.fetchesPerHost)
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Start-up, before READY: loads the subscriptions.
    package func load() async throws {
        for podcast in try await store.podcasts() { podcasts[podcast.id] = podcast }
    }

    package func update(_ newSettings: PodcastSettings) {
        if (newSettings.fetchConcurrency, newSettings.fetchesPerHost)
            != (settings.fetchConcurrency, settings.fetchesPerHost)
        {
            limiter = FetchLimiter(limit: newSettings.fetchConcurrency, perHostLimit: newSettings.fetchesPerHost)
        }
        // Reloaded rules or a new budget may let go of files now.
        if (newSettings.rules, newSettings.maxStorage) != (settings.rules, settings.maxStorage) { retentionDue = true }
        settings = newSettings
        wakeup.yield()
    }

    // MARK: - Service: periodic refresh

    /// Refreshes every podcast whose time has come, a few at a time, then sleeps until the next one is due.
    package func run() async throws {
        wakeup.yield()
        // One sleeping child at a time: a wake-up before it ends (a new subscription, a changed interval) only
        // replaces it when the next refresh moved earlier, and shutdown cancels it.
        await withDiscardingTaskGroup { group in
            // A completed download may put the files over max_storage.
            group.addTask { for await _ in self.queue.completions { await self.retentionWanted() } }
            for await _ in wakeups {
                for id in artworkWanted { group.addTask { await self.refreshArtwork(id) } }
                artworkWanted = []
                await refreshDue()
                if Task.isCancelled { break }
                if retentionDue || (retentionNextAt ?? .max) <= Self.now() {
                    retentionDue = false
                    retentionNextAt = await applyRetention()
                }
                let next = podcasts.values.compactMap { $0.gone ? nil : $0.nextRefreshAt }.min()
                let due = min(next ?? .max, retentionNextAt ?? .max)
                let wakeAt = Self.now() + max(1000, min(due - Self.now(), 60_000))
                if wake.request(wakeAt) { group.addTask { await self.sleepUntil(wakeAt) } }
            }
            group.cancelAll()
        }
        // Refreshes asked for by clients run in their connections' tasks (a client's refresh and the timer's may
        // join one); they end with the service, not after it.
        for running in refreshing.values { running.stop.succeed() }
    }

    private func refreshDue() async {
        let now = Self.now()
        let due = podcasts.values.filter { !$0.gone && ($0.nextRefreshAt ?? 0) <= now }
            .sorted { ($0.nextRefreshAt ?? 0) < ($1.nextRefreshAt ?? 0) }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for podcast in due {
                if running == settings.fetchConcurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask { _ = await self.refreshAndApply(podcast.id) }
                running += 1
            }
        }
    }

    private func sleepUntil(_ at: Int64) async {
        try? await Task.sleep(for: .milliseconds(max(0, at - Self.now())))
        wake.woke(at)
        wakeup.yield()
    }

    package nonisolated func shutdown() { wakeup.finish() }

    /// Asks the service loop to run retention at its next turn.
    func retentionWanted() {
        retentionDue = true
        wakeup.yield()
    }

    // MARK: - Commands

    package func subscribe(_ params: SubscribeParams) async throws -> SubscribeResult {
        do {
            let result = try await subscribeAndStore(params)
            await trimHeapAfterBigFeeds()
            return result
        } catch {
            await trimHeapAfterBigFeeds()
            throw error
        }
    }

    private func subscribeAndStore(_ params: SubscribeParams) async throws -> SubscribeResult {
        guard (params.url == nil) != (params.itunesID == nil) else {
            throw PodcastError.invalid("'subscribe' takes exactly one of 'url' and 'itunes_id'", parameter: "url")
        }
        if (params.user == nil) != (params.password == nil) {
            throw PodcastError.invalid("'user' and 'password' go together", parameter: "user")
        }
        try Self.checkPolicy(
            EpisodePolicy(fetch: .init(params.autoDownload ?? .off), keep: params.keep, rules: settings.rules)
        )
        var text: String
        if let id = params.itunesID {
            text = try await lookup(id)
        } else {
            text = params.url ?? ""
        }
        var (url, user, password) = try Self.feedURL(text)
        if params.user != nil {
            user = params.user
            password = params.password
        }
        text = url
        if let existing = podcasts.values.first(where: { $0.feedURL == text }) {
            var podcast = existing
            if let auto = params.autoDownload { podcast.autoDownload = EpisodePolicy.Fetch(auto).stored }
            if let keep = params.keep { podcast.keep = keep > 0 ? keep : nil }
            if let user { (podcast.authUser, podcast.authPassword) = (user, password) }
            try await save(podcast)
            return SubscribeResult(podcast: try await info(podcast), existing: true, queued: [])
        }

        var podcast = PodcastRecord(feedURL: url, subscribedAt: Self.now())
        podcast.itunesID = params.itunesID
        podcast.authUser = user
        podcast.authPassword = password
        podcast.autoDownload = EpisodePolicy.Fetch(params.autoDownload ?? .off).stored
        podcast.keep = params.keep.flatMap { $0 > 0 ? $0 : nil }
        // Fetched and parsed before anything is stored: a wrong URL leaves no subscription behind.
        let fetched = await feeds.fetch(podcast, conditional: false)
        guard case .updated(let feed, let response, let movedTo) = fetched else {
            throw Self.feedError(fetched, url: url)
        }
        // Where a permanent redirect chain ended is the URL subscribed to (and known, if another has it).
        if let movedTo { podcast.feedURL = movedTo }
        let inserted: (podcast: PodcastRecord, existing: Bool)
        do {
            inserted = try await store.insertPodcast(podcast)
        } catch {
            throw PodcastError.store("the subscription could not be saved: \(error)")
        }
        podcast = inserted.podcast
        if inserted.existing {
            podcasts[podcast.id] = podcast
            return SubscribeResult(podcast: try await info(podcast), existing: true, queued: [])
        }
        let now = Self.now()
        let change = FeedUpdate.apply(
            FeedFetcher.Fetched.updated(feed, response, movedTo: nil).update,
            to: podcast,
            now: now,
            nextRefreshAt: now + jitteredInterval(podcast),
            urlTaken: { url in podcasts.values.contains { $0.feedURL == url } }
        )
        for line in change.log { logger.log(line.level, line.message) }
        podcasts[podcast.id] = change.podcast
        // The back catalogue is not "new": only episodes that appear after subscribing are.
        let episodes = try await storeFeed(podcast.id, feed, markNew: false)
        let queued = try await applyPolicy(podcast.id, inserted: episodes, initial: true)
        let current = podcasts[podcast.id] ?? podcast
        logger.notice("subscribed to \(current.title) (\(redactedURL(current.feedURL)))")
        let result = try await info(current)
        publish(.subscribed, result)
        artworkWanted.insert(podcast.id)
        wakeup.yield()
        return SubscribeResult(podcast: result, existing: false, queued: queued)
    }

    package func unsubscribe(_ params: UnsubscribeParams) async throws -> UnsubscribeResult {
        let podcast = try resolve(params.podcast)
        let result = try await info(podcast)
        let episodes = try await episodeRecords(of: podcast.id)
        // A download another podcast's episode shares (one enclosure URL in two feeds) is that podcast's too.
        let downloads = try await ownDownloads(episodes.compactMap(\.downloadID), leaving: episodes.map(\.id))
        let before = await queue.infos(downloads)
        let unfinished = before.values.filter { $0.state != .completed }.map(\.id).sorted()
        let deleted = try await queue.discard(downloads, deleteFiles: params.deleteFiles ?? false)
        episodesWritten()
        defer { episodesWritten() }
        do {
            try await store.deletePodcast(podcast.id)
        } catch {
            throw PodcastError.store("the subscription could not be removed: \(error)")
        }
        podcasts[podcast.id] = nil
        refreshing[podcast.id]?.stop.succeed()
        if let path = podcast.artworkPath { unlink(path) }
        logger.notice("unsubscribed from \(podcast.title)")
        publish(.unsubscribed, result)
        return UnsubscribeResult(podcast: result, cancelledDownloads: unfinished, deletedFiles: deleted.map(\.path))
    }

    package func list() async throws -> PodcastsResult {
        let counts = try await counts()
        return PodcastsResult(
            podcasts: podcasts.values.sorted { $0.id < $1.id }.map { info($0, counts: counts[$0.id]) }
        )
    }

    package func episodes(_ params: EpisodesParams) async throws -> EpisodesResult {
        let podcast = try resolve(params.podcast)
        if let limit = params.limit, limit < 1 {
            throw PodcastError.invalid("'limit' must be at least 1", parameter: "limit")
        }
        let brief = params.brief ?? false
        let records: [EpisodeRecord]
        do {
            records = try await store.episodes(
                of: podcast.id,
                onlyNew: params.new ?? false,
                unplayed: params.unplayed ?? false,
                limit: params.limit,
                fields: brief ? .listing : .all
            )
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let downloads = await queue.infos(records.compactMap(\.downloadID))
        let policy = policy(for: podcast)
        let now = Self.now()
        // Why the rules pass over an episode, for one they would otherwise have a say on.
        var skipped: [String?] = []
        if policy.fetch != .off {
            let started = ContinuousClock.now
            skipped = records.map { record in
                record.downloadID == nil ? policy.skip(EpisodePolicy.Candidate(record), now: now)?.description : nil
            }
            let evaluated = ContinuousClock.now - started
            logger.debug(
                "episodes: rules over \(records.count) episodes of podcast \(podcast.id) evaluated in "
                    + "\(Self.milliseconds(evaluated)) ms (\(skipped.count(where: { $0 != nil })) skipped)"
            )
        }
        return EpisodesResult(
            podcast: try await info(podcast),
            episodes: records.indices.map { index in
                let record = records[index]
                var info = Self.info(
                    record,
                    download: record.downloadID.flatMap { downloads[$0] },
                    skipped: skipped.isEmpty ? nil : skipped[index]
                )
                // Read for the rules, not shown in a list.
                if brief { info.enclosureURL = nil }
                return info
            }
        )
    }

    package func refresh(_ params: RefreshParams) async throws -> RefreshResult {
        let chosen: [PodcastRecord]
        if let selector = params.podcast {
            chosen = [try resolve(selector)]
        } else {
            chosen = podcasts.values.sorted { $0.id < $1.id }
        }
        var entries: [RefreshResult.Entry] = []
        await withTaskGroup(of: RefreshResult.Entry?.self) { group in
            for podcast in chosen { group.addTask { await self.refreshAndApply(podcast.id) } }
            for await entry in group { if let entry { entries.append(entry) } }
        }
        return RefreshResult(refreshed: entries.sorted { $0.podcast.id < $1.podcast.id })
    }

    package func set(_ params: SetPodcastParams) async throws -> PodcastResult {
        var podcast = try resolve(params.podcast)
        guard
            params.autoDownload != nil || params.keep != nil || params.nameTemplate != nil || params.folder != nil
                || params.refreshInterval != nil || params.rules != nil
        else {
            throw PodcastError.invalid(
                "'set' needs at least one of 'auto_download', 'keep', 'name_template', 'folder', 'refresh_interval' "
                    + "and 'rules'",
                parameter: "auto_download"
            )
        }
        let interval = podcast.refreshInterval
        podcast = try changed(podcast, by: params)
        if podcast.refreshInterval != interval || params.refreshInterval != nil {
            // The next refresh follows the new interval, not the old one.
            podcast.nextRefreshAt =
                (podcast.succeededAt ?? podcast.refreshedAt ?? Self.now()) + jitteredInterval(podcast)
            wakeup.yield()
        }
        try await save(podcast)
        _ = try await applyPolicy(podcast.id, inserted: [], initial: params.autoDownload != nil)
        if params.rules != nil || params.keep != nil { await applyRetentionNow() }
        return PodcastResult(podcast: try await info(podcasts[podcast.id] ?? podcast))
    }

    /// `podcast` with `params`' changes, each checked; nothing is stored. `set` stores the result, `rules` shows
    /// what it would do.
    func changed(_ podcast: PodcastRecord, by params: SetPodcastParams) throws -> PodcastRecord {
        var podcast = podcast
        if let template = params.nameTemplate {
            if !template.isEmpty, let problem = EpisodeNaming.problem(in: template) {
                throw PodcastError.invalid(
                    "'name_template' '\(template)' is not usable: \(problem)",
                    parameter: "name_template"
                )
            }
            podcast.nameTemplate = template.isEmpty ? nil : template
        }
        if let folder = params.folder {
            // One folder name, sanitized like every part of a file name: it cannot leave the download directory.
            let sanitized = FileNaming.sanitize(folder)
            guard folder.isEmpty || (sanitized == folder && !folder.contains("/")) else {
                throw PodcastError.invalid(
                    "'folder' must be one plain folder name (no '/', no leading dot, no control characters); "
                        + "'\(sanitized)' would do",
                    parameter: "folder"
                )
            }
            podcast.folder = folder.isEmpty ? nil : folder
        }
        if let seconds = params.refreshInterval {
            guard seconds == 0 || (60...7 * 86_400).contains(seconds) else {
                throw PodcastError.invalid(
                    "'refresh_interval' must be from 60 seconds to 7 days (604800), or 0 for the configured one; "
                        + "got \(seconds)",
                    parameter: "refresh_interval"
                )
            }
            podcast.refreshInterval = seconds == 0 ? nil : Int64(seconds) * 1000
        }
        if let auto = params.autoDownload { podcast.autoDownload = EpisodePolicy.Fetch(auto).stored }
        if let keep = params.keep {
            try Self.checkPolicy(EpisodePolicy(fetch: .off, keep: keep))
            podcast.keep = keep > 0 ? keep : nil
        }
        if let changes = params.rules {
            var own = EpisodeRules(stored: podcast.rules)
            for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
                guard let key = EpisodeRules.Key(rawValue: name) else {
                    let known = EpisodeRules.Key.allCases.map(\.rawValue).joined(separator: ", ")
                    throw PodcastError.invalid("there is no rule '\(name)'; the rules are \(known)", parameter: "rules")
                }
                do {
                    try own.set(key, to: value)
                } catch {
                    throw PodcastError.invalid(error.message, parameter: "rules")
                }
            }
            podcast.rules = own.stored
        }
        try Self.checkPolicy(policy(for: podcast))
        return podcast
    }

    package func downloadLatest(_ params: DownloadLatestParams) async throws -> EnqueueResult {
        let podcast = try resolve(params.podcast)
        guard params.latest >= 1 else {
            throw PodcastError.invalid("'latest' must be at least 1", parameter: "latest")
        }
        let latest = try await store.episodes(of: podcast.id, limit: params.latest)
        return try await enqueueEpisodes(latest.map(\.id), priority: nil, requested: true, now: params.now == true)
    }

    /// `enqueue` with episode ids (and possibly URLs too, which go to the queue as they are).
    package func enqueue(_ params: EnqueueParams) async throws -> EnqueueResult {
        if params.name != nil || params.directory != nil {
            throw PodcastError.invalid(
                "episodes are named by the name template; 'name' and 'directory' apply to URLs only",
                parameter: params.name != nil ? "name" : "directory"
            )
        }
        // Every URL and every episode is checked before anything is queued, and all of them go in one transaction:
        // a refused request queues nothing.
        var plain = params
        plain.episodes = nil
        let urls = params.urls.isEmpty ? [] : try await queue.requests(for: plain)
        return try await enqueueEpisodes(
            params.episodes ?? [],
            priority: params.priority,
            requested: true,
            now: params.now == true,
            with: urls
        )
    }

    // MARK: - Refresh

    /// Fetches and parses feeds with the current settings, within the fetch limits.
    private var feeds: FeedFetcher {
        FeedFetcher(
            fetch: limitedFetch,
            maxFeedBytes: settings.maxFeedBytes,
            memory: (feedMemory, settings.feedMemoryBudget),
            deadline: settings.fetchDeadline,
            transfer: settings.transfer
        )
    }

    /// The engine's fetch, within the limiter's per-host and total limits.
    private var limitedFetch: @Sendable (FetchRequest) async throws(TransferError) -> FetchResult {
        { [limiter, engine] (request) throws(TransferError) in try await limiter.fetch(request, on: engine) }
    }

    /// A big feed's document and records are freed once its refresh or subscription is over, but glibc keeps the
    /// memory in its arenas, and SQLite its page cache: give both back then, so that one 100,000-item feed does not
    /// hold memory for good.
    private func trimHeapAfterBigFeeds() async {
        guard bigFeedsStored > 0, refreshing.isEmpty else { return }
        bigFeedsStored = 0
        await store.releaseMemory()
        _ = cposix_trim_heap()
    }

    private struct RunningRefresh {
        let stop = Completion()
        var waiters: [CheckedContinuation<RefreshResult.Entry, Never>] = []
    }

    /// Refreshes one podcast and applies its auto-download policy, or joins the refresh of it already running.
    ///
    /// The refresh runs in the caller's task (the refresher's task group, or the connection of a client that
    /// asked), not a task of its own: it is cancelled with its caller, and ``RunningRefresh/stop`` (unsubscribe, the
    /// refresher stopping) ends it early.
    private func refreshAndApply(_ id: Int64) async -> RefreshResult.Entry? {
        if refreshing[id] != nil {
            return await withCheckedContinuation { refreshing[id]?.waiters.append($0) }
        }
        guard podcasts[id] != nil else { return nil }
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
    private static func failedRefresh(_ id: Int64, _ error: String) -> RefreshResult.Entry {
        RefreshResult.Entry(
            podcast: placeholderInfo(id),
            outcome: RefreshOutcome.failed.rawValue,
            newEpisodes: 0,
            queued: [],
            error: error
        )
    }

    private func performRefresh(_ id: Int64) async -> RefreshResult.Entry {
        guard let podcast = podcasts[id] else { return Self.failedRefresh(id, "unsubscribed") }
        let fetched = await feeds.fetch(podcast, conditional: true)
        let now = Self.now()
        guard let current = podcasts[id] else { return Self.failedRefresh(id, "unsubscribed during the refresh") }
        let change = FeedUpdate.apply(
            fetched.update,
            to: current,
            now: now,
            nextRefreshAt: now + jitteredInterval(current),
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
    private func storeFeed(_ id: Int64, _ parsed: FeedFetcher.ParsedFeed, markNew: Bool) async throws -> [Int64] {
        guard let podcast = podcasts[id] else { return [] }
        let now = Self.now()
        episodesWritten()
        defer { episodesWritten() }
        let inserted = try await store.applyRefresh(podcast) { store in
            try parsed.episodes(of: id, markNew: markNew, now: now, into: store)
        }
        if parsed.document.count >= 1 << 20 { bigFeedsStored += 1 }
        return inserted
    }

    /// Queues what the podcast's policy asks for; retention then deletes what its rules let go of.
    ///
    /// - Parameter initial: The policy was just set (or the podcast subscribed): `latest:N` fills up to N at once,
    ///   while `all-new` only takes episodes that appear from now on.
    private func applyPolicy(_ id: Int64, inserted ids: [Int64], initial: Bool) async throws -> [Int64] {
        guard let podcast = podcasts[id] else { return [] }
        let policy = policy(for: podcast)
        let now = Self.now()
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
                    + "\(Self.milliseconds(.now - started)) ms, \(wanted.count) wanted"
            )
        }
        let queued = try await enqueueEpisodes(wanted, priority: nil, requested: false).downloads.map(\.id)
        let retention = policy.retention
        if retention.keep != nil || retention.deletePlayedAfter != nil || retention.deleteOlderThan != nil
            || settings.maxStorage != nil
        {
            retentionWanted()
        }
        return queued
    }

    /// Runs retention now, for a command whose answer should show its effect.
    func applyRetentionNow() async {
        retentionNextAt = await applyRetention()
        retentionDue = false
    }

    /// What became of the files of episodes that let go of their downloads.
    struct LetGo {
        var deleted: [String] = []
        /// Files another episode still has.
        var kept: [String] = []
        /// Where deleted files went in the Trash, by their old path.
        var trashed: [String: String] = [:]
    }

    /// Episodes let go of their downloads: a download no other episode points at is cancelled (an unfinished one)
    /// or forgotten with its file deleted (a completed one); a shared one stays for the other episodes. The episodes
    /// are marked as having had their file deleted for `reason`, so the policies do not download them again.
    func letGo(_ episodes: [EpisodeRecord], reason: String) async throws -> LetGo {
        let downloads = episodes.compactMap(\.downloadID)
        let owned = try await ownDownloads(downloads, leaving: episodes.map(\.id))
        let shared = Set(downloads).subtracting(owned)
        var outcome = LetGo()
        outcome.kept = await queue.infos(Array(shared)).values.filter { $0.state == .completed }.map(\.file).sorted()
        for file in try await queue.discard(owned, deleteFiles: true) {
            outcome.deleted.append(file.path)
            if let trashed = file.trashedTo { outcome.trashed[file.path] = trashed }
        }
        episodesWritten()
        defer { episodesWritten() }
        do {
            try await store.releaseEpisodeFiles(episodes.map(\.id), at: Self.now(), reason: reason)
        } catch {
            throw PodcastError.store("cannot unlink the episodes from their downloads: \(error)")
        }
        return outcome
    }

    /// `delete`: the episodes' files go (unless another episode has them), and their downloads with them.
    package func delete(_ params: EpisodeSelectionParams) async throws -> DeleteResult {
        let episodes = try await existingEpisodes(params.episodes).filter { $0.downloadID != nil }
        let outcome = try await letGo(episodes, reason: "deleted on request")
        if !outcome.deleted.isEmpty { logger.info("deleted \(outcome.deleted.count) episode file(s) on request") }
        return DeleteResult(episodes: episodes.map(\.id), deletedFiles: outcome.deleted, keptFiles: outcome.kept)
    }

    /// `redownload`: as `delete`, then queued again.
    package func redownload(_ params: EpisodeSelectionParams) async throws -> EnqueueResult {
        let episodes = try await existingEpisodes(params.episodes)
        // Checked before anything is deleted: an episode with nothing to download would lose its file for nothing.
        if let episode = episodes.first(where: { !Self.isDownloadable($0.enclosureURL) }) {
            throw Self.noEnclosure(episode)
        }
        _ = try await letGo(episodes.filter { $0.downloadID != nil }, reason: "deleted to download again")
        return try await enqueueEpisodes(params.episodes, priority: nil, requested: true)
    }

    /// `inbox`: new episodes of every podcast, newest first.
    package func inbox(_ params: InboxParams) async throws -> InboxResult {
        if let limit = params.limit, limit < 1 {
            throw PodcastError.invalid("'limit' must be at least 1", parameter: "limit")
        }
        let records: [EpisodeRecord]
        do {
            records = try await store.newEpisodes(limit: params.limit)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let downloads = await queue.infos(records.compactMap(\.downloadID))
        let counts = try await counts()
        let shown = Set(records.map(\.podcastID))
        return InboxResult(
            episodes: records.map { Self.info($0, download: $0.downloadID.flatMap { downloads[$0] }) },
            podcasts: podcasts.values.filter { shown.contains($0.id) }.sorted { $0.id < $1.id }
                .map { info($0, counts: counts[$0.id]) }
        )
    }

    /// The episodes with these ids, in the order asked; an unknown id is `unknown_episode`.
    func existingEpisodes(_ ids: [Int64]) async throws -> [EpisodeRecord] {
        guard !ids.isEmpty else {
            throw PodcastError.invalid("'episodes' must name at least one episode", parameter: "episodes")
        }
        let found: [EpisodeRecord]
        do {
            found = try await store.episodes(ids: ids, fields: .withoutDescription)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let foundIDs = Set(found.map(\.id))
        if let missing = ids.first(where: { !foundIDs.contains($0) }) { throw PodcastError.unknownEpisode(missing) }
        return found
    }

    /// The downloads among `downloads` that no episode but `leaving` points at: only those may be cancelled or have
    /// their files deleted when those episodes let go of them.
    private func ownDownloads(_ downloads: [Int64], leaving episodes: [Int64]) async throws -> [Int64] {
        let shared: Set<Int64>
        do {
            shared = try await store.downloadsReferenced(downloads, exceptEpisodes: Set(episodes))
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        return downloads.filter { !shared.contains($0) }
    }

    /// Queues episodes into their podcasts' folders, named by the template, each linked to its download in the same
    /// transaction (a crash between the two would queue the episode again as `name (2)`).
    ///
    /// - Parameters:
    ///   - requested: The listener asked for these episodes; ``EpisodeRecord/requested`` is recorded first, so that
    ///     no retention run between the download's completion and the mark can take the file.
    ///   - now: Pass the download gate (`--now`), the episodes' existing downloads too.
    ///   - urls: Plain URL requests, already validated, queued in the same transaction before the episodes.
    private func enqueueEpisodes(
        _ ids: [Int64],
        priority: Int?,
        requested: Bool,
        now: Bool = false,
        with urls: [DownloadRequest] = []
    ) async throws -> EnqueueResult {
        guard !ids.isEmpty || !urls.isEmpty else { return EnqueueResult(downloads: []) }
        let found = ids.isEmpty ? [] : try await existingEpisodes(ids)
        // Every episode is checked before any is queued, so a refused request queues nothing.
        if let episode = found.first(where: { podcasts[$0.podcastID] != nil && !Self.isDownloadable($0.enclosureURL) })
        {
            throw Self.noEnclosure(episode)
        }
        if requested, !found.isEmpty {
            do {
                try await store.setRequested(found.map(\.id))
            } catch {
                throw PodcastError.store("cannot mark the episodes: \(error)")
            }
        }
        // Every new download goes to the queue in one request, so ten thousand episodes cost one transaction.
        let existing = await queue.infos(found.compactMap(\.downloadID))
        var requests = urls
        var entries: [EnqueueResult.Entry?] = Array(repeating: nil, count: urls.count)
        for episode in found {
            guard let podcast = podcasts[episode.podcastID], let text = episode.enclosureURL,
                let url = URL(string: text)
            else { continue }
            // A completed download whose file is gone (deleted by hand) is fetched again when asked for.
            if let info = episode.downloadID.flatMap({ existing[$0] }),
                info.state != .completed || FileManager.default.fileExists(atPath: info.file)
            {
                entries.append(
                    EnqueueResult.Entry(
                        id: info.id,
                        url: info.url,
                        existing: true,
                        file: info.file,
                        state: info.state,
                        pauseReason: info.pauseReason
                    )
                )
                continue
            }
            // A podcast's own template is parsed per request; it was checked when it was set.
            let naming = podcast.nameTemplate.map { EpisodeNaming(template: $0) } ?? settings.naming
            let place = naming.place(
                EpisodeNaming.Episode(
                    podcastTitle: podcast.folder ?? (podcast.title.isEmpty ? "podcast \(podcast.id)" : podcast.title),
                    title: episode.title,
                    published: episode.publishedAt.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                    enclosureURL: url,
                    enclosureType: episode.enclosureType,
                    season: episode.season,
                    episode: episode.episodeNumber,
                    guid: episode.guid,
                    id: episode.id
                )
            )
            let sameHost = Self.sameHost(text, podcast.feedURL)
            requests.append(
                DownloadRequest(
                    url: text,
                    directory: ([downloadDirectory] + place.folders).joined(separator: "/"),
                    name: place.fileName,
                    user: sameHost ? podcast.authUser : nil,
                    password: sameHost ? podcast.authPassword : nil,
                    priority: priority ?? 0,
                    episode: episode.id,
                    now: now
                )
            )
            entries.append(nil)
        }
        episodesWritten()
        defer { episodesWritten() }
        var queued = requests.isEmpty ? [] : try await queue.enqueue(requests).downloads[...]
        var result = entries.compactMap { $0 ?? queued.popFirst() }
        if now {
            let existing = result.filter(\.existing).map(\.id)
            try await queue.expedite(existing)
            let states = await queue.infos(existing)
            for index in result.indices where result[index].existing {
                guard let info = states[result[index].id] else { continue }
                result[index].state = info.state
                result[index].pauseReason = info.pauseReason
            }
        }
        return EnqueueResult(downloads: result)
    }

    // MARK: - Artwork

    /// Brings the podcast's artwork into the cache, then trims the cache to its size. Failures are logged only:
    /// artwork is decoration.
    private func refreshArtwork(_ id: Int64) async {
        guard let podcast = podcasts[id], let source = podcast.artworkURL, source.hasPrefix("http") else { return }
        let cached = podcast.artworkPath.flatMap { path in
            FileManager.default.fileExists(atPath: path)
                ? ArtworkCache.Entry(path: path, etag: podcast.artworkETag, lastModified: podcast.artworkLastModified)
                : nil
        }
        let cache = artworkCache
        switch await cache.refresh(id, from: source, cached: cached) {
        case .unchanged:
            return
        case .failed(let reason):
            logger.info("artwork of \(podcast.title) not fetched: \(reason)")
        case .stored(let entry):
            // Unsubscribed meanwhile: the image has no owner.
            guard var current = podcasts[id] else {
                unlink(entry.path)
                return
            }
            current.artworkPath = entry.path
            current.artworkETag = entry.etag
            current.artworkLastModified = entry.lastModified
            try? await save(current)
            for path in cache.trim() {
                for (id, podcast) in podcasts where podcast.artworkPath == path { podcasts[id]?.artworkPath = nil }
            }
        }
    }

    private var artworkCache: ArtworkCache {
        ArtworkCache(
            directory: artworkDirectory,
            limit: settings.artworkCacheBytes,
            deadline: settings.fetchDeadline,
            transfer: settings.transfer,
            fetch: limitedFetch
        )
    }

    // MARK: - Helpers

    func resolve(_ selector: String) throws -> PodcastRecord {
        let trimmed = selector.trimmingWhitespace()
        if let id = Int64(trimmed), let podcast = podcasts[id] { return podcast }
        let lowered = trimmed.lowercased()
        let all = podcasts.values.sorted { $0.id < $1.id }
        if !lowered.isEmpty {
            let exact = all.filter { $0.title.lowercased() == lowered }
            if exact.count == 1 { return exact[0] }
            let matches = all.filter { $0.title.lowercased().hasPrefix(lowered) }
            if matches.count == 1 { return matches[0] }
            if matches.count > 1 {
                let names = matches.prefix(5).map { "\($0.id) '\($0.title)'" }.joined(separator: ", ")
                throw PodcastError(
                    code: .ambiguousPodcast(selector),
                    message:
                        "'\(selector)' matches \(matches.count) podcasts (\(names)); give more of the title or the id"
                )
            }
        }
        throw PodcastError(code: .unknownPodcast(selector), message: "no podcast matches '\(selector)'")
    }

    private func save(_ podcast: PodcastRecord) async throws {
        podcasts[podcast.id] = podcast
        do {
            try await store.savePodcast(podcast)
        } catch {
            throw PodcastError.store("the podcast could not be saved: \(error)")
        }
    }

    func episodeRecords(of id: Int64) async throws -> [EpisodeRecord] {
        do {
            return try await store.episodes(of: id)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
    }

    private func counts() async throws -> [Int64: EpisodeCounts] {
        if let episodeCounts { return episodeCounts }
        let writes = episodeWrites
        do {
            let counts = try await store.episodeCounts()
            // Kept only when no write began or ended meanwhile; otherwise the next caller counts again.
            if writes == episodeWrites { episodeCounts = counts }
            return counts
        } catch {
            throw PodcastError.store("cannot count the episodes: \(error)")
        }
    }

    /// Forgets the episode counts; called around every write to the episodes.
    func episodesWritten() {
        episodeWrites += 1
        episodeCounts = nil
    }

    func info(_ podcast: PodcastRecord) async throws -> PodcastInfo {
        info(podcast, counts: try await counts()[podcast.id])
    }

    private func info(_ podcast: PodcastRecord, counts: EpisodeCounts?) -> PodcastInfo {
        PodcastInfo(
            id: podcast.id,
            title: podcast.title,
            author: podcast.author,
            feedURL: podcast.feedURL,
            link: podcast.link,
            description: podcast.description,
            artworkURL: podcast.artworkURL,
            artworkPath: podcast.artworkPath,
            itunesID: podcast.itunesID,
            episodes: counts?.total ?? 0,
            newEpisodes: counts?.new ?? 0,
            autoDownload: AutoDownload(policy(for: podcast).fetch),
            keep: podcast.keep,
            refreshedAt: podcast.refreshedAt.map(Self.iso8601),
            succeededAt: podcast.succeededAt.map(Self.iso8601),
            nextRefreshAt: podcast.gone ? nil : podcast.nextRefreshAt.map(Self.iso8601),
            lastError: podcast.lastError,
            gone: podcast.gone,
            hasCredentials: podcast.authUser != nil,
            duplicateItems: podcast.duplicateItems,
            nameTemplate: podcast.nameTemplate,
            folder: podcast.folder,
            refreshInterval: podcast.refreshInterval.map { Int($0 / 1000) },
            rules: podcast.rules.map {
                EpisodeRules(stored: $0).values.reduce(into: [:]) { $0[$1.key.rawValue] = $1.value }
            }
        )
    }

    /// - Parameter skipped: Why the podcast's rules do not download it, for an episode without a download.
    private static func info(_ episode: EpisodeRecord, download: DownloadInfo?, skipped: String? = nil) -> EpisodeInfo {
        EpisodeInfo(
            id: episode.id,
            podcastID: episode.podcastID,
            title: episode.title,
            description: episode.description,
            guid: episode.guid,
            link: episode.link,
            published: episode.publishedAt.map(iso8601),
            durationSeconds: episode.durationSeconds,
            enclosureURL: episode.enclosureURL,
            enclosureType: episode.enclosureType,
            enclosureLength: episode.enclosureLength,
            season: episode.season,
            episode: episode.episodeNumber,
            chaptersURL: episode.chaptersURL,
            transcriptURL: episode.transcriptURL,
            isNew: episode.isNew,
            downloadID: download?.id,
            downloadState: download?.state,
            file: download?.file,
            episodeType: episode.episodeType,
            playedAt: episode.playedAt.map(iso8601),
            pinned: episode.pinned ? true : nil,
            skipped: skipped
        )
    }

    private static func placeholderInfo(_ id: Int64) -> PodcastInfo {
        PodcastInfo(
            id: id,
            title: "",
            author: nil,
            feedURL: "",
            link: nil,
            description: "",
            artworkURL: nil,
            artworkPath: nil,
            itunesID: nil,
            episodes: 0,
            newEpisodes: 0,
            autoDownload: .off,
            keep: nil,
            refreshedAt: nil,
            succeededAt: nil,
            nextRefreshAt: nil,
            lastError: nil,
            gone: false,
            hasCredentials: false
        )
    }

    private func publish(_ event: PodcastEvent, _ podcast: PodcastInfo, newEpisodes: Int? = nil) {
        events.publish(
            .podcasts,
            method: event.rawValue,
            params: PodcastEventParams(podcast: podcast, newEpisodes: newEpisodes)
        )
    }

    /// The podcast's own interval, else the configured one, jittered by ±10 %.
    private func jitteredInterval(_ podcast: PodcastRecord) -> Int64 {
        let base =
            podcast.refreshInterval.map(Double.init) ?? Double(settings.refreshInterval.components.seconds) * 1000
        return Int64(base * Double.random(in: 0.9...1.1))
    }

    /// Validates a feed URL and moves credentials written into it (`https://user:pass@host/…`) out of it.
    package static func feedURL(_ text: String) throws -> (url: String, user: String?, password: String?) {
        do {
            let url = try HTTPURL(text)
            return (url.string, url.user, url.password)
        } catch .unparsable {
            throw PodcastError.invalid("'\(HTTPURL.shown(text))' is not a valid URL", parameter: "url")
        } catch {
            throw PodcastError.invalid(
                "'\(HTTPURL.shown(text))' is not an http or https feed URL",
                parameter: "url"
            )
        }
    }

    private static func noEnclosure(_ episode: EpisodeRecord) -> PodcastError {
        let what =
            episode.enclosureURL.map { "its enclosure '\($0)' is not an http or https URL" } ?? "it has no enclosure"
        return PodcastError(
            code: .noEnclosure(episode.id),
            message: "episode \(episode.id) ('\(episode.title)') has nothing to download: \(what)"
        )
    }

    /// A policy's problems as refusals of the command that set it.
    static func checkPolicy(_ policy: EpisodePolicy) throws {
        do {
            try policy.validate()
        } catch .rules(let problem) {
            throw PodcastError.invalid(problem.message, parameter: "rules")
        } catch .negativeKeep {
            throw PodcastError.invalid("'keep' must be 0 (all) or more", parameter: "keep")
        } catch .keepBelowLatest(let keep, let count) {
            throw PodcastError.invalid(
                "'keep' (\(keep)) must be at least the \(count) of 'latest:\(count)', or the newest would be "
                    + "deleted and downloaded again",
                parameter: "keep"
            )
        }
    }

    private static func feedError(_ fetched: FeedFetcher.Fetched, url: String) -> PodcastError {
        let shown = redactedURL(url)
        switch fetched {
        case .failed(let problem, let text):
            let message = text.hasSuffix(".") ? String(text.dropLast()) : text
            return PodcastError(
                code: .feed(problem, url: shown),
                message: problem == .invalid
                    ? "The feed at \(shown) cannot be read: \(message)."
                    : "The feed at \(shown) cannot be fetched: \(message)."
            )
        case .gone:
            return PodcastError(
                code: .feed(.unreachable, url: shown),
                message: "The feed at \(shown) is gone (HTTP 410)."
            )
        case .notModified, .updated:
            return PodcastError(
                code: .feed(.unreachable, url: shown),
                message: "The feed at \(shown) answered 304 Not Modified to an unconditional request."
            )
        }
    }

    /// Whether an enclosure can be downloaded: an http or https URL with a host. A feed may name anything
    /// (`file:///etc/passwd`, `javascript:`); such an episode is skipped by the auto-download policies, so it cannot
    /// hold up the others.
    private static func isDownloadable(_ enclosure: String?) -> Bool { HTTPURL.isValid(enclosure) }

    private static func sameHost(_ left: String, _ right: String) -> Bool {
        URL(string: left)?.host?.lowercased() == URL(string: right)?.host?.lowercased()
    }

    static func now() -> Int64 { Int64(Date.now.timeIntervalSince1970 * 1000) }

    private static func iso8601(_ milliseconds: Int64) -> String { UTCTimestamp.string(milliseconds: milliseconds) }
}

extension EpisodePolicy.Fetch {
    /// The protocol's `auto_download` value as the policy's.
    init(_ wire: AutoDownload) {
        switch wire {
        case .off: self = .off
        case .allNew: self = .allNew
        case .latest(let count): self = .latest(count)
        }
    }
}

extension AutoDownload {
    init(_ fetch: EpisodePolicy.Fetch) {
        switch fetch {
        case .off: self = .off
        case .allNew: self = .allNew
        case .latest(let count): self = .latest(count)
        }
    }
}
