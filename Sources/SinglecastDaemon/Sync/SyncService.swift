import FoundationEssentials
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

/// Synchronises subscriptions and episode actions with a gPodder API server: the I/O shell around ``SyncRun`` (one
/// sync) and ``SyncSchedule`` (when the next one runs).
///
/// It owns no podcast state: remote subscription changes go through ``Subscriptions/subscribe(_:)`` and
/// ``Subscriptions/unsubscribe(_:)``, remote plays through ``Subscriptions/markPlayed(_:played:)``, and local changes
/// reach the outbox by the store's triggers, in the transaction of the change.
package actor SyncService {
    package typealias Fetch = @Sendable (FetchRequest) async throws(TransferError) -> FetchResult

    /// What `sync --status` shows.
    package struct Status: Sendable, Hashable {
        package var enabled: Bool
        package var server: String?
        package var flavor: SyncSettings.Flavor
        package var user: String?
        package var device: String
        package var running: Bool
        /// Unix milliseconds.
        package var lastSuccess: Int64?
        package var lastAttempt: Int64?
        package var lastError: String?
        package var pending: Int
        /// Unix milliseconds of the next automatic sync; `nil` while none is planned (off, or waiting for the user to
        /// mend the credentials).
        package var nextAttempt: Int64?
    }

    let settings: SyncSettings
    let store: Store
    let fetch: Fetch
    let podcasts: Subscriptions
    private let events: EventBus
    let logger: Logger
    let transfer: TransferOptions
    private let now: @Sendable () -> Int64
    var password: String?
    private var registered = false
    private var running: Task<Result<SyncReport, SyncError>, Never>?
    private var schedule: SyncSchedule
    private var stopping = false

    package init(
        settings: SyncSettings,
        store: Store,
        fetch: @escaping Fetch,
        podcasts: Subscriptions,
        events: EventBus,
        logger: Logger,
        transfer: TransferOptions,
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds
    ) {
        self.settings = settings
        self.store = store
        self.fetch = fetch
        self.podcasts = podcasts
        self.events = events
        self.logger = logger
        self.transfer = transfer
        self.now = now
        schedule = SyncSchedule(interval: settings.interval)
    }

    /// Turns the outbox on (or off and empty, without a server) and reads the password; before READY, so that no
    /// local change of this run goes unrecorded.
    package func prepare() async throws(SyncError) {
        do {
            try await store.setSyncRecording(settings.isEnabled)
        } catch {
            throw SyncError(.misconfigured, "cannot switch the sync outbox: \(error)")
        }
        guard settings.isEnabled else { return }
        if let problem = settings.problem { throw SyncError(.misconfigured, problem) }
        password = try settings.readPassword()
    }

    /// Reads the password file again (reload): a mended password ends the wait after a 401.
    package func reloadPassword() {
        guard settings.isEnabled else { return }
        do {
            let fresh = try settings.readPassword()
            if fresh != password { schedule.credentialsChanged() }
            password = fresh
        } catch {
            logger.warning("sync: \(error.message)")
        }
    }

    package func shutdown() {
        stopping = true
        running?.cancel()
    }

    /// Syncs every `sync_interval` (jittered) and after failures with backoff, until cancelled.
    package func run() async {
        guard settings.isEnabled, password != nil else { return }
        // The first automatic sync an interval (jittered) after the start, like the later ones: daemons restarted
        // together do not ask together, and `singlecastctl sync` is there for now.
        var delay = schedule.firstDelay(random: Double.random(in: 0...1))
        while !Task.isCancelled && !stopping {
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            // After a 401 or a configuration problem, asking again changes nothing: a reload with another password
            // or `singlecastctl sync` does. The loop only looks again now and then.
            guard !schedule.blocked else {
                delay = .seconds(60)
                continue
            }
            _ = await syncNow()
            delay = schedule.nextDelay ?? .seconds(60)
        }
    }

    /// Syncs now and returns what it did; joins a sync already running.
    package func syncNow() async -> Result<SyncReport, SyncError> {
        guard settings.isEnabled else {
            return .failure(SyncError(.disabled, "sync is off: no sync_server is set in the configuration"))
        }
        if let running { return await running.value }
        let task = Task { await self.perform() }
        running = task
        let result = await task.value
        running = nil
        return result
    }

    package func status() async -> Status {
        let cursor = (try? await store.syncCursor()) ?? SyncCursor()
        let pending = (try? await store.syncOutboxCount()) ?? 0
        return Status(
            enabled: settings.isEnabled,
            server: settings.server,
            flavor: settings.flavor,
            user: settings.user,
            device: settings.deviceID,
            running: running != nil,
            lastSuccess: cursor.lastSuccess,
            lastAttempt: cursor.lastAttempt,
            lastError: cursor.lastError,
            pending: pending,
            nextAttempt: settings.isEnabled ? schedule.nextAttempt : nil
        )
    }

    // MARK: - One sync

    private func perform() async -> Result<SyncReport, SyncError> {
        let started = now()
        var cursor: SyncCursor
        let result: Result<SyncReport, SyncError>
        do {
            let (report, final) = try await runOnce(started: started)
            cursor = final
            cursor.lastSuccess = started
            cursor.lastError = nil
            result = .success(report)
        } catch {
            cursor = (try? await store.syncCursor()) ?? SyncCursor()
            cursor.lastError = error.message
            result = .failure(error)
        }
        cursor.lastAttempt = started
        try? await store.setSyncCursor(cursor)
        let at = now()
        switch result {
        case .success(let report):
            schedule.succeeded(at: at, random: Double.random(in: 0...1))
            logger.info(
                "sync with \(settings.server ?? "") done: \(report.subscribed) subscribed, \(report.unsubscribed) unsubscribed, \(report.markedPlayed) marked played, \(report.uploadedSubscriptionChanges) subscription change(s) and \(report.uploadedActions) action(s) uploaded"
            )
            events.syncCompleted(report, at: at)
        case .failure(let error):
            schedule.failed(error, at: at, random: Double.random(in: 0...1))
            // A 401 is said once per change of state, not at every retry.
            if schedule.consecutiveFailures <= 1 || error.isTransient {
                logger.warning("sync: \(error.message)")
            }
            events.syncFailed(error, at: at)
        }
        return result
    }

    private func runOnce(started: Int64) async throws(SyncError) -> (SyncReport, SyncCursor) {
        let facts: SyncRun.Facts
        do {
            facts = SyncRun.Facts(
                device: settings.deviceID,
                flavor: settings.flavor,
                cursor: try await store.syncCursor(),
                outbox: try await store.syncOutbox(limit: 100_000),
                localFeeds: Set(try await store.podcasts().map(\.feedURL)),
                registered: registered
            )
        } catch {
            throw SyncError(.misconfigured, "cannot read the sync state from the database: \(error)")
        }
        var machine = SyncRun(facts)
        var pending = machine.handle(.started)
        while !pending.isEmpty {
            let action = pending.removeFirst()
            if Task.isCancelled { throw SyncError(.unreachable, "the sync was stopped") }
            switch action {
            case .send(let request):
                let event: SyncRun.Event
                do {
                    event = try await send(request)
                } catch {
                    event = .failed(error)
                }
                if case .registered = event { registered = true }
                pending += machine.handle(event)
            case .applySubscriptions(let subscribe, let unsubscribe):
                let (added, removed, failed) = await apply(subscribe: subscribe, unsubscribe: unsubscribe)
                machine.recordApplied(played: 0, unplayed: 0, subscribed: added, unsubscribed: removed)
                pending += machine.handle(.subscriptionsApplied(failed: failed))
            case .applyActions(let played, let unplayed):
                let (marked, unmarked, unmatched) = await apply(played: played, unplayed: unplayed)
                machine.recordApplied(played: marked, unplayed: unmarked, subscribed: 0, unsubscribed: 0)
                pending += machine.handle(.actionsApplied(unmatched: unmatched))
            case .acknowledge(let ids, let cursor):
                do {
                    try await store.acknowledgeSyncOutbox(ids, cursor: cursor)
                } catch {
                    pending += machine.handle(.failed(SyncError(.misconfigured, "cannot record the sync: \(error)")))
                }
            case .finish(let report, let cursor):
                return (report, cursor)
            case .fail(let error, _):
                throw error
            }
        }
        preconditionFailure("sync: the run ended without finishing or failing")
    }
}
