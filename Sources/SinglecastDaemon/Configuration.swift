import FoundationEssentials
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// A problem in the configuration file, reported as `file:line: what is wrong`.
package struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    package var path: String
    /// 1-based; `nil` when the problem is the file as a whole (unreadable, not UTF-8).
    package var line: Int?
    package var message: String

    package var description: String {
        if let line { "\(path):\(line): \(message)" } else { "\(path): \(message)" }
    }
}

/// Everything singlecastd can be configured with. Each key of `singlecast.conf` maps to one property;
/// config/singlecast.conf documents them all with their defaults.
package struct DaemonConfiguration: Hashable, Sendable {
    package var logLevel: LogLevel = .info
    /// `nil` = `$XDG_STATE_HOME/singlecast`.
    package var stateDirectory: String?
    /// `nil` = `$XDG_DATA_HOME/singlecast/episodes`.
    package var downloadDirectory: String?
    /// `nil` = ``SocketLocation/defaultSocketPath(environment:uid:)``.
    package var socketPath: String?
    /// Longest request line accepted; a longer one is answered with an error and the connection is closed.
    package var maxRequestBytes = 1 << 20
    /// Connections served at once; more are turned away with an error.
    package var maxClients = 128
    /// How long a stop waits for in-flight replies before closing connections.
    package var shutdownTimeout: Duration = .seconds(10)
    /// Downloads running at once, and at once from one host.
    package var maxConcurrent = 3
    package var maxPerHost = 2
    package var connectTimeout: Duration = .seconds(30)
    /// A transfer slower than `lowSpeedLimit` bytes per second for `lowSpeedTime` is aborted and retried.
    package var lowSpeedLimit = 1024
    package var lowSpeedTime: Duration = .seconds(60)
    package var maxRedirects = 10
    /// Refuse plain-http URLs and https-to-http redirects.
    package var requireHTTPS = false
    /// Attempts before a download is marked failed; the delay between them doubles from `retryBaseDelay`
    /// up to `retryMaxDelay`, with jitter.
    package var maxAttempts = 10
    package var retryBaseDelay: Duration = .seconds(2)
    package var retryMaxDelay: Duration = .seconds(600)
    /// Global speed limit in bytes per second; `nil` = unlimited.
    package var speedLimit: Int?
    /// The largest file a download may have, in bytes; a bigger one (announced or received) fails as `too_large`.
    /// `nil` = no limit.
    ///
    /// 4 GiB by default, so that a response without end stops before it fills the disk: podcast episodes rarely
    /// pass 2 GB (hours of high-bitrate video), so twice that refuses nothing real.
    package var maxDownloadSize: Int? = 4 << 30
    /// A program run after each completed download, with the file as its argument.
    package var onComplete: String?
    /// How long a stop waits for running `on_complete` programs before it kills them.
    package var hookStopTimeout: Duration = .seconds(10)
    /// Podcasts: time between refreshes, file name template, largest feed, artwork cache size.
    package var refreshInterval: Duration = .seconds(3600)
    package var nameTemplate = EpisodeNaming.defaultTemplate
    /// Episode file and folder names that FAT and exFAT accept too (`portable_file_names`).
    package var portableFileNames = false
    package var maxFeedSize: Int = 100 << 20
    /// Feed fetches running at once, and at once to one host (see `FetchLimiter`): a refresh of a thousand feeds on
    /// one host otherwise opened hundreds of connections to it, and most of them stalled.
    package var refreshConcurrent = 16
    package var refreshPerHost = 4
    package var artworkCacheSize: Int = 100 << 20
    /// The memory feed documents and their parses may hold at once, across refreshes (see `FeedMemoryLimiter`).
    package var feedMemoryBudget: Int = 256 << 20
    /// The podcast directory (`search`, `lookup`, `top`): endpoints, default store country, cache time,
    /// requests allowed (`nil` = unlimited) and the shortest search term.
    package var searchEndpoint = "https://itunes.apple.com"
    package var chartEndpoint = "https://rss.marketingtools.apple.com"
    package var searchCountry = "US"
    package var searchCacheTTL: Duration = .seconds(3600)
    package var searchRateLimit: RateLimit? = RateLimit(count: 20, interval: .seconds(60))
    package var searchMinTermLength = 2
    /// Desktop notifications over the session bus; none by default.
    package var notify: NotificationKinds = []
    /// Episode rules every podcast has unless it sets its own (`title_exclude`, `max_age`, …).
    package var episodeRules = EpisodeRules()
    /// The budget for every downloaded file, in bytes; `nil` = none.
    package var maxStorage: Int64?
    /// Deleted episode files go to the freedesktop.org Trash rather than away.
    package var useTrash = true
    /// When downloads may run, in local time; none = always.
    package var downloadWindows = DownloadWindows()
    /// Whether downloads wait while NetworkManager reports a metered connection.
    ///
    /// `pause` by default: the connections NetworkManager calls metered are those a user marked so and phone
    /// hotspots or mobile broadband it guesses to be, where a queue of episodes can use up a data plan; waiting costs
    /// nothing, and `--now` or `metered = ignore` say otherwise. Without NetworkManager it changes nothing.
    package var metered = MeteredPolicy.pause
    /// The optional HTTP listener (personal feeds, the web view); off by default.
    package var web = WebSettings()

    package init() {}

    /// One documented key: its name, how to read a value, and how to show the default.
    private struct Key: Sendable {
        var name: String
        var apply: @Sendable (inout DaemonConfiguration, String) -> String?  // returns an error message
    }

    private static let keys: [Key] = generalKeys + ruleKeys + webKeys + syncKeys

    private static let generalKeys: [Key] = [
        Key(name: "log_level") { configuration, value in
            guard let level = LogLevel(name: value) else {
                return
                    "log_level must be one of \(LogLevel.allCases.reversed().map(\.name).joined(separator: ", ")); got '\(value)'"
            }
            configuration.logLevel = level
            return nil
        },
        Key(name: "state_dir") { configuration, value in
            pathValue(value, key: "state_dir") { configuration.stateDirectory = $0 }
        },
        Key(name: "download_dir") { configuration, value in
            pathValue(value, key: "download_dir") { configuration.downloadDirectory = $0 }
        },
        Key(name: "socket_path") { configuration, value in
            pathValue(value, key: "socket_path") { configuration.socketPath = $0 }
        },
        Key(name: "max_request_bytes") { configuration, value in
            guard let bytes = parseByteCount(value), bytes >= 1024, bytes <= 1 << 30 else {
                return "max_request_bytes must be a size between 1K and 1G such as 1M or 65536; got '\(value)'"
            }
            configuration.maxRequestBytes = bytes
            return nil
        },
        integerKey("max_clients", 1...65536) { $0.maxClients = $1 },
        Key(name: "shutdown_timeout") { configuration, value in
            guard let duration = parseDuration(value), duration <= .seconds(3600) else {
                return "shutdown_timeout must be a duration such as 10s, 500ms or 2m (at most 1h); got '\(value)'"
            }
            configuration.shutdownTimeout = duration
            return nil
        },
        integerKey("max_concurrent", 1...64) { $0.maxConcurrent = $1 },
        integerKey("max_per_host", 1...64) { $0.maxPerHost = $1 },
        durationKey("connect_timeout", .milliseconds(100) ... .seconds(600)) { $0.connectTimeout = $1 },
        Key(name: "low_speed_limit") { configuration, value in
            guard let bytes = parseByteCount(value), bytes <= 1 << 30 else {
                return "low_speed_limit must be a rate in bytes per second such as 1K (0 turns it off); got '\(value)'"
            }
            configuration.lowSpeedLimit = bytes
            return nil
        },
        durationKey("low_speed_time", .seconds(1) ... .seconds(3600)) { $0.lowSpeedTime = $1 },
        integerKey("max_redirects", 0...50) { $0.maxRedirects = $1 },
        Key(name: "require_https") { configuration, value in
            switch value.lowercased() {
            case "true", "yes", "on", "1": configuration.requireHTTPS = true
            case "false", "no", "off", "0": configuration.requireHTTPS = false
            default: return "require_https must be true or false; got '\(value)'"
            }
            return nil
        },
        integerKey("max_attempts", 1...1000) { $0.maxAttempts = $1 },
        durationKey("retry_base_delay", .milliseconds(10) ... .seconds(3600)) { $0.retryBaseDelay = $1 },
        durationKey("retry_max_delay", .milliseconds(10) ... .seconds(86400)) { $0.retryMaxDelay = $1 },
        Key(name: "speed_limit") { configuration, value in
            if ["0", "off", "none", "unlimited"].contains(value.lowercased()) {
                configuration.speedLimit = nil
                return nil
            }
            guard let rate = parseByteCount(value), rate > 0 else {
                return "speed_limit must be a rate in bytes per second such as 2M or 500K, or off; got '\(value)'"
            }
            configuration.speedLimit = rate
            return nil
        },
        Key(name: "max_download_size") { configuration, value in
            if ["0", "off", "none", "unlimited"].contains(value.lowercased()) {
                configuration.maxDownloadSize = nil
                return nil
            }
            guard let bytes = parseByteCount(value), bytes > 0 else {
                return "max_download_size must be a size such as 2G or 500M, or off; got '\(value)'"
            }
            configuration.maxDownloadSize = bytes
            return nil
        },
        Key(name: "on_complete") { configuration, value in
            if value.isEmpty {
                configuration.onComplete = nil
                return nil
            }
            guard value.hasPrefix("/") else {
                return "on_complete must be the absolute path of a program (or empty); got '\(value)'"
            }
            // Refused now rather than found out at the first completed download.
            guard access(value, X_OK) == 0 else {
                return "on_complete program '\(value)' cannot be run: \(String(cString: strerror(errno)))"
            }
            configuration.onComplete = value
            return nil
        },
        durationKey("hook_stop_timeout", .zero ... .seconds(3600)) { $0.hookStopTimeout = $1 },
        durationKey("refresh_interval", .seconds(1) ... .seconds(7 * 86400)) { $0.refreshInterval = $1 },
        booleanKey("portable_file_names") { $0.portableFileNames = $1 },
        Key(name: "name_template") { configuration, value in
            if let problem = EpisodeNaming.problem(in: value) {
                return "name_template '\(value)' is not usable: \(problem)"
            }
            configuration.nameTemplate = value
            return nil
        },
        integerKey("refresh_concurrent", 1...256) { $0.refreshConcurrent = $1 },
        integerKey("refresh_per_host", 1...64) { $0.refreshPerHost = $1 },
        Key(name: "max_feed_size") { configuration, value in
            guard let bytes = parseByteCount(value), bytes >= 64 << 10, bytes <= 4 << 30 else {
                return "max_feed_size must be a size between 64K and 4G such as 100M; got '\(value)'"
            }
            configuration.maxFeedSize = bytes
            return nil
        },
        Key(name: "feed_memory_budget") { configuration, value in
            guard let bytes = parseByteCount(value), bytes >= 16 << 20, bytes <= 64 << 30 else {
                return "feed_memory_budget must be a size between 16M and 64G such as 256M; got '\(value)'"
            }
            configuration.feedMemoryBudget = bytes
            return nil
        },
        Key(name: "artwork_cache_size") { configuration, value in
            guard let bytes = parseByteCount(value), bytes >= 1 << 20, bytes <= 64 << 30 else {
                return "artwork_cache_size must be a size between 1M and 64G such as 100M; got '\(value)'"
            }
            configuration.artworkCacheSize = bytes
            return nil
        },
        endpointKey("search_endpoint") { $0.searchEndpoint = $1 },
        endpointKey("chart_endpoint") { $0.chartEndpoint = $1 },
        Key(name: "search_country") { configuration, value in
            guard DirectoryQuery.isCountryCode(value) else {
                return "search_country must be a two-letter ISO 3166 code such as US or DE; got '\(value)'"
            }
            configuration.searchCountry = value.uppercased()
            return nil
        },
        durationKey("search_cache_ttl", .zero ... .seconds(7 * 86400)) { $0.searchCacheTTL = $1 },
        Key(name: "search_rate_limit") { configuration, value in
            if ["0", "off", "none", "unlimited"].contains(value.lowercased()) {
                configuration.searchRateLimit = nil
                return nil
            }
            guard let limit = RateLimit(parsing: value) else {
                return
                    "search_rate_limit must be requests per time such as 20/min, 1/s or 300/h, or off; got '\(value)'"
            }
            configuration.searchRateLimit = limit
            return nil
        },
        integerKey("search_min_term_length", 1...100) { $0.searchMinTermLength = $1 },
        Key(name: "notify") { configuration, value in
            guard let kinds = NotificationKinds.parse(value) else {
                let names = NotificationKinds.names.map(\.name).joined(separator: ", ")
                return "notify must be off or a comma-separated list of \(names); got '\(value)'"
            }
            configuration.notify = kinds
            return nil
        },
        Key(name: "download_window") { configuration, value in
            switch DownloadWindows.parse(value) {
            case .success(let windows): configuration.downloadWindows = windows
            case .failure(let problem):
                return "download_window must be local times such as 01:00-06:00, comma-separated: \(problem.message)"
            }
            return nil
        },
        Key(name: "metered") { configuration, value in
            guard let policy = MeteredPolicy(rawValue: value.lowercased()) else {
                return "metered must be pause or ignore; got '\(value)'"
            }
            configuration.metered = policy
            return nil
        },
    ]

    /// The episode rules (one syntax with `set`'s, owned by ``EpisodeRules``), the storage budget and the Trash.
    private static let ruleKeys: [Key] =
        EpisodeRules.Key.allCases.map { rule in
            Key(name: rule.rawValue) { configuration, value in
                do {
                    try configuration.episodeRules.set(rule, to: value)
                } catch let problem as EpisodeRules.Problem {
                    return problem.message
                } catch {
                    return "\(error)"
                }
                return nil
            }
        } + [
            Key(name: "max_storage") { configuration, value in
                if ["0", "off", "none", "unlimited"].contains(value.lowercased()) {
                    configuration.maxStorage = nil
                    return nil
                }
                guard let size = parseByteCount(value), size >= 1 << 20 else {
                    return "max_storage must be a size of at least 1M such as 50G or 500M, or off; got '\(value)'"
                }
                configuration.maxStorage = Int64(size)
                return nil
            },
            booleanKey("use_trash") { $0.useTrash = $1 },
        ]

    /// The HTTP listener; whether its keys agree with each other is checked once the whole file is read.
    private static let webKeys: [Key] = [
        Key(name: "http_listen") { configuration, value in
            if ["", "off", "none"].contains(value.lowercased()) {
                configuration.web.listen = []
                return nil
            }
            switch WebListenAddress.parseList(value) {
            case .success(let addresses): configuration.web.listen = addresses
            case .failure(let problem):
                return
                    "http_listen must be off or addresses such as 127.0.0.1:8372, [::1]:8372 or 0.0.0.0:8372; got '\(problem.word)'"
            }
            return nil
        },
        Key(name: "http_auth") { configuration, value in
            switch value.lowercased() {
            case "basic": configuration.web.basicAuth = true
            case "off": configuration.web.basicAuth = false
            default: return "http_auth must be basic or off; got '\(value)'"
            }
            return nil
        },
        Key(name: "http_tls_cert") { configuration, value in
            if value.isEmpty {
                configuration.web.tlsCertificate = nil
                return nil
            }
            return pathValue(value, key: "http_tls_cert") { configuration.web.tlsCertificate = $0 }
        },
        Key(name: "http_tls_key") { configuration, value in
            if value.isEmpty {
                configuration.web.tlsKey = nil
                return nil
            }
            return pathValue(value, key: "http_tls_key") { configuration.web.tlsKey = $0 }
        },
        durationKey("http_timeout", .seconds(1) ... .seconds(3600)) { $0.web.timeout = $1 },
    ]

    // MARK: Sync with a phone through the gPodder API (`SyncSettings`); off while sync_server is empty.

    /// The `sync_*` keys.
    package var sync = SyncSettings()

    private static let syncKeys: [Key] = [
        Key(name: "sync_server") { configuration, given in
            let value = given.trimmingWhitespace()
            if value.isEmpty {
                configuration.sync.server = nil
                return nil
            }
            guard let url = try? HTTPURL(value), url.user == nil else {
                return "sync_server must be an http:// or https:// URL without a user or password; got '\(given)'"
            }
            configuration.sync.server = url.string.hasSuffix("/") ? String(url.string.dropLast()) : url.string
            return nil
        },
        Key(name: "sync_flavor") { configuration, value in
            guard let flavor = SyncSettings.Flavor(rawValue: value.lowercased()) else {
                return "sync_flavor must be gpodder or nextcloud; got '\(value)'"
            }
            configuration.sync.flavor = flavor
            return nil
        },
        Key(name: "sync_user") { configuration, value in
            guard !value.contains("/"), !value.contains(":") else {
                return "sync_user must not contain '/' or ':'; got '\(value)'"
            }
            configuration.sync.user = value.isEmpty ? nil : value
            return nil
        },
        Key(name: "sync_password_file") { configuration, value in
            if value.isEmpty {
                configuration.sync.passwordFile = nil
                return nil
            }
            guard value.hasPrefix("/") else {
                return "sync_password_file must be an absolute path (or start with ~/); got '\(value)'"
            }
            // Checked now, so that a file others can read is refused before the password is ever sent.
            if let problem = SyncSettings.passwordFileProblem(value) { return problem }
            configuration.sync.passwordFile = value
            return nil
        },
        Key(name: "sync_device") { configuration, value in
            if value.isEmpty {
                configuration.sync.device = nil
                return nil
            }
            guard SyncSettings.isDeviceID(value) else {
                return "sync_device must be up to 64 letters, digits, '.', '-' or '_'; got '\(value)'"
            }
            configuration.sync.device = value
            return nil
        },
        durationKey("sync_interval", .seconds(60) ... .seconds(7 * 86400)) { $0.sync.interval = $1 },
        Key(name: "sync_auto_download") { configuration, value in
            guard let policy = EpisodePolicy.Fetch(stored: value.lowercased()) else {
                return "sync_auto_download must be off, all-new or latest:N (N at least 1); got '\(value)'"
            }
            configuration.sync.autoDownload = policy
            return nil
        },
    ]

    /// An http or https base URL (what ``HTTPURL`` accepts); a trailing slash is dropped.
    private static func endpointKey(
        _ name: String,
        _ assign: @escaping @Sendable (inout DaemonConfiguration, String) -> Void
    ) -> Key {
        Key(name: name) { configuration, given in
            // White space around a URL does not count (HTTPURL's reading), so it is not kept either.
            let value = given.trimmingWhitespace()
            // A chart template's {country} and {limit} are not valid URL characters until they are filled in.
            let filled = value.replacing("{country}", with: "us").replacing(
                "{limit}",
                with: "1"
            )
            guard (try? HTTPURL(filled)) != nil else {
                return "\(name) must be an http:// or https:// URL such as https://itunes.apple.com; got '\(given)'"
            }
            assign(&configuration, value.hasSuffix("/") ? String(value.dropLast()) : value)
            return nil
        }
    }

    private static func integerKey(
        _ name: String,
        _ range: ClosedRange<Int>,
        _ assign: @escaping @Sendable (inout DaemonConfiguration, Int) -> Void
    ) -> Key {
        Key(name: name) { configuration, value in
            guard let number = Int(value), range.contains(number) else {
                return "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound); got '\(value)'"
            }
            assign(&configuration, number)
            return nil
        }
    }

    private static func booleanKey(
        _ name: String,
        _ assign: @escaping @Sendable (inout DaemonConfiguration, Bool) -> Void
    ) -> Key {
        Key(name: name) { configuration, value in
            switch value.lowercased() {
            case "true", "yes", "on", "1": assign(&configuration, true)
            case "false", "no", "off", "0": assign(&configuration, false)
            default: return "\(name) must be true or false; got '\(value)'"
            }
            return nil
        }
    }

    private static func durationKey(
        _ name: String,
        _ range: ClosedRange<Duration>,
        _ assign: @escaping @Sendable (inout DaemonConfiguration, Duration) -> Void
    ) -> Key {
        Key(name: name) { configuration, value in
            guard let duration = parseDuration(value), range.contains(duration) else {
                return
                    "\(name) must be a duration such as 30s, 500ms or 2m (from \(range.lowerBound) to \(range.upperBound)); got '\(value)'"
            }
            assign(&configuration, duration)
            return nil
        }
    }

    /// The names of every key, in documentation order.
    package static var keyNames: [String] { keys.map(\.name) }

    /// Parses the text of a configuration file.
    ///
    /// The format is one `key = value` per line; `#` starts a comment line; blank lines are ignored; a value may
    /// be wrapped in double quotes to keep leading or trailing spaces. Keys may appear once each.
    ///
    /// - Throws: ``ConfigurationError`` naming the first wrong line.
    package static func parse(
        _ text: String,
        path: String,
        home: String
    ) throws(ConfigurationError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        var seen: [String: Int] = [:]
        for (index, rawLine) in text.split(
            omittingEmptySubsequences: false,
            whereSeparator: { $0 == "\n" || $0 == "\r\n" }
        ).enumerated() {
            let lineNumber = index + 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            func fail(_ message: String) -> ConfigurationError {
                ConfigurationError(path: path, line: lineNumber, message: message)
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw fail("expected 'key = value', found '\(line)'")
            }
            let name = line[..<equals].trimmingWhitespace()
            var value = line[line.index(after: equals)...].trimmingWhitespace()
            guard let key = keys.first(where: { $0.name == name }) else {
                var message = "unknown key '\(name)'"
                if let suggestion = closestMatch(to: name, among: keyNames) {
                    message += "; did you mean '\(suggestion)'?"
                } else {
                    message += "; known keys: \(keyNames.joined(separator: ", "))"
                }
                throw fail(message)
            }
            if let previous = seen[name] {
                throw fail("'\(name)' is already set on line \(previous)")
            }
            seen[name] = lineNumber
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            } else if value.hasPrefix("\"") || value.hasSuffix("\"") {
                throw fail("unbalanced double quote in the value of '\(name)'")
            }
            if value.hasPrefix("~/") { value = home + value.dropFirst() } else if value == "~" { value = home }
            if let message = key.apply(&configuration, value) {
                throw fail(message)
            }
        }
        // Rules that contradict each other are named on the line of the rule that gives way.
        do {
            try configuration.episodeRules.validate()
        } catch {
            let line = error.key.flatMap { seen[$0.rawValue] }
            throw ConfigurationError(path: path, line: line, message: error.message)
        }
        if let problem = configuration.web.problem {
            throw ConfigurationError(path: path, line: seen[problem.key], message: problem.message)
        }
        return configuration
    }

    /// Reads and parses the file at `path`; a missing file means the embedded defaults, unless it is `required`.
    ///
    /// - Parameter required: the file was named with `--config`, so whoever named it meant it to be read: running on
    ///   the defaults instead went unnoticed behind one info line.
    /// - Returns: the configuration and whether a file was read.
    package static func load(
        path: String,
        home: String,
        required: Bool
    ) throws(ConfigurationError) -> (DaemonConfiguration, Bool) {
        guard FileManager.default.fileExists(atPath: path) else {
            if required {
                throw ConfigurationError(
                    path: path,
                    line: nil,
                    message: "the file does not exist (named with --config)"
                )
            }
            return (DaemonConfiguration(), false)
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(
                path: path,
                line: nil,
                message: "cannot read the file: \(describeFileError(error))"
            )
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(path: path, line: nil, message: "the file is not valid UTF-8 text")
        }
        return (try parse(text, path: path, home: home), true)
    }

    private static func pathValue(_ value: String, key: String, assign: (String) -> Void) -> String? {
        guard value.hasPrefix("/") else {
            return "\(key) must be an absolute path (or start with ~/); got '\(value)'"
        }
        assign(value)
        return nil
    }
}

