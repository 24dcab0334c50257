import Foundation
import SinglecastDaemon
import SinglecastTestServers
import Testing

@Suite struct ConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, path: "/etc/sc.conf", home: "/home/u")
    }

    private func error(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func windowsLineEndingsReadLikeUnixOnes() throws {
        let unix = "log_level = debug\nmax_concurrent = 5\n\n# comment\nmax_per_host = 4\n"
        let windows = unix.replacing("\n", with: "\r\n")
        #expect(windows.utf8.count == unix.utf8.count + 5)
        #expect(try parse(windows) == parse(unix))
        #expect(try parse(windows).maxConcurrent == 5)
        // Line numbers count CRLF as one line break.
        #expect(error("log_level = debug\r\n\r\nbogus\r\n")?.contains(":3:") == true)
    }

    @Test func emptyFileMeansDefaults() throws {
        #expect(try parse("") == DaemonConfiguration())
        #expect(try parse("# only comments\n\n   \n") == DaemonConfiguration())
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try parse(
            """
            log_level = Debug
            state_dir = ~/state
            download_dir = "/srv/pod casts"
            socket_path=/run/sc.sock
            max_request_bytes = 64K
            max_clients = 9
            shutdown_timeout = 1500ms\r
            """
        )
        #expect(configuration.logLevel == .debug)
        #expect(configuration.stateDirectory == "/home/u/state")
        #expect(configuration.downloadDirectory == "/srv/pod casts")
        #expect(configuration.socketPath == "/run/sc.sock")
        #expect(configuration.maxRequestBytes == 65536)
        #expect(configuration.maxClients == 9)
        #expect(configuration.shutdownTimeout == .milliseconds(1500))
    }

    /// Feed refreshes run at most 16 at once and 4 to one host, so a refresh of many feeds on one host does not
    /// open hundreds of connections to it.
    @Test func refreshConcurrencyHasLimits() throws {
        #expect(DaemonConfiguration().refreshConcurrent == 16)
        #expect(DaemonConfiguration().refreshPerHost == 4)
        let parsed = try parse("refresh_concurrent = 32\nrefresh_per_host = 2\n")
        #expect(parsed.refreshConcurrent == 32)
        #expect(parsed.refreshPerHost == 2)
        #expect(error("refresh_per_host = 0")?.contains("refresh_per_host must be a whole number from 1 to") == true)
        #expect(error("refresh_concurrent = 1000")?.contains("refresh_concurrent must be a whole number") == true)
    }

    /// Feed parsing shares a memory budget: 256 MiB unless configured, at least 16 MiB.
    @Test func theFeedMemoryBudgetIsASize() throws {
        #expect(DaemonConfiguration().feedMemoryBudget == 256 << 20)
        #expect(try parse("feed_memory_budget = 1G\n").feedMemoryBudget == 1 << 30)
        #expect(error("feed_memory_budget = 1M")?.contains("feed_memory_budget must be a size between 16M") == true)
        #expect(error("feed_memory_budget = lots")?.contains("feed_memory_budget must be a size") == true)
    }

    /// A hook that cannot run is refused when the file is read (start-up exits 78, a reload keeps the old one),
    /// not found out at the first completed download.
    @Test func anOnCompleteProgramThatCannotRunIsRefused() throws {
        #expect(try parse("on_complete = /bin/true").onComplete == "/bin/true")
        #expect(try parse("on_complete =").onComplete == nil)
        #expect(
            error("on_complete = /nonexistent/hook")
                == "/etc/sc.conf:1: on_complete program '/nonexistent/hook' cannot be run: No such file or directory"
        )
        let home = try TemporaryDirectory(prefix: "singlecast-config-test")
        let notAProgram = home.file("notes.txt")
        try Data("not a program".utf8).write(to: URL(fileURLWithPath: notAProgram))
        chmod(notAProgram, 0o644)
        #expect(error("on_complete = \(notAProgram)")?.contains("cannot be run: Permission denied") == true)
    }

    /// The default file may be absent (the defaults apply); a file named explicitly must exist.
    @Test func onlyAnExplicitlyNamedFileMustExist() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-config-test")
        let missing = home.file("absent.conf")
        let (defaults, loaded) = try DaemonConfiguration.load(path: missing, home: home.path, required: false)
        #expect(defaults == DaemonConfiguration())
        #expect(!loaded)
        let refusal = #expect(throws: ConfigurationError.self) {
            try DaemonConfiguration.load(path: missing, home: home.path, required: true)
        }
        #expect(refusal?.description == "\(missing): the file does not exist (named with --config)")
        try Data("max_clients = 7\n".utf8).write(to: URL(fileURLWithPath: missing))
        let (read, present) = try DaemonConfiguration.load(path: missing, home: home.path, required: true)
        #expect(read.maxClients == 7)
        #expect(present)
    }

    /// An endless response must not fill the disk: without the key, downloads stop at 4 GiB.
    @Test func maxDownloadSizeIsFourGigabytesByDefault() throws {
        #expect(DaemonConfiguration().maxDownloadSize == 4 << 30)
        #expect(try parse("").maxDownloadSize == 4 << 30)
        #expect(try parse("max_download_size = 2G").maxDownloadSize == 2 << 30)
        #expect(try parse("max_download_size = off").maxDownloadSize == nil)
        #expect(try parse("max_download_size = 0").maxDownloadSize == nil)
        #expect(error("max_download_size = -1")?.contains("max_download_size must be a size") == true)
    }

    @Test(arguments: [
        ("log_level = info\nbogus = 1\n", "/etc/sc.conf:2: unknown key 'bogus'; known keys: log_level"),
        ("max_client = 3", "/etc/sc.conf:1: unknown key 'max_client'; did you mean 'max_clients'?"),
        ("\n\nlog_level", "/etc/sc.conf:3: expected 'key = value', found 'log_level'"),
        (
            "log_level = loud",
            "/etc/sc.conf:1: log_level must be one of debug, info, notice, warning, error; got 'loud'"
        ),
        (
            "state_dir = relative/dir",
            "/etc/sc.conf:1: state_dir must be an absolute path (or start with ~/); got 'relative/dir'"
        ),
        ("max_clients = 0", "/etc/sc.conf:1: max_clients must be a whole number from 1 to 65536; got '0'"),
        ("max_request_bytes = 12Q", "/etc/sc.conf:1: max_request_bytes must be a size between 1K and 1G"),
        ("shutdown_timeout = soon", "/etc/sc.conf:1: shutdown_timeout must be a duration"),
        ("log_level = info\nlog_level = debug", "/etc/sc.conf:2: 'log_level' is already set on line 1"),
        ("socket_path = \"/tmp/x", "/etc/sc.conf:1: unbalanced double quote in the value of 'socket_path'"),
    ])
    func mistakesNameTheFileAndLine(text: String, expected: String) {
        let message = error(text)
        #expect(message?.hasPrefix(expected) == true, "got \(message ?? "no error")")
    }

    @Test func sizesAndDurations() {
        #expect(parseByteCount("1M") == 1 << 20)
        #expect(parseByteCount("1MiB") == 1 << 20)
        #expect(parseByteCount("64k") == 65536)
        #expect(parseByteCount("100") == 100)
        #expect(parseByteCount("-1") == nil)
        #expect(parseByteCount("99999999999999999G") == nil)
        #expect(parseDuration("10s") == .seconds(10))
        #expect(parseDuration("2m") == .seconds(120))
        #expect(parseDuration("250ms") == .milliseconds(250))
        #expect(parseDuration("3") == .seconds(3))
        #expect(parseDuration("-3s") == nil)
        #expect(parseDuration("nan") == nil)
    }

    /// `1e300d` trapped in the conversion to milliseconds, and `106751980000d` was kept and overflowed
    /// `date + age` at every start: durations longer than the documented maximum are refused.
    @Test func durationsHaveAMaximum() {
        #expect(longestDuration == .seconds(36_500 * 86_400))
        #expect(parseDuration("36500d") == longestDuration)
        #expect(parseDuration("5214w") == .seconds(5214 * 604_800))
        for text in ["36501d", "1e300d", "106751980000d", "1e300", "9223372036854775807ms", "5215w", "inf", "1e19"] {
            #expect(parseDuration(text) == nil, "\(text)")
        }
        #expect(throws: DurationProblem.longerThanMaximum) { try readDuration("106751980000d") }
        #expect(throws: DurationProblem.unreadable) { try readDuration("soon") }
    }

    @Test(arguments: [
        ("max_age = 1e300d", "/etc/sc.conf:1: max_age must be at most 36500d (100 years); got '1e300d'"),
        (
            "log_level = info\ndelete_older_than = 106751980000d",
            "/etc/sc.conf:2: delete_older_than must be at most 36500d (100 years); got '106751980000d'"
        ),
        ("delete_played_after = 99999999999w", "/etc/sc.conf:1: delete_played_after must be at most 36500d"),
        ("min_duration = 1e300", "/etc/sc.conf:1: min_duration must be at most 36500d"),
        ("shutdown_timeout = 1e300d", "/etc/sc.conf:1: shutdown_timeout must be a duration"),
        ("connect_timeout = 1e300d", "/etc/sc.conf:1: connect_timeout must be a duration"),
    ])
    func hugeDurationsAreMistakesThatNameTheLine(text: String, expected: String) {
        let message = error(text)
        #expect(message?.hasPrefix(expected) == true, "got \(message ?? "no error")")
    }

    @Test func suggestions() {
        #expect(closestMatch(to: "stauts", among: ["status", "ping"]) == "status")
        #expect(closestMatch(to: "zzzzzz", among: ["status", "ping"]) == nil)
        #expect(editDistance("kitten", "sitting") == 3)
    }
}

