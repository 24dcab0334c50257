import Foundation
import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport
import Testing

@Suite struct FormattingTests {
    @Test(
        arguments: [
            (0, "0 B"), (1, "1 B"), (512, "512 B"), (999, "999 B"), (1000, "1.0 kB"), (1049, "1.0 kB"),
            (1050, "1.1 kB"), (12_400_000, "12.4 MB"), (12_449_999, "12.4 MB"), (999_949, "999.9 kB"),
            (999_950, "1.0 MB"), (1_100_000_000, "1.1 GB"), (1_234_567_890_123, "1.2 TB"),
            (Int64.max, "9.2 EB"), (-2048, "-2.0 kB"),
        ] as [(Int64, String)]
    )
    func byteCount(_ bytes: Int64, _ expected: String) {
        #expect(Formatting.byteCount(bytes) == expected)
    }

    @Test(
        arguments: [
            (0, "0s"), (0.9, "0s"), (42, "42s"), (60, "1m"), (423, "7m 3s"), (3600, "1h"),
            (7507, "2h 5m"), (86_400, "1d"), (274_359.8, "3d 4h"), (-5, "0s"), (.nan, "0s"),
        ] as [(Double, String)]
    )
    func duration(_ seconds: Double, _ expected: String) {
        #expect(Formatting.duration(seconds: seconds) == expected)
    }

    @Test func milliseconds() {
        #expect(Formatting.milliseconds(.microseconds(1234)) == "1.2 ms")
        #expect(Formatting.milliseconds(.microseconds(250)) == "0.3 ms")
        #expect(Formatting.milliseconds(.seconds(2)) == "2000.0 ms")
    }

