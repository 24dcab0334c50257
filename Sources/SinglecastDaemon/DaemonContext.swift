import FoundationEssentials
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's shared state: what the router reads and what reloads change.
package final class DaemonContext: Sendable {
    /// Settings that a reload may change while the daemon runs.
    package struct Runtime: Sendable {
        package var configuration: DaemonConfiguration
        package var configLoaded: Bool
        package var lastReload: StatusResult.Reload?
    }

    package let logger: Logger
    package let store: Store
    package let queue: DownloadQueue
    package let podcasts: Subscriptions
    package let directory: PodcastDirectory
    package let events: EventBus
    package let windows: DownloadWindowService
    package let paths: DaemonPaths
    /// `nil` in tests that build a context without one.
    package let sync: SyncService?
    package let socketPath: String
    package let socketActivated: Bool
    package let previousRunClean: Bool?
    /// The HTTP listener's Basic password (`http_password`).
    package let webPassword: WebPassword
    /// What the HTTP listener serves now, for `status` and the status line.
    package let web = WebListenerStatus()
    private let startedAt = WallClock.milliseconds()
    private let startInstant = ContinuousClock.now
    private let runtime: Mutex<Runtime>
    private let clients = Atomic<Int>(0)
    private let requestsServed = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    package init(
        logger: Logger,
        store: Store,
        queue: DownloadQueue,
        podcasts: Subscriptions,
        directory: PodcastDirectory,
        events: EventBus,
        paths: DaemonPaths,
        socket: ControlSocket,
        windows: DownloadWindowService,
        runtime: Runtime,
        previousRunClean: Bool?,
        sync: SyncService? = nil
    ) {
        self.sync = sync
        self.logger = logger
        self.store = store
        self.queue = queue
        self.podcasts = podcasts
        self.directory = directory
        self.events = events
        self.windows = windows
        self.paths = paths
        self.socketPath = socket.path
        self.socketActivated = socket.activated
        self.runtime = Mutex(runtime)
        self.previousRunClean = previousRunClean
        self.webPassword = WebPassword(stateDirectory: paths.stateDirectory)
    }

    package var configuration: DaemonConfiguration { runtime.withLock { $0.configuration } }

    package func updateRuntime(_ body: (inout Runtime) -> Void) {
        runtime.withLock { body(&$0) }
    }

    package func countRequest() { requestsServed.add(1, ordering: .relaxed) }
    package func countRefused() { refused.add(1, ordering: .relaxed) }

    /// Reserves a client slot; `false` when `limit` clients are already connected.
    package func admitClient(limit: Int) -> Bool {
        let now = clients.add(1, ordering: .relaxed).newValue
        if now > limit {
            clients.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    package func releaseClient() { clients.subtract(1, ordering: .relaxed) }

    package var clientCount: Int { clients.load(ordering: .relaxed) }

    /// The result of the `status` method.
    package func status() async throws -> StatusResult {
        let statistics = try await store.statistics()
        let runtime = runtime.withLock { $0 }
        let uptime = ContinuousClock.now - startInstant
        return StatusResult(
            version: SinglecastVersion.current,
            protocolVersion: ProtocolVersion.current,
            pid: getpid(),
            startedAt: UTCTimestamp.string(milliseconds: startedAt),
            uptimeSeconds: Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18,
            logLevel: logger.level.name,
            socketActivated: socketActivated,
            paths: StatusResult.Paths(
                config: paths.configFile,
                configLoaded: runtime.configLoaded,
                stateDirectory: paths.stateDirectory,
                database: paths.database,
                downloadDirectory: paths.downloadDirectory,
                socket: socketPath
            ),
            connections: StatusResult.Connections(
                clients: clientCount,
                watchers: events.watcherCount,
                requestsServed: requestsServed.load(ordering: .relaxed),
                refused: refused.load(ordering: .relaxed)
            ),
            store: StatusResult.Store(
                schemaVersion: statistics.schemaVersion,
                sizeBytes: statistics.sizeBytes,
                sqliteVersion: Store.sqliteVersion,
                daemonStarts: statistics.daemonStarts,
                uncleanShutdowns: statistics.uncleanShutdowns,
                previousRunClean: previousRunClean
            ),
            lastReload: runtime.lastReload,
            downloads: DownloadCounts(await queue.counts()),
            podcasts: StatusResult.Podcasts(await podcasts.overview()),
            http: web.status()
        )
    }

    /// The one-line summary systemd shows as the unit's status, e.g. `2 downloading (5.1 MB/s), 7 queued`.
    package func summary() async -> String {
        let counts = await queue.counts()
        var parts: [String] = []
        if counts.active > 0 { parts.append("\(counts.active) downloading (\(Self.rate(counts.rate)))") }
        if counts.queued > 0 { parts.append("\(counts.queued) queued") }
        if counts.paused > 0 { parts.append("\(counts.paused) paused") }
        if counts.failed > 0 { parts.append("\(counts.failed) failed") }
        // Why the paused ones wait, when the gate holds them.
        switch counts.gate.closedBecause {
        case .outsideWindow? where counts.paused > 0: parts.append("outside the download windows")
        case .metered? where counts.paused > 0: parts.append("the network is metered")
        default: break
        }
        let webLine = web.summary.map { "; web on \($0)" } ?? ""
        if !parts.isEmpty { return parts.joined(separator: ", ") + webLine }
        let socket = socketActivated ? "\(socketPath) (socket-activated)" : socketPath
        return "Ready; idle; listening on \(socket)" + webLine
    }

    /// `5.1 MB/s`, in decimal units like the client's tables.
    private static func rate(_ bytesPerSecond: Double) -> String {
        let units = ["B/s", "kB/s", "MB/s", "GB/s"]
        var value = bytesPerSecond
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        guard unit > 0 else { return "\(Int(value)) B/s" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}

extension StatusResult.Podcasts {
    init(_ overview: PodcastOverview) {
        self.init(
            subscribed: overview.subscribed,
            failing: overview.failing,
            gone: overview.gone,
            nextRefreshAt: overview.nextRefreshAt.map { UTCTimestamp.string(milliseconds: $0) }
        )
    }
}
