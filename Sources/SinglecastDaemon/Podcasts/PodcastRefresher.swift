import CPosix
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

/// Refreshes podcasts: wakes when the next one falls due (``RefreshSchedule``), fetches feeds and artwork within the
/// fetch and feed-memory limits, and joins the callers asking for one refresh into one (``RefreshJoin``).
///
/// It owns when and how feeds are fetched, not the podcasts: it reads them from the catalogue (``Subscriptions``) and
/// hands what it fetched back to it (``Subscriptions/applyRefresh(_:to:schedule:jitter:)``), which stores the feed,
/// runs the auto-download policy and publishes the event. A refresh runs in its caller's task (this service's task
/// group, or the connection of a client that asked): it is cancelled with its caller.
package actor PodcastRefresher: Service {
    /// What a refresh came to, for its caller and the callers that joined it.
    enum Ended: Sendable {
        /// The podcast is gone or being unsubscribed: no refresh ran.
        case skipped
        case answered(RefreshReport)
        /// Stopped before it stored anything.
        case stopped
    }

    let engine: any SmallBodyFetching
    let store: Store
    let logger: Logger
    let artworkDirectory: String
    /// The wall clock in Unix milliseconds, and a number from 0 to 1 for the schedule's jitter; injected for tests.
    let now: @Sendable () -> Int64
    let jitter: @Sendable () -> Double
    private(set) var settings: PodcastSettings
    /// The podcasts; weak, since the catalogue holds this service.
    private(set) weak var catalogue: Subscriptions?
    /// Refreshes running: each one's stop signal, and the callers waiting to share its answer.
    private var join = RefreshJoin<RefreshStop, CheckedContinuation<Ended, Never>>()
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// When the sleeping child of ``run()`` wakes the loop, if one sleeps.
    private var timer = WakeSchedule()
    /// Big feeds stored since the heap was last trimmed (``trimHeapAfterBigFeeds()``).
    private var bigFeedsStored = 0
    /// The bytes of feed documents stored since the heap was last trimmed (``trimHeapAfterBatch()``).
    private var documentBytesSinceTrim = 0
    /// Bounds the fetches of feeds and artwork; replaced when a reload changes its limits (fetches already
    /// waiting in the old one finish there).
    private var limiter: FetchLimiter
    /// What feed documents and their parses may hold at once, shared by every refresh and subscription.
    let feedMemory = FeedMemoryLimiter(limit: PodcastSettings().feedMemoryBudget)
    /// New subscriptions whose artwork the service loop fetches, as children of its task group.
    private var artworkWanted: Set<Int64> = []
    /// At least the bytes the artwork cache holds, once it was listed (``refreshArtwork(_:)``).
    var artworkBytes: Int64?

    init(
        engine: any SmallBodyFetching,
        store: Store,
        logger: Logger,
        settings: PodcastSettings,
        artworkDirectory: String,
        now: @escaping @Sendable () -> Int64,
        jitter: @escaping @Sendable () -> Double
    ) {
        self.engine = engine
        self.store = store
        self.logger = logger
        self.settings = settings
        self.artworkDirectory = artworkDirectory
        self.now = now
        self.jitter = jitter
        limiter = FetchLimiter(limit: settings.fetchConcurrency, perHostLimit: settings.fetchesPerHost)
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Serves `catalogue`'s podcasts; called once, before ``run()``.
    func attach(_ catalogue: Subscriptions) { self.catalogue = catalogue }

    func update(_ newSettings: PodcastSettings) {
        if (newSettings.fetchConcurrency, newSettings.fetchesPerHost)
            != (settings.fetchConcurrency, settings.fetchesPerHost)
        {
            limiter = FetchLimiter(limit: newSettings.fetchConcurrency, perHostLimit: newSettings.fetchesPerHost)
        }
        settings = newSettings
        wakeup.yield()
    }

    /// When podcasts refresh, with the current settings.
    var schedule: RefreshSchedule { RefreshSchedule(interval: settings.refreshInterval) }

    // MARK: - Service: periodic refresh

    /// Refreshes every podcast whose time has come, a few at a time, then sleeps until the next one is due.
    package func run() async throws {
        wakeup.yield()
        // One sleeping child at a time: a wake-up before it ends (a new subscription, a changed interval) only
        // replaces it when the next refresh moved earlier, and shutdown cancels it.
        await withDiscardingTaskGroup { group in
            for await _ in wakeups {
                for id in artworkWanted { group.addTask { await self.refreshArtwork(id) } }
                artworkWanted = []
                await refreshDue()
                if Task.isCancelled { break }
                let next = await catalogue?.nextRefreshDue()
                if let wakeAt = RefreshSchedule.wake(now: now(), due: next), timer.request(wakeAt) {
                    group.addTask { await self.sleepUntil(wakeAt) }
                }
            }
            group.cancelAll()
        }
        // Refreshes asked for by clients run in their connections' tasks (a client's refresh and the timer's may
        // join one); they end with the service, not after it.
        for stop in join.stopAll() { stop.stop() }
    }

    func refreshDue() async {
        guard let catalogue else { return }
        let due = await catalogue.duePodcasts(at: now())
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for id in due {
                if running == settings.fetchConcurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask { _ = await self.refresh(id) }
                running += 1
            }
        }
        await trimHeapAfterBatch()
    }

    private func sleepUntil(_ at: Int64) async {
        try? await Task.sleep(for: .milliseconds(max(0, at - now())))
        timer.woke(at)
        wakeup.yield()
    }

    /// Looks at the schedule again: a podcast was added or its interval changed.
    package nonisolated func wake() { wakeup.yield() }

    package nonisolated func shutdown() { wakeup.finish() }

    // MARK: - Refreshes

    /// Refreshes the podcasts `ids` at once, within the fetch limits; those gone meanwhile are left out.
    func refresh(_ ids: [Int64]) async -> [RefreshReport] {
        let reports = await withTaskGroup(of: RefreshReport?.self) { group in
            for id in ids { group.addTask { await self.refresh(id) } }
            var entries: [RefreshReport] = []
            for await entry in group { if let entry { entries.append(entry) } }
            return entries
        }
        await trimHeapAfterBatch()
        return reports
    }

    /// Refreshes one podcast, or joins the refresh of it already running; `nil` when it is gone or leaving.
    ///
    /// ``stopAndWait(_:)`` (unsubscribe) and the end of ``run()`` end it early: a refresh stopped while it fetched
    /// stores nothing and answers that it was stopped.
    ///
    /// - Important: Call it in a task of its own that ends with it (a task group's child): a stop cancels that task
    ///   (``RefreshStop``).
    func refresh(_ id: Int64) async -> RefreshReport? {
        let stop = RefreshStop()
        let ended: Ended
        switch join.start(id, stop: stop) {
        case .join:
            ended = await withCheckedContinuation { continuation in
                if !join.wait(for: id, continuation) { continuation.resume(returning: .skipped) }
            }
        case .run:
            let run = await stop.run { await perform(id) }
            ended = run.stopped ? .stopped : run.result
            for waiter in join.finish(id) { waiter.resume(returning: ended) }
            await trimHeapAfterBigFeeds()
        }
        switch ended {
        case .skipped: return nil
        case .answered(let entry): return entry
        case .stopped: return Subscriptions.failedRefresh(id, "stopped before it finished")
        }
    }

    private func perform(_ id: Int64) async -> Ended {
        // Registered in the join before this check: an unsubscribe that began before it is seen here, one that
        // begins after it finds the refresh running and stops it.
        guard let catalogue, let podcast = await catalogue.refreshable(id) else { return .skipped }
        let fetched = await feeds.fetch(podcast, conditional: true)
        // Stopped while fetching: what was fetched is not the catalogue's any more.
        if Task.isCancelled { return .stopped }
        // One call to the catalogue stores and answers a feed without new artwork to fetch (every unchanged one).
        switch await catalogue.storeRefresh(fetched, to: id, schedule: schedule, jitter: jitter()) {
        case nil:
            return .answered(Subscriptions.failedRefresh(id, "unsubscribed during the refresh"))
        case .answered(let report, let documentBytes)?:
            stored(documentBytes: documentBytes)
            return .answered(report)
        case .wantsArtwork(let applied)?:
            stored(documentBytes: applied.documentBytes)
            await refreshArtwork(id)
            return .answered(await catalogue.finishRefresh(applied))
        }
    }

    /// Stops the refresh of `id`, if one runs, and returns once it has ended: what it queued is then stored.
    func stopAndWait(_ id: Int64) async {
        join.stop(id)?.stop()
        guard join.isRunning(id) else { return }
        _ = await withCheckedContinuation { continuation in
            if !join.wait(for: id, continuation) { continuation.resume(returning: .skipped) }
        }
    }

    /// How many callers wait for the running refresh of `id`.
    func waiters(of id: Int64) -> Int { join.waiters(of: id) }

    // MARK: - Fetching

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

    /// A new subscription's first fetch, within the same limits as every refresh.
    func fetch(_ podcast: PodcastRecord) async -> FeedFetcher.Fetched {
        await feeds.fetch(podcast, conditional: false)
    }

    /// A subscription was stored: its artwork is fetched, and the schedule looked at again.
    func subscribed(_ id: Int64, documentBytes: Int) {
        stored(documentBytes: documentBytes)
        artworkWanted.insert(id)
        wakeup.yield()
    }

    /// A big feed's document and records are freed once its refresh or subscription is over, but glibc keeps the
    /// memory in its arenas, and SQLite its page cache: give both back then, so that one 100,000-item feed does not
    /// hold memory for good.
    func trimHeapAfterBigFeeds() async {
        guard bigFeedsStored > 0, join.isIdle else { return }
        await trimHeap()
    }

    /// The same once a batch (a refresh of many podcasts, an import) is over, when its feeds came to a big feed's
    /// size together: fetched faster than they are parsed and stored, a refresh of 1,000 feeds of which 100 changed
    /// peaked 37 MB higher (docs/ARCHITECTURE.md, Refreshing many feeds), and kept it.
    func trimHeapAfterBatch() async {
        guard documentBytesSinceTrim >= Self.bigFeedBytes, join.isIdle else { return }
        await trimHeap()
    }

    private func trimHeap() async {
        bigFeedsStored = 0
        documentBytesSinceTrim = 0
        await store.releaseMemory()
        _ = cposix_trim_heap()
    }

    /// A feed document of `documentBytes` was stored (0: none).
    private func stored(documentBytes: Int) {
        documentBytesSinceTrim += documentBytes
        if documentBytes >= Self.bigFeedBytes { bigFeedsStored += 1 }
    }

    /// A feed document this big makes the heap worth trimming once its refresh or subscription is over.
    static let bigFeedBytes = 1 << 20
}