    @Test func tableAlignsValuesAndStylesOnlyLabels() {
        let rows = [(label: "PID", value: "1"), (label: "Log level", value: "info")]
        #expect(Formatting.table(rows) == "PID        1\nLog level  info\n")
        #expect(
            Formatting.table(rows, style: TextStyle(isEnabled: true))
                == "\u{1B}[1mPID\u{1B}[0m        1\n\u{1B}[1mLog level\u{1B}[0m  info\n"
        )
    }

    @Test func colourNeedsATerminalAndAWillingEnvironment() {
        struct Terminal: TextOutput {
            func write(_ text: String) {}
            var isTerminal: Bool { true }
        }
        #expect(TextStyle(output: Terminal(), environment: ["TERM": "xterm"]).isEnabled)
        #expect(!TextStyle(output: Terminal(), environment: ["TERM": "dumb"]).isEnabled)
        #expect(!TextStyle(output: Terminal(), environment: ["NO_COLOR": "1"]).isEnabled)
        #expect(!TextStyle(output: CapturedOutput(), environment: ["TERM": "xterm"]).isEnabled)
    }

    static let status = StatusResult(
        version: "0.1.0",
        protocolVersion: 1,
        pid: 4242,
        startedAt: "2026-11-26T08:00:00Z",
        uptimeSeconds: 274_359.8,
        logLevel: "info",
        socketActivated: true,
        paths: .init(
            config: "/home/me/.config/singlecast/singlecast.conf",
            configLoaded: false,
            stateDirectory: "/home/me/.local/state/singlecast",
            database: "/home/me/.local/state/singlecast/singlecast.sqlite3",
            downloadDirectory: "/home/me/.local/share/singlecast/episodes",
            socket: "/run/user/1000/singlecast/control.sock"
        ),
        connections: .init(clients: 2, watchers: 1, requestsServed: 42, refused: 0),
        store: .init(
            schemaVersion: 3,
            sizeBytes: 12_400_000,
            sqliteVersion: "3.40.1",
            daemonStarts: 7,
            uncleanShutdowns: 1,
            previousRunClean: true
        ),
        lastReload: .init(at: "2026-11-29T12:00:00Z", ok: false, message: "unknown key 'foo' on line 3")
    )

    static let statusText = """
        Daemon              singlecastd 0.1.0 (protocol 1)
        PID                 4242
        Uptime              3d 4h (since \(Timestamps.text("2026-11-26T08:00:00Z", zone: .system)))
        Log level           info
        Config              /home/me/.config/singlecast/singlecast.conf (not present, embedded defaults)
        State directory     /home/me/.local/state/singlecast
        Database            /home/me/.local/state/singlecast/singlecast.sqlite3 (schema 3, 12.4 MB, SQLite 3.40.1)
        Download directory  /home/me/.local/share/singlecast/episodes
        Socket              /run/user/1000/singlecast/control.sock (socket-activated)
        Clients             2 connected, 1 watching, 0 refused
        Requests served     42
        Daemon starts       7, 1 unclean shutdown; the previous run shut down cleanly
        Last reload         \(Timestamps.text("2026-11-29T12:00:00Z", zone: .system)), failed, previous configuration kept: unknown key 'foo' on line 3

        """

    @Test func statusTable() {
        #expect(StatusCommand.render(Self.status) == Self.statusText)
        #expect(
            StatusCommand.render(Self.status, zone: .utc).contains(
                "Uptime              3d 4h (since 2026-11-26 08:00)\n"
            )
        )
    }

    /// The subscriptions at a glance: how many, which need a look, and when the next refresh comes.
    @Test func statusHasAPodcastsLine() {
        var status = Self.status
        let zone = LocalTimeZone.fixed(secondsFromUTC: 3600)
        status.podcasts = .init(subscribed: 12, failing: 1, gone: 2, nextRefreshAt: "2026-11-29T13:02:00Z")
        #expect(
            StatusCommand.render(status, zone: zone).contains(
                "\nPodcasts            12 subscribed, 1 failing, 2 gone; next refresh 2026-11-29 14:02\n"
            )
        )
        status.podcasts = .init(subscribed: 0, failing: 0, gone: 0, nextRefreshAt: nil)
        #expect(StatusCommand.render(status, zone: zone).contains("\nPodcasts            0 subscribed\n"))
    }

    @Test func statusOnFirstStartWithConfigAndNoReload() {
        var status = Self.status
        status.paths.configLoaded = true
        status.socketActivated = false
        status.lastReload = nil
        status.uptimeSeconds = 42
        status.store.daemonStarts = 1
        status.store.uncleanShutdowns = 0
        status.store.previousRunClean = nil
        let text = StatusCommand.render(status)
        #expect(text.contains("Config              /home/me/.config/singlecast/singlecast.conf\n"))
        #expect(text.contains("Socket              /run/user/1000/singlecast/control.sock\n"))
        #expect(text.contains("Uptime              42s (since"))
        #expect(text.contains("Daemon starts       1 (first start), 0 unclean shutdowns\n"))
        #expect(!text.contains("Last reload"))
    }

    @Test func versionTable() {
        let daemon = VersionResult(daemon: "0.1.0", protocolVersion: 1, sqlite: "3.40.1", libcurl: "7.88.1")
        #expect(
            VersionCommand.render(daemon) == """
                Client   singlecastctl \(SinglecastVersion.current) (protocol \(ProtocolVersion.current))
                Daemon   singlecastd 0.1.0 (protocol 1)
                SQLite   3.40.1
                libcurl  7.88.1

                """
        )
    }

    @Test func eventLines() {
        let params: JSONValue = .object(["at": .string("2026-11-29T12:00:00Z"), "message": .string("config reloaded")])
        #expect(
            WatchCommand.eventLine("daemon.reloaded", params)
                == "\(Timestamps.text("2026-11-29T12:00:00Z", zone: .system)) daemon.reloaded  config reloaded\n"
        )
        #expect(
            WatchCommand.eventLine("daemon.stopping", .object(["at": .string("2026-11-29T12:00:01Z")]))
                == "\(Timestamps.text("2026-11-29T12:00:01Z", zone: .system)) daemon.stopping\n"
        )
        let progress: JSONValue = .object(["at": .string("T"), "id": .integer(42), "bps": .integer(10)])
        #expect(
            WatchCommand.eventLine("download.progress", progress) == "T download.progress  {\"bps\":10,\"id\":42}\n"
        )
    }

    @Test func socketPathPrecedence() {
        let environment = ["SINGLECAST_SOCKET": "/env.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(GlobalOptions(socket: "/flag.sock").socketPath(environment: environment, userID: 1000) == "/flag.sock")
        #expect(GlobalOptions().socketPath(environment: environment, userID: 1000) == "/env.sock")
        #expect(
            GlobalOptions().socketPath(
                environment: ["SINGLECAST_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/7"],
                userID: 7
            )
                == "/run/user/7/singlecast/control.sock"
        )
        #expect(GlobalOptions().socketPath(environment: [:], userID: 1000) == "/tmp/singlecast-1000/control.sock")
    }
}

/// The humanized pieces of downloads: rates, columns, the `downloads` table and `show`.
@Suite struct DownloadFormattingTests {
    typealias Fixtures = DownloadFixtures

    @Test(
        arguments: [
            (0, "0 B/s"), (512, "512 B/s"), (1023.4, "1.0 kB/s"), (1024, "1.0 kB/s"), (512_000, "512.0 kB/s"),
            (1_048_524, "1.0 MB/s"), (1_258_291.2, "1.3 MB/s"), (2_097_152, "2.1 MB/s"), (5_347_737.6, "5.3 MB/s"),
            (3 * 1_073_741_824, "3.2 GB/s"), (-5, "0 B/s"), (.nan, "0 B/s"), (.infinity, "0 B/s"),
        ] as [(Double, String)]
    )
    func rate(_ bytesPerSecond: Double, _ expected: String) {
        #expect(Formatting.rate(bytesPerSecond) == expected)
    }