/// `64K`, `1M`, `1MiB`, `2G`, `1T`, `65536`: binary multiples, as sizes of buffers and files usually are.
package func parseByteCount(_ text: String) -> Int? {
    let lowered = text.lowercased().replacing("ib", with: "").replacing("b", with: "")
    let multipliers: [Character: Int] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40]
    if let last = lowered.last, let multiplier = multipliers[last] {
        guard let number = Int(lowered.dropLast()), number >= 0 else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }
    return Int(lowered).flatMap { $0 >= 0 ? $0 : nil }
}

/// The longest duration written anywhere (the configuration, `set`, `rules`): 36500 days, about 100 years.
///
/// `1e300d` trapped in the conversion to milliseconds, and `106751980000d` was kept and overflowed `date + age`
/// at every start. A hundred years is longer than any retention or age anyone means, and its milliseconds leave
/// room to add any date.
package let longestDuration = Duration.seconds(36_500 * 86_400)

/// ``longestDuration`` as it is written in messages.
package let longestDurationText = "36500d (100 years)"

/// Why a written duration is refused.
package enum DurationProblem: Error, Hashable, Sendable {
    /// Not a number with a unit, or negative.
    case unreadable
    /// Longer than ``longestDuration``.
    case longerThanMaximum
}

/// `500ms`, `10s`, `2m`, `1h`, `7d`, `2w`; a bare number means seconds. At most ``longestDuration``.
package func readDuration(_ text: String) throws(DurationProblem) -> Duration {
    let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604_800)]
    let (number, scale) =
        units.first { text.hasSuffix($0.0) }.map { (text.dropLast($0.0.count), $0.1) } ?? (text[...], 1)
    guard let value = Double(number), value >= 0, value.isFinite else { throw .unreadable }
    let seconds = value * scale
    guard seconds <= Double(longestDuration.components.seconds) else { throw .longerThanMaximum }
    // Below the maximum, the milliseconds fit.
    guard let milliseconds = OutsideNumber.int64((seconds * 1000).rounded()) else { throw .longerThanMaximum }
    return .milliseconds(milliseconds)
}

/// ``readDuration(_:)``, `nil` when it refuses the text.
package func parseDuration(_ text: String) -> Duration? {
    try? readDuration(text)
}

/// The candidate within edit distance 2 of `word`, for "did you mean" hints.
package func closestMatch(to word: String, among candidates: [String]) -> String? {
    // The distance is at least the difference in length, so a word much longer than every candidate (a client's
    // 1 MB method name) is never compared: the quadratic comparison took the daemon 23 s of CPU for one request.
    let longest = candidates.map(\.count).max() ?? 0
    let length = word.prefix(longest + 3).count
    let scored = candidates.filter { abs($0.count - length) <= 2 }.map { ($0, editDistance(word, $0)) }
        .filter { $0.1 <= 2 }
    return scored.min { $0.1 < $1.1 }?.0
}

/// Levenshtein distance between two strings.
package func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
