/// Method names of the control protocol. docs/PROTOCOL.md describes each one.
package enum Method: String, CaseIterable, Sendable {
    case ping
    case version
    case status
    case watch
    case unwatch
    case enqueue
    case downloads
    case show
    case pause
    case resume
    case cancel
    case move
    case retry
    case clear
    case limit
    case subscribe
    case unsubscribe
    case podcasts
    case podcast
    case episodes
    case episode
    case refresh
    case set
    case download
    case delete
    case redownload
    case trash
    case restore
    case purge
    case inbox
    case played
    case unplayed
    case pin
    case unpin
    case rules
    case `import`
    case export
    case search
    case lookup
    case top
    case httpPassword = "http_password"
    case sync
}

/// Result of `ping`.
package struct PingResult: Codable, Hashable, Sendable {
    package var pong: Bool

    package init(pong: Bool = true) { self.pong = pong }
}

/// Result of `version`.
package struct VersionResult: Codable, Hashable, Sendable {
    /// singlecastd's version, e.g. `0.1.0`.
    package var daemon: String
    /// ``ProtocolVersion/current`` of the daemon.
    package var protocolVersion: Int
    /// Versions of the libraries the daemon runs with.
    package var sqlite: String
    package var libcurl: String

    package init(daemon: String, protocolVersion: Int, sqlite: String, libcurl: String) {
        self.daemon = daemon
        self.protocolVersion = protocolVersion
        self.sqlite = sqlite
        self.libcurl = libcurl
    }

    enum CodingKeys: String, CodingKey {
        case daemon
        case protocolVersion = "protocol"
        case sqlite
        case libcurl
    }
}

/// Result of `status`: what a user asks first when something seems off.
package struct StatusResult: Codable, Hashable, Sendable {
    package var version: String
    package var protocolVersion: Int
    package var pid: Int32
    /// ISO 8601, UTC.
    package var startedAt: String
    package var uptimeSeconds: Double
    package var logLevel: String
    /// The control socket was passed in by systemd rather than created by the daemon.
    package var socketActivated: Bool
    package var paths: Paths
    package var connections: Connections
    package var store: Store
    package var lastReload: Reload?
    /// The download queue at a glance.
    package var downloads: DownloadCounts?
    /// The subscriptions at a glance.
    package var podcasts: Podcasts?
    /// The HTTP listener; absent when `http_listen` is off.
    package var http: HTTP?

    package struct HTTP: Codable, Hashable, Sendable {
        /// `http://127.0.0.1:8372`, one per address listened on.
        package var listening: [String]
        /// `basic` or `off`.
        package var auth: String
        /// Connections open now, across the addresses.
        package var connections: Int

        package init(listening: [String], auth: String, connections: Int) {
            self.listening = listening
            self.auth = auth
            self.connections = connections
        }
    }

    package struct Podcasts: Codable, Hashable, Sendable {
        package var subscribed: Int
        /// Whose last refresh failed (gone ones not counted).
        package var failing: Int
        /// Whose feed answered 410 Gone.
        package var gone: Int
        /// ISO 8601, UTC: when the next refresh falls due; absent without subscriptions.
        package var nextRefreshAt: String?

        package init(subscribed: Int, failing: Int, gone: Int, nextRefreshAt: String?) {
            self.subscribed = subscribed
            self.failing = failing
            self.gone = gone
            self.nextRefreshAt = nextRefreshAt
        }

        enum CodingKeys: String, CodingKey {
            case subscribed
            case failing
            case gone
            case nextRefreshAt = "next_refresh_at"
        }
    }

    package struct Paths: Codable, Hashable, Sendable {
        package var config: String
        /// `false` when no config file exists and the embedded defaults are in force.
        package var configLoaded: Bool
        package var stateDirectory: String
        package var database: String
        package var downloadDirectory: String
        package var socket: String

        package init(
            config: String,
            configLoaded: Bool,
            stateDirectory: String,
            database: String,
            downloadDirectory: String,
            socket: String
        ) {
            self.config = config
            self.configLoaded = configLoaded
            self.stateDirectory = stateDirectory
            self.database = database
            self.downloadDirectory = downloadDirectory
            self.socket = socket
        }

        enum CodingKeys: String, CodingKey {
            case config
            case configLoaded = "config_loaded"
            case stateDirectory = "state_dir"
            case database
            case downloadDirectory = "download_dir"
            case socket
        }
    }

    package struct Connections: Codable, Hashable, Sendable {
        /// Clients connected now, this one included.
        package var clients: Int
        /// Connections subscribed to events with `watch`.
        package var watchers: Int
        /// Requests answered since start.
        package var requestsServed: Int
        /// Connections refused since start (another uid, too many clients).
        package var refused: Int

        package init(clients: Int, watchers: Int, requestsServed: Int, refused: Int) {
            self.clients = clients
            self.watchers = watchers
            self.requestsServed = requestsServed
            self.refused = refused
        }

        enum CodingKeys: String, CodingKey {
            case clients
            case watchers
            case requestsServed = "requests_served"
            case refused
        }
    }

    package struct Store: Codable, Hashable, Sendable {
        package var schemaVersion: Int
        package var sizeBytes: Int64
        package var sqliteVersion: String
        /// Times the daemon has started on this database, this start included.
        package var daemonStarts: Int
        /// Earlier runs that ended without a clean shutdown (crash, `kill -9`, power loss).
        package var uncleanShutdowns: Int
        /// How the run before this one ended; `nil` on the first start.
        package var previousRunClean: Bool?

        package init(
            schemaVersion: Int,
            sizeBytes: Int64,
            sqliteVersion: String,
            daemonStarts: Int,
            uncleanShutdowns: Int,
            previousRunClean: Bool?
        ) {
            self.schemaVersion = schemaVersion
            self.sizeBytes = sizeBytes
            self.sqliteVersion = sqliteVersion
            self.daemonStarts = daemonStarts
            self.uncleanShutdowns = uncleanShutdowns
            self.previousRunClean = previousRunClean
        }

        enum CodingKeys: String, CodingKey {
            case schemaVersion = "schema_version"
            case sizeBytes = "size_bytes"
            case sqliteVersion = "sqlite_version"
            case daemonStarts = "daemon_starts"
            case uncleanShutdowns = "unclean_shutdowns"
            case previousRunClean = "previous_run_clean"
        }
    }

    package struct Reload: Codable, Hashable, Sendable {
        /// ISO 8601, UTC.
        package var at: String
        package var ok: Bool
        /// Why the reload was rejected (the old configuration stays in force), or settings that need a restart.
        package var message: String?

        package init(at: String, ok: Bool, message: String?) {
            self.at = at
            self.ok = ok
            self.message = message
        }
    }

    package init(
        version: String,
        protocolVersion: Int,
        pid: Int32,
        startedAt: String,
        uptimeSeconds: Double,
        logLevel: String,
        socketActivated: Bool,
        paths: Paths,
        connections: Connections,
        store: Store,
        lastReload: Reload?,
        downloads: DownloadCounts? = nil,
        podcasts: Podcasts? = nil,
        http: HTTP? = nil
    ) {
        self.podcasts = podcasts
        self.http = http
        self.version = version
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.logLevel = logLevel
        self.socketActivated = socketActivated
        self.paths = paths
        self.connections = connections
        self.store = store
        self.lastReload = lastReload
        self.downloads = downloads
    }

    enum CodingKeys: String, CodingKey {
        case version
        case protocolVersion = "protocol"
        case pid
        case startedAt = "started_at"
        case uptimeSeconds = "uptime_seconds"
        case logLevel = "log_level"
        case socketActivated = "socket_activated"
        case paths
        case connections
        case store
        case lastReload = "last_reload"
        case downloads
        case podcasts
        case http
    }
}

