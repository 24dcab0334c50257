import Foundation
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastTestServers

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's ``Router`` over its real store, download queue and subscriptions, in this process and offline.
///
/// The queue's run loop never starts, so nothing queued is downloaded; the podcast directory's fetch fails at once;
/// only `subscribe` and `import` reach the network, and tests give them loopback URLs only. The state lives in
/// `/dev/shm` when there is one, so the store's syncs cost no disk time.
final class InProcessRouter: Sendable {
    let root: ScratchDirectory
    let router: Router
    let context: DaemonContext
    private let engine: HTTPEngine
    private let socket: ControlSocket

    /// The download directory, `<root>/data/downloads`.
    var downloadDirectory: String { root.file("data/downloads") }

    private init(
        root: ScratchDirectory,
        router: Router,
        context: DaemonContext,
        engine: HTTPEngine,
        socket: ControlSocket
    ) {
        self.root = root
        self.router = router
        self.context = context
        self.engine = engine
        self.socket = socket
    }

    static func start(configuration: DaemonConfiguration = DaemonConfiguration()) async throws -> InProcessRouter {
        let root = try ScratchDirectory()
        var configuration = configuration
        configuration.downloadDirectory = root.file("data/downloads")
        configuration.stateDirectory = root.file("state")
        configuration.socketPath = root.file("run/control.sock")
        let paths = DaemonPaths.resolve(
            options: DaemonOptions(),
            configuration: configuration,
            environment: ["HOME": root.file("home"), "XDG_CACHE_HOME": root.file("cache")],
            uid: geteuid()
        )
        for directory in [paths.stateDirectory, paths.downloadDirectory] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let logger = Logger(level: .error, environment: [:])
        let store = try Store(path: paths.database)
        let engine = try HTTPEngine()
        engine.start()
        let events = EventBus(logger: logger)
        var queueSettings = QueueSettings()
        queueSettings.transfer.connectTimeout = .seconds(2)
        queueSettings.transfer.requireHTTPS = configuration.requireHTTPS
        let queue = DownloadQueue(
            store: store,
            engine: engine,
            events: events,
            logger: logger,
            settings: queueSettings,
            defaultDirectory: paths.downloadDirectory,
            distrustUncheckpointedBytes: false
        )
        try await queue.recover()
        let directory = PodcastDirectory(settings: DirectorySettings(configuration)) {
            (request: FetchRequest) async throws(TransferError) -> FetchResult in
            throw TransferError(code: .network, message: "offline test: \(request.url) is not fetched")
        }
        var podcastSettings = PodcastSettings()
        podcastSettings.naming = EpisodeNaming(template: configuration.nameTemplate)
        podcastSettings.maxFeedBytes = Int64(configuration.maxFeedSize)
        podcastSettings.transfer = queueSettings.transfer
        let podcasts = Subscriptions(
            store: store,
            engine: engine,
            queue: queue,
            events: events,
            logger: logger,
            settings: podcastSettings,
            downloadDirectory: paths.downloadDirectory,
            artworkDirectory: paths.artworkDirectory
        ) { id in
            throw RPCError.invalidParams("offline test: no directory lookup of \(id)", parameter: "itunes_id")
        }
        try await podcasts.load()
        let socket = try ControlSocket.bind(path: paths.socket, privateDirectory: true, logger: logger)
        let context = DaemonContext(
            logger: logger,
            store: store,
            queue: queue,
            podcasts: podcasts,
            directory: directory,
            events: events,
            paths: paths,
            socket: socket,
            windows: DownloadWindowService(queue: queue, windows: configuration.downloadWindows),
            runtime: .init(configuration: configuration, configLoaded: false, lastReload: nil),
            previousRunClean: nil
        )
        return InProcessRouter(
            root: root,
            router: Router(context: context),
            context: context,
            engine: engine,
            socket: socket
        )
    }

    /// Runs `body` with a fresh router and stops it afterwards, also when `body` throws.
    static func with<T>(
        configuration: DaemonConfiguration = DaemonConfiguration(),
        _ body: (InProcessRouter) async throws -> T
    ) async throws -> T {
        let daemon = try await start(configuration: configuration)
        do {
            let result = try await body(daemon)
            await daemon.stop()
            return result
        } catch {
            await daemon.stop()
            throw error
        }
    }

    /// The answer to one request line, or `nil` for a notification.
    func respond(
        _ line: some Collection<UInt8>,
        connection: RecordingConnection = RecordingConnection()
    ) async
        -> Data?
    {
        await router.respond(to: Array(line), connection: connection)
    }

    /// The decoded answer to `line`; fails when there is none.
    func answer(_ line: String) async throws -> RPCIncoming {
        guard let data = await respond(Array(line.utf8)) else {
            throw TestServerError("no answer to \(line)")
        }
        return try RPCIncoming.parse(line: data)
    }

    func stop() async {
        await engine.stop()
        socket.closeAndRemove()
        try? await context.store.close()
    }
}

/// A connection that only remembers the topics it was asked to watch.
final class RecordingConnection: ConnectionControl {
    func watch(_ selection: EventSelection) {}
}

/// A fresh directory in `/dev/shm` (else `/tmp`), removed with everything in it when the value is released.
final class ScratchDirectory: Sendable {
    let path: String

    init() throws {
        let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : "/tmp"
        var template = Array("\(base)/sc-router.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw TestServerError("mkdtemp in \(base) failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: created)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { "\(path)/\(name)" }
}