@Suite struct DaemonOptionsTests {
    @Test func flagsAreParsed() throws {
        let options = try DaemonOptions.parse([
            "--config", "/c.conf", "--state-dir=/s", "--socket", "/r/s.sock", "--log-level", "warning",
        ])
        #expect(options.action == .run)
        #expect(options.configPath == "/c.conf")
        #expect(options.stateDirectory == "/s")
        #expect(options.socketPath == "/r/s.sock")
        #expect(options.logLevel == .warning)
        #expect(try DaemonOptions.parse(["-h"]).action == .help)
        #expect(try DaemonOptions.parse(["--version"]).action == .version)
    }

    @Test(arguments: [
        (["--socket"], "Missing value for '--socket <path>'"),
        (["--log-level", "chatty"], "The value 'chatty' is invalid for '--log-level <level>'"),
        (["--stat-dir", "/x"], "Unknown option '--stat-dir'. Did you mean '--state-dir'?"),
        (["serve"], "Unexpected argument 'serve'"),
    ])
    func usageErrors(arguments: [String], expected: String) {
        #expect {
            _ = try DaemonOptions.parse(arguments)
        } throws: { error in
            (error as? DaemonUsageError)?.message.hasPrefix(expected) == true
        }
    }

    @Test func pathsFollowXDGAndFlagsWin() {
        let environment = [
            "HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "relative/ignored",
        ]
        let defaults = DaemonPaths.resolve(
            options: DaemonOptions(),
            configuration: DaemonConfiguration(),
            environment: environment,
            uid: 1000
        )
        #expect(defaults.configFile == "/home/u/.config/singlecast/singlecast.conf")
        #expect(defaults.stateDirectory == "/home/u/.local/state/singlecast")
        #expect(defaults.database == "/home/u/.local/state/singlecast/singlecast.sqlite3")
        #expect(defaults.downloadDirectory == "/home/u/.local/share/singlecast/episodes")
        #expect(defaults.socket == "/run/user/1000/singlecast/control.sock")
        #expect(defaults.socketDirectoryIsPrivate)

        var configuration = DaemonConfiguration()
        configuration.stateDirectory = "/from/config"
        configuration.socketPath = "/from/config.sock"
        var options = DaemonOptions()
        options.stateDirectory = "/from/flag"
        let chosen = DaemonPaths.resolve(
            options: options,
            configuration: configuration,
            environment: ["HOME": "/home/u"],
            uid: 1000
        )
        #expect(chosen.stateDirectory == "/from/flag")
        #expect(chosen.socket == "/from/config.sock")
        #expect(!chosen.socketDirectoryIsPrivate)

        let noRuntime = DaemonPaths.resolve(
            options: DaemonOptions(),
            configuration: DaemonConfiguration(),
            environment: ["HOME": "/home/u"],
            uid: 1000
        )
        #expect(noRuntime.socket == "/tmp/singlecast-1000/control.sock")
    }
}