    @Test func columns() {
        #expect(Formatting.columns([["A", "BB", "C"], ["ccc", "d", ""]]) == "A    BB  C\nccc  d   \n")
        #expect(
            Formatting.columns([["ID", "NAME"], ["7", "x"]], style: TextStyle(isEnabled: true))
                == "\u{1B}[1mID\u{1B}[0m  \u{1B}[1mNAME\u{1B}[0m\n7   x\n"
        )
        #expect(Formatting.columns([]) == "")
    }

    @Test func downloadsTableInEveryState() {
        #expect(
            DownloadsCommand.render(Fixtures.all, now: Fixtures.now) == """
                ID  STATE                  PROGRESS  SIZE               SPEED       ETA     NAME
                12  active                 44%       12.4 MB / 27.6 MB  1.3 MB/s    3m 12s  episode-12.mp3
                13  active                 5.0 MB    5.0 MB / ?         524.3 kB/s  -       live-stream.mp3
                7   queued (retry in 42s)  7%        3.0 MB / 40.0 MB   -           -       episode-7.mp3
                8   queued                 -         -                  -           -       episode-8.mp3
                9   paused (disk full)     2%        1.0 MB / 50.0 MB   -           -       episode-9.mp3
                10  paused                 0%        999 B / 1.0 GB     -           -       episode-10.mp3
                3   failed (HTTP 404)      -         -                  -           -       episode-3.mp3
                1   completed              100%      27.6 MB            -           -       episode-1.mp3

                """
        )
        #expect(DownloadsCommand.render([], now: Fixtures.now) == "No downloads.\n")
        #expect(DownloadsCommand.render([], state: .paused, now: Fixtures.now) == "No paused downloads.\n")
    }

    @Test func downloadsShowPrioritiesOnceOneIsSet() {
        var urgent = Fixtures.all[3]
        urgent.priority = 10
        #expect(
            DownloadsCommand.render([urgent, Fixtures.all[4]], now: Fixtures.now) == """
                ID  PRIORITY  STATE               PROGRESS  SIZE              SPEED  ETA  NAME
                8   10        queued              -         -                 -      -    episode-8.mp3
                9   0         paused (disk full)  2%        1.0 MB / 50.0 MB  -      -    episode-9.mp3

                """
        )
    }

    @Test func states() {
        var download = Fixtures.retrying
        // A retry that came due and has not started waits for a transfer slot, not for its time.
        #expect(DownloadText.state(download, now: Fixtures.now + 50) == "queued (waiting for a slot)")
        #expect(
            ShowCommand.render(download, now: Fixtures.now + 50).contains("(due, waiting for a slot)"),
            "show says so too"
        )
        download.nextRetryAt = "2026-11-29T12:02:00.250Z"
        #expect(DownloadText.state(download, now: Fixtures.now) == "queued (retry in 2m)")
        download.nextRetryAt = "soon"
        #expect(DownloadText.state(download, now: Fixtures.now) == "queued (retry at soon)")
        download = Fixtures.failed
        download.lastError = DownloadErrorInfo(code: "too_many_attempts", message: "Gave up after 5 attempts")
        #expect(DownloadText.state(download, now: Fixtures.now) == "failed (too many attempts)")
        download.lastError = nil
        #expect(DownloadText.state(download, now: Fixtures.now) == "failed")
    }

    @Test func showRetryingFailedAndCompleted() {
        #expect(
            ShowCommand.render(Fixtures.retrying, now: Fixtures.now) == """
                ID           7
                URL          https://feeds.example.com/show/7.mp3
                File         /home/me/Podcasts/episode-7.mp3
                State        queued (retry in 42s)
                Progress     7%
                Size         3.0 MB / 40.0 MB
                Attempts     2
                Last error   Connection reset by peer (network)
                Next retry   \(Timestamps.text("2026-11-29T12:00:42Z", zone: .system)) (in 42s)
                Added        \(Timestamps.text("2026-11-29T11:00:00Z", zone: .system))
                Priority     0, position 7
                Headers      none
                Credentials  no

                """
        )
        #expect(
            ShowCommand.render(Fixtures.failed, now: Fixtures.now) == """
                ID           3
                URL          https://feeds.example.com/show/3.mp3
                File         /home/me/Podcasts/episode-3.mp3
                State        failed (HTTP 404)
                Progress     -
                Size         -
                Attempts     1
                Last error   Not Found (http_status, HTTP 404)
                Added        \(Timestamps.text("2026-11-29T11:00:00Z", zone: .system))
                Priority     0, position 3
                Headers      none
                Credentials  no

                """
        )
        var completed = Fixtures.completed
        completed.finalURL = completed.url
        #expect(
            ShowCommand.render(completed, now: Fixtures.now) == """
                ID           1
                URL          https://feeds.example.com/show/1.mp3
                File         /home/me/Podcasts/episode-1.mp3
                State        completed
                Progress     100%
                Size         27.6 MB
                Attempts     1
                Added        \(Timestamps.text("2026-11-29T11:00:00Z", zone: .system))
                Completed    \(Timestamps.text("2026-11-29T11:30:00Z", zone: .system))
                Priority     0, position 1
                Headers      none
                Credentials  no

                """
        )
    }
}
