import FoundationEssentials
import SinglecastProtocol

/// A wrong command line for singlecastd; printed with the usage and exit code 64.
package struct DaemonUsageError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// The command line of singlecastd. Flags win over the configuration file, on start and on every reload.
package struct DaemonOptions: Hashable, Sendable {
    package enum Action: Hashable, Sendable {
        case run
        case help
        case version
    }

    package var action: Action = .run
    package var configPath: String?
    package var stateDirectory: String?
    package var socketPath: String?
    package var logLevel: LogLevel?

    package init() {}

    package static let usage =
        "singlecastd [--config <path>] [--state-dir <dir>] [--socket <path>] [--log-level <level>]"

    package static let help = """
        OVERVIEW: The singlecast podcast download daemon.

        Keeps a persistent download queue and serves singlecastctl over a Unix socket. Runs in the foreground;
        under systemd it reports readiness (Type=notify), accepts socket activation and reloads on SIGHUP.

        USAGE: \(usage)

        OPTIONS:
          --config <path>         Configuration file; a file named here must exist. (default:
                                  $XDG_CONFIG_HOME/singlecast/singlecast.conf, which may be absent)
          --state-dir <dir>       Directory for the database and the lock file. (default:
                                  $XDG_STATE_HOME/singlecast)
          --socket <path>         Control socket to listen on. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --log-level <level>     debug, info, notice, warning or error. (default: info)
          --version               Show the version.
          -h, --help              Show help information.

        """

    /// Parses the arguments after the program name.
    package static func parse(_ arguments: some Sequence<String>) throws(DaemonUsageError) -> DaemonOptions {
        var options = DaemonOptions()
        var iterator = arguments.makeIterator()
        let known = ["--config", "--state-dir", "--socket", "--log-level", "--version", "--help", "-h"]
        while let argument = iterator.next() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value(_ valueName: String) throws(DaemonUsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = iterator.next(), !next.hasPrefix("--") || next == "-" else {
                    throw DaemonUsageError(message: "Missing value for '\(name) <\(valueName)>'")
                }
                return next
            }
            switch name {
            case "-h", "--help": options.action = .help
            case "--version": options.action = .version
            case "--config": options.configPath = try absolute(value("path"), option: name)
            case "--state-dir": options.stateDirectory = try absolute(value("dir"), option: name)
            case "--socket": options.socketPath = try absolute(value("path"), option: name)
            case "--log-level":
                let text = try value("level")
                guard let level = LogLevel(name: text) else {
                    throw DaemonUsageError(
                        message:
                            "The value '\(text)' is invalid for '--log-level <level>'; use debug, info, notice, warning or error"
                    )
                }
                options.logLevel = level
            default:
                if name.hasPrefix("-") {
                    var message = "Unknown option '\(name)'"
                    if let suggestion = closestMatch(to: name, among: known) {
                        message += ". Did you mean '\(suggestion)'?"
                    }
                    throw DaemonUsageError(message: message)
                }
                throw DaemonUsageError(message: "Unexpected argument '\(argument)'")
            }
        }
        return options
    }

    /// Relative paths are resolved against the working directory now, since the daemon may change it later.
    private static func absolute(_ path: String, option: String) throws(DaemonUsageError) -> String {
        guard !path.isEmpty else { throw DaemonUsageError(message: "The value for '\(option)' must not be empty") }
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

/// Where every file of the daemon lives, after flags, configuration and the XDG base directories are combined.
package struct DaemonPaths: Hashable, Sendable {
    package var configFile: String
    package var stateDirectory: String
    package var database: String
    package var lockFile: String
    package var downloadDirectory: String
    /// Podcast artwork: `$XDG_CACHE_HOME/singlecast/artwork`.
    package var artworkDirectory: String
    package var socket: String
    /// The socket's directory belongs to singlecast alone (the default), so its mode may be enforced.
    package var socketDirectoryIsPrivate: Bool

    /// `--config`, else `$XDG_CONFIG_HOME/singlecast/singlecast.conf`.
    package static func configFile(options: DaemonOptions, environment: [String: String]) -> String {
        options.configPath ?? xdg("XDG_CONFIG_HOME", fallback: ".config", environment) + "/singlecast/singlecast.conf"
    }

    package static func resolve(
        options: DaemonOptions,
        configuration: DaemonConfiguration,
        environment: [String: String],
        uid: UInt32
    ) -> DaemonPaths {
        let state =
            options.stateDirectory ?? configuration.stateDirectory
            ?? xdg("XDG_STATE_HOME", fallback: ".local/state", environment) + "/singlecast"
        let downloads =
            configuration.downloadDirectory
            ?? xdg("XDG_DATA_HOME", fallback: ".local/share", environment) + "/singlecast/episodes"
        let chosenSocket = options.socketPath ?? configuration.socketPath
        return DaemonPaths(
            configFile: configFile(options: options, environment: environment),
            stateDirectory: state,
            database: state + "/singlecast.sqlite3",
            lockFile: state + "/singlecastd.lock",
            downloadDirectory: downloads,
            artworkDirectory: xdg("XDG_CACHE_HOME", fallback: ".cache", environment) + "/singlecast/artwork",
            socket: chosenSocket ?? SocketLocation.defaultSocketPath(environment: environment, uid: uid),
            socketDirectoryIsPrivate: chosenSocket == nil
        )
    }

    /// The home directory: `$HOME`, else the password database.
    package static func home(environment: [String: String]) -> String {
        if let home = environment["HOME"], home.hasPrefix("/") { return home }
        return FileManager.default.homeDirectoryForCurrentUser.path
    }

    /// An XDG base directory: the variable when it holds an absolute path (the spec says to ignore relative
    /// ones), else `$HOME/<fallback>`.
    private static func xdg(_ variable: String, fallback: String, _ environment: [String: String]) -> String {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        return home(environment: environment) + "/" + fallback
    }
}
