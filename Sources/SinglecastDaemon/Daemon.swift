import CPosix
import FoundationEssentials
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// singlecastd: parses the command line, starts every part in order, serves until SIGTERM, stops in reverse.
package enum Daemon {
    /// Exit codes from sysexits(3), so systemd units can tell a usage or configuration error from a crash.
    package enum ExitCode {
        package static let success: Int32 = 0
        package static let failure: Int32 = 1
        package static let usage: Int32 = 64
        package static let configuration: Int32 = 78
    }

    /// Descriptors the table is made to hold before any other thread starts: RLIMIT_NOFILE's usual soft limit, above
    /// what the web listener (256 connections), the control socket's clients and the downloads hold together.
    static let descriptorsReserved: Int32 = 1024

    /// Process set-up that must run while the process has one thread. Growing the descriptor table later costs the
    /// call that grows it an RCU grace period: a first burst of 200 web clients waited 15–25 ms in `accept4` for the
    /// two growths it needed (64 to 128 to 256 descriptors), which no later burst pays.
    package static func prepareSingleThreadedProcess() {
        _ = cposix_reserve_descriptors(descriptorsReserved)
    }

    /// Runs the daemon and returns its exit code.
    package static func main(
        arguments: some Sequence<String>,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> Int32 {
        let options: DaemonOptions
        do {
            options = try DaemonOptions.parse(arguments)
        } catch {
            var message =
                "Error: \(error)\nUsage: \(DaemonOptions.usage)\n  See 'singlecastd --help' for more information.\n"
            message.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
            return ExitCode.usage
        }
        switch options.action {
        case .help:
            print(DaemonOptions.help, terminator: "")
            return ExitCode.success
        case .version:
            print(SinglecastVersion.current)
            return ExitCode.success
        case .run:
            let logger = Logger(level: options.logLevel ?? .info, environment: environment)
            do {
                try await run(options: options, environment: environment, logger: logger)
                return ExitCode.success
            } catch let error as ConfigurationError {
                logger.error("configuration error: \(error)")
                return ExitCode.configuration
            } catch {
                logger.error("\(error)")
                return ExitCode.failure
            }
        }
    }

    private static func run(options: DaemonOptions, environment: [String: String], logger: Logger) async throws {
        // A client that hangs up must not kill the daemon with SIGPIPE while we write its answer.
        signal(SIGPIPE, SIG_IGN)
        // Before the first big block is freed: once a 24 MB feed document went back to the system, glibc would keep
        // up to 48 MB free in every thread's arena for good.
        cposix_keep_malloc_thresholds()
        let signals = await SignalStream.make([SIGTERM, SIGINT, SIGHUP])

        let home = DaemonPaths.home(environment: environment)
        let configPath = DaemonPaths.configFile(options: options, environment: environment)
        let (configuration, configLoaded) = try DaemonConfiguration.load(
            path: configPath,
            home: home,
            required: options.configPath != nil
        )
        logger.level = options.logLevel ?? configuration.logLevel
        let paths = DaemonPaths.resolve(
            options: options,
            configuration: configuration,
            environment: environment,
            uid: geteuid()
        )
        logger.info(
            "singlecastd \(SinglecastVersion.current) starting (pid \(getpid()); config \(configPath)\(configLoaded ? "" : ", not present: using embedded defaults"))"
        )

        try createDirectory(paths.stateDirectory, mode: 0o700, purpose: "state directory")
        // Episodes follow the umask (UMask= in the unit), since users may share them with media servers.
        try createDirectory(paths.downloadDirectory, mode: nil, purpose: "download directory")
        let lock = try InstanceLock.acquire(path: paths.lockFile)
        defer { lock.release() }

        // The database holds feed and download credentials: owner-only, whatever the umask (an existing file
        // loses its group and other bits, nothing else). SQLite gives -wal and -shm the database file's mode.
        let databaseFile = open(paths.database, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        if databaseFile >= 0 {
            var status = stat()
            if fstat(databaseFile, &status) == 0 && status.st_mode & 0o077 != 0 {
                _ = fchmod(databaseFile, status.st_mode & 0o700)
            }
            close(databaseFile)
        }
        let store: Store
        do {
            store = try Store(path: paths.database)
        } catch {
            throw DaemonStartError(message: error.message)
        }
        let now = WallClock.milliseconds() / 1000
        let boot = bootID()
        let run = try await store.recordStart(
            pid: getpid(),
            version: SinglecastVersion.current,
            bootID: boot,
            at: now
        )
        if let previous = run.previous, previous.stoppedAt == nil {
            logger.warning(
                "the previous run (pid \(previous.pid), started \(UTCTimestamp.string(milliseconds: previous.startedAt.saturatingMultiply(1000)))) did not shut down cleanly"
            )
        }

        let socket: ControlSocket
        var activatedHTTP: [Int32] = []
        if let activated = try ControlSocket.fromSystemd(http: &activatedHTTP) {
            socket = activated
            logger.info("using the socket passed by systemd: \(socket.path)")
        } else {
            socket = try ControlSocket.bind(
                path: paths.socket,
                privateDirectory: paths.socketDirectoryIsPrivate,
                logger: logger
            )
        }
        let reactor = try Reactor()
        reactor.start()
        let engine = try HTTPEngine()
        engine.start()

        let notifier = SystemdNotifier(logger: logger)
        let events = EventBus(logger: logger)
        let queue = DownloadQueue(
            store: store,
            engine: engine,
            events: events,
            logger: logger,
            settings: queueSettings(configuration, environment: environment),
            defaultDirectory: paths.downloadDirectory,
            distrustUncheckpointedBytes: run.previous.map { $0.stoppedAt == nil && $0.bootID != boot } ?? false,
            hookStopTimeout: configuration.hookStopTimeout
        )
        try await queue.recover()
        // Before READY: no download starts outside a window, not even for a moment.
        let windows = DownloadWindowService(queue: queue, windows: configuration.downloadWindows)
        if configuration.metered == .pause { await queue.awaitMeteredAnswer() }
        await windows.apply()
        let directory = PodcastDirectory(settings: DirectorySettings(configuration), fetch: engine.fetch)
        let podcasts = Subscriptions(
            store: store,
            engine: engine,
            queue: queue,
            events: events,
            logger: logger,
            settings: podcastSettings(configuration),
            downloadDirectory: paths.downloadDirectory,
            artworkDirectory: paths.artworkDirectory,
            lookup: { id in
                let found = try await directory.lookup(LookupParams(id: id)).podcast
                guard let feed = found.feedURL else {
                    throw PodcastError.invalid(
                        "iTunes lists '\(found.title)' (\(id)) without a feed URL, so it cannot be subscribed to",
                        parameter: "itunes_id"
                    )
                }
                return feed
            }
        )
        try await podcasts.load()
        // Before READY: the outbox records from the first local change of this run on.
        let sync = SyncService(
            settings: configuration.sync,
            store: store,
            fetch: engine.fetch,
            podcasts: podcasts,
            events: events,
            logger: logger,
            transfer: DirectorySettings(configuration).transfer
        )
        do {
            try await sync.prepare()
        } catch {
            throw DaemonStartError(message: "sync: \(error.message)")
        }
        let context = DaemonContext(
            logger: logger,
            store: store,
            queue: queue,
            podcasts: podcasts,
            directory: directory,
            events: events,
            paths: paths,
            socket: socket,
            windows: windows,
            runtime: .init(configuration: configuration, configLoaded: configLoaded, lastReload: nil),
            previousRunClean: run.previous.map { $0.stoppedAt != nil },
            sync: sync
        )
        let server = ControlServer(listener: socket, reactor: reactor, context: context)
        // The HTTP listener's routes, asked in order; a path none claims is 404. Feeds, OPML, artwork, media and the
        // page are appended to this list.
        let csrfToken = HTTPListener.makeCSRFToken()
        let webRoutes: [any WebRoute] = [
            WebSessionRoute(csrfToken: csrfToken), WebRPCRoute(router: Router(context: context)), WebPageRoute(),
            PersonalFeedRoute(subscriptions: podcasts), ServedFileRoute.media(subscriptions: podcasts),
            ServedFileRoute.artwork(subscriptions: podcasts),
            FeedQRCodeRoute(
                podcastExists: { await podcasts.podcast($0) != nil },
                credentials: {
                    guard context.configuration.web.basicAuth, let password = try? context.webPassword.current() else {
                        return nil
                    }
                    return (user: WebGate.user, password: password)
                }
            ),
        ]
        let web = HTTPListener(
            context: context,
            routes: webRoutes,
            csrfToken: csrfToken,
            activatedSockets: activatedHTTP
        )
        try startWeb(web, configuration.web, context: context)

        notifier.ready(status: await context.summary())
        logger.notice("ready; listening on \(socket.path)\(socket.activated ? " (socket-activated)" : "")")

        /// Which child of the service group ended.
        enum Part {
            case server, watchdog, signals, queue, hooks, refresher, retention, statusLine, notifications, windows
            case metered, sidecars, web, sync, wallClock
        }
        /// How the services are told to stop, in this order: the server stops taking requests first, so that none
        /// arrives for a service already stopping. Each returns at once; the group then waits for them all.
        let stopOrder: [@Sendable () -> Void] = [
            server.beginShutdown, web.beginShutdown, queue.shutdown, queue.hooks.shutdown, podcasts.refresher.shutdown,
            windows.shutdown, podcasts.sidecars.shutdown,
        ]
        let stopServices = { @Sendable in for stop in stopOrder { stop() } }
        try await withThrowingTaskGroup(of: Part.self) { group in
            group.addTask {
                try await server.run()
                return .server
            }
            group.addTask {
                try await web.run()
                return .web
            }
            group.addTask {
                try await queue.run()
                return .queue
            }
            group.addTask {
                await queue.hooks.run()
                return .hooks
            }
            group.addTask {
                try await podcasts.refresher.run()
                return .refresher
            }
            group.addTask {
                // Ends when cancelled, after the services above have stopped.
                await podcasts.retention.run(policies: { await podcasts.retentionPolicies() })
                return .retention
            }
            group.addTask {
                await podcasts.sidecars.run()
                return .sidecars
            }
            group.addTask {
                await windows.run()
                return .windows
            }
            group.addTask {
                // Ends when cancelled. Without the timer, a jump of the wall clock is noticed at the next wake-up.
                guard let clock = WallClockWatch(reactor: reactor) else {
                    logger.warning(
                        "cannot watch the wall clock for jumps (timerfd): \(String(cString: strerror(errno)))"
                    )
                    return .wallClock
                }
                await clock.run {
                    logger.info("the wall clock jumped; looking again at what falls due")
                    podcasts.refresher.wake()
                    podcasts.sidecars.wanted()
                    await podcasts.retention.wanted()
                    windows.wallClockMoved()
                    queue.wallClockMoved()
                }
                return .wallClock
            }
            group.addTask {
                // Returns at once when sync is off; otherwise ends when cancelled.
                await sync.run()
                return .sync
            }
            if configuration.metered == .pause {
                group.addTask {
                    await MeteredNetworkMonitor(reactor: reactor, environment: environment, logger: logger) {
                        await queue.setMetered($0)
                    }.run()
                    return .metered
                }
            }
            group.addTask {
                // STATUS= follows the queue's events, at most every 2 s; an idle daemon does not wake for it.
                // The notifier sends only changes.
                for await _ in queue.changes {
                    notifier.status(await context.summary())
                    guard (try? await Task.sleep(for: .seconds(2))) != nil else { break }
                }
                return .statusLine
            }
            group.addTask {
                try await DesktopNotifications(
                    kinds: configuration.notify,
                    events: context.events,
                    environment: environment,
                    logger: logger,
                    downloadDirectory: paths.downloadDirectory
                ).run()
                return .notifications
            }
            if let interval = SystemdNotifier.watchdogPingInterval() {
                logger.debug("watchdog enabled; pinging every \(interval)")
                group.addTask {
                    try await WatchdogService(
                        interval: interval,
                        notifier: notifier,
                        healthCheck: {
                            try await store.healthCheck()
                            try web.healthCheck()
                        },
                        logger: logger
                    ).run()
                    return .watchdog
                }
            }
            group.addTask {
                for await signalNumber in signals {
                    if signalNumber == SIGHUP {
                        await reload(
                            options: options,
                            environment: environment,
                            context: context,
                            web: web,
                            notifier: notifier
                        )
                        continue
                    }
                    logger.notice("received \(signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
                    notifier.stopping(status: "Stopping: finishing replies")
                    context.events.publish(
                        .daemon,
                        method: DaemonEvent.stopping.rawValue,
                        params: DaemonEventParams(at: WallClock.timestamp(), message: "singlecastd is stopping")
                    )
                    stopServices()
                    return .signals
                }
                return .signals
            }
            // The server returns once a stop has drained its connections (or when it fails); either way the
            // other parts stop with it. Cancelling earlier would cut off replies still being written.
            while let part = try await group.next(), part != .server {}
            stopServices()
            group.cancelAll()
            try await group.waitForAll()
        }

        await engine.stop()
        await reactor.stop()
        socket.closeAndRemove()
        do {
            try await store.recordCleanStop(runID: run.current.id, at: WallClock.milliseconds() / 1000)
            try await store.close()
        } catch {
            logger.error("closing the store failed: \(error)")
            throw error
        }
        logger.notice("stopped")
    }

    /// SIGHUP: re-reads the configuration and applies what can change live; a broken file changes nothing.
    private static func reload(
        options: DaemonOptions,
        environment: [String: String],
        context: DaemonContext,
        web: HTTPListener,
        notifier: SystemdNotifier
    ) async {
        notifier.reloading()
        let logger = context.logger
        let at = WallClock.timestamp()
        do {
            let (configuration, loaded) = try DaemonConfiguration.load(
                path: context.paths.configFile,
                home: DaemonPaths.home(environment: environment),
                required: options.configPath != nil
            )
            let newPaths = DaemonPaths.resolve(
                options: options,
                configuration: configuration,
                environment: environment,
                uid: geteuid()
            )
            var needRestart: [String] = []
            if newPaths.stateDirectory != context.paths.stateDirectory { needRestart.append("state_dir") }
            if newPaths.downloadDirectory != context.paths.downloadDirectory { needRestart.append("download_dir") }
            if newPaths.socket != context.paths.socket && !context.socketActivated { needRestart.append("socket_path") }
            if configuration.notify != context.configuration.notify { needRestart.append("notify") }
            if configuration.metered != context.configuration.metered { needRestart.append("metered") }
            if configuration.sync != context.configuration.sync { needRestart.append("sync_*") }
            var problems: [String] = []
            if !needRestart.isEmpty {
                problems.append("\(needRestart.joined(separator: ", ")) changed; restart singlecastd to apply")
            }
            do {
                try await web.apply(configuration.web)
                if configuration.web.basicAuth && !configuration.web.listen.isEmpty {
                    _ = try context.webPassword.current()
                }
            } catch {
                problems.append("the HTTP listener kept its previous addresses: \(error)")
            }
            let message = problems.isEmpty ? nil : problems.joined(separator: "; ")
            logger.level = options.logLevel ?? configuration.logLevel
            context.updateRuntime { runtime in
                var applied = configuration
                // Paths stay as they were until a restart; the status must show what is really in use.
                applied.stateDirectory = runtime.configuration.stateDirectory
                applied.downloadDirectory = runtime.configuration.downloadDirectory
                applied.notify = runtime.configuration.notify
                applied.metered = runtime.configuration.metered
                applied.sync = runtime.configuration.sync
                applied.socketPath = runtime.configuration.socketPath
                runtime.configuration = applied
                runtime.configLoaded = loaded
                runtime.lastReload = .init(at: at, ok: true, message: message)
            }
            if let message {
                logger.warning("configuration reloaded, but \(message)")
            } else {
                logger.notice("configuration reloaded from \(context.paths.configFile)")
            }
            context.events.publish(
                .daemon,
                method: DaemonEvent.reloaded.rawValue,
                params: DaemonEventParams(at: at, message: message)
            )
            await context.queue.update(queueSettings(configuration, environment: environment))
            await context.windows.update(configuration.downloadWindows)
            await context.podcasts.update(podcastSettings(configuration))
            await context.directory.update(DirectorySettings(configuration))
            await context.sync?.reloadPassword()
            notifier.ready(status: await context.summary())
        } catch {
            let message = "reload failed, keeping the previous configuration: \(error)"
            logger.error(message)
            context.updateRuntime { $0.lastReload = .init(at: at, ok: false, message: "\(error)") }
            context.events.publish(
                .daemon,
                method: DaemonEvent.reloadFailed.rawValue,
                params: DaemonEventParams(at: at, message: "\(error)")
            )
            notifier.ready(status: "\(await context.summary()); last reload failed: \(error)")
        }
    }

    /// Starts the HTTP listener before READY; with Basic authentication its password is made now, so that
    /// `singlecastctl http-password` and the file have it before the first visit.
    private static func startWeb(
        _ web: HTTPListener,
        _ settings: WebSettings,
        context: DaemonContext
    ) throws(DaemonStartError) {
        do {
            try web.start(settings)
            if settings.basicAuth && !settings.listen.isEmpty { _ = try context.webPassword.current() }
        } catch {
            throw DaemonStartError(message: "\(error)")
        }
    }

    private static func createDirectory(_ path: String, mode: mode_t?, purpose: String) throws(DaemonStartError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: mode.map { [.posixPermissions: $0] }
            )
        } catch {
            throw DaemonStartError(message: "cannot create the \(purpose) '\(path)': \(describeFileError(error))")
        }
    }

    /// The podcasts' part of the configuration.
    private static func podcastSettings(_ configuration: DaemonConfiguration) -> PodcastSettings {
        var settings = PodcastSettings()
        settings.refreshInterval = configuration.refreshInterval
        settings.naming = EpisodeNaming(template: configuration.nameTemplate, portable: configuration.portableFileNames)
        settings.maxFeedBytes = Int64(configuration.maxFeedSize)
        settings.artworkCacheBytes = Int64(configuration.artworkCacheSize)
        settings.feedMemoryBudget = Int64(configuration.feedMemoryBudget)
        settings.transfer = queueSettings(configuration, environment: [:]).transfer
        settings.transfer.maxFileSize = nil  // max_download_size is for episodes; feeds have max_feed_size
        settings.fetchConcurrency = configuration.refreshConcurrent
        settings.fetchesPerHost = configuration.refreshPerHost
        settings.rules = configuration.episodeRules
        settings.maxStorage = configuration.maxStorage
        return settings
    }

    /// The queue's part of the configuration.
    private static func queueSettings(
        _ configuration: DaemonConfiguration,
        environment: [String: String]
    ) -> QueueSettings {
        var settings = QueueSettings()
        settings.scheduler.maximumConcurrent = configuration.maxConcurrent
        settings.scheduler.maximumPerHost = configuration.maxPerHost
        settings.retry.maximumAttempts = configuration.maxAttempts
        settings.retry.baseDelay = configuration.retryBaseDelay
        settings.retry.maximumDelay = configuration.retryMaxDelay
        settings.transfer.userAgent = "singlecast/\(SinglecastVersion.current)"
        settings.transfer.connectTimeout = configuration.connectTimeout
        settings.transfer.lowSpeedLimit = configuration.lowSpeedLimit
        settings.transfer.lowSpeedTime = configuration.lowSpeedTime
        settings.transfer.maxRedirects = configuration.maxRedirects
        settings.transfer.requireHTTPS = configuration.requireHTTPS
        settings.transfer.maxFileSize = configuration.maxDownloadSize.map(Int64.init)
        settings.speedLimit = configuration.speedLimit.map { Int64($0) }
        settings.onComplete = configuration.onComplete
        settings.disposal = FileDisposal(
            trash: configuration.useTrash
                ? Trash(environment: environment, home: DaemonPaths.home(environment: environment)) : nil
        )
        return settings
    }

    /// This boot's id, so a later start can tell a daemon crash from a machine crash.
    private static func bootID() -> String? {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingWhitespace()
    }
}