/// Params of `http_password`.
package struct HTTPPasswordParams: Codable, Hashable, Sendable {
    /// Make a new password; the old one stops working at once.
    package var reset: Bool?

    package init(reset: Bool? = nil) { self.reset = reset }
}

/// Result of `http_password`: the credentials of the HTTP listener's Basic authentication.
package struct HTTPPasswordResult: Codable, Hashable, Sendable {
    package var user: String
    package var password: String
    /// The file the password is kept in (mode 0600, in the state directory).
    package var file: String

    package init(user: String, password: String, file: String) {
        self.user = user
        self.password = password
        self.file = file
    }
}

/// Event topics a client can `watch`. Each event's method name starts with its topic and a dot.
package enum EventTopic: String, CaseIterable, Codable, Sendable {
    /// `daemon.reloaded`, `daemon.reload_failed`, `daemon.stopping`.
    case daemon
    /// `download.added`, `download.progress`, … (``DownloadEvent``).
    case downloads
    /// `podcast.subscribed`, `podcast.refreshed`, `podcast.unsubscribed` (``PodcastEvent``).
    case podcasts
    /// `episode.played`, `episode.unplayed`, `episode.marked`, `episode.deleted` (``EpisodeEvent``).
    case episodes
    /// `sync.completed`, `sync.failed` (``SyncEvent``).
    case sync
}

/// Params of `watch`; `topics` defaults to every topic, `events` to every event of them (``EventSelection``).
package struct WatchParams: Codable, Hashable, Sendable {
    package var topics: [String]?
    package var events: [String]?

    package init(topics: [String]?, events: [String]? = nil) {
        self.topics = topics
        self.events = events
    }
}

/// Result of `watch` and `unwatch`: the topics this connection receives now and, when it chose some, the only
/// events of them it receives.
package struct WatchResult: Codable, Hashable, Sendable {
    package var topics: [EventTopic]
    package var events: [String]?

    package init(topics: [EventTopic], events: [String]? = nil) {
        self.topics = topics
        self.events = events
    }

    package init(_ selection: EventSelection) {
        self.init(topics: selection.topics.sorted { $0.rawValue < $1.rawValue }, events: selection.events?.sorted())
    }
}

/// Params of every `daemon.*` event.
package struct DaemonEventParams: Codable, Hashable, Sendable {
    /// ISO 8601, UTC.
    package var at: String
    /// A human-readable line, e.g. the reason a reload failed.
    package var message: String?

    package init(at: String, message: String?) {
        self.at = at
        self.message = message
    }
}

/// Names of the events the daemon sends to watchers.
package enum DaemonEvent: String, CaseIterable, Sendable {
    case reloaded = "daemon.reloaded"
    case reloadFailed = "daemon.reload_failed"
    case stopping = "daemon.stopping"
}
