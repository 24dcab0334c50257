import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// The download commands against ``TestServer``: the exact request line each sends and how each renders the
/// canned answer.
@Suite struct DownloadCommandTests {
    /// Runs `arguments` against a server answering `reply`; returns the run and the request line it read.
    func exchange(_ arguments: [String], reply: [String]) async throws -> (run: CLIRun, request: String) {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(reply))
            let run = await runCLI(arguments + ["--socket", server.path])
            return (run, try server.requestLine())
        }
    }

    func exchange(_ arguments: [String], result: some Encodable) async throws -> (run: CLIRun, request: String) {
        try await exchange(arguments, reply: [DownloadFixtures.resultLine(result)])
    }

    static func request(_ method: String, _ params: String? = nil) -> String {
        #"{"id":1,"jsonrpc":"2.0","method":""# + method + "\"" + (params.map { #","params":"# + $0 } ?? "") + "}"
    }

    static let enqueueResult = EnqueueResult(downloads: [
        .init(id: 12, url: "https://a.example/1.mp3", existing: false, file: "/music/1.mp3"),
        .init(id: 7, url: "https://a.example/2.mp3", existing: true, file: "/music/2.mp3"),
    ])

    // MARK: enqueue

    @Test func enqueueSendsEverythingAndListsEachURL() async throws {
        let cwd = FileManager.default.currentDirectoryPath
        let (run, request) = try await exchange(
            [
                "enqueue", "https://a.example/1.mp3", "https://a.example/2.mp3", "--to", "./music/", "--header",
                "Authorization: Bearer t0k", "--header", "X-A:1", "--priority", "-2",
            ],
            result: Self.enqueueResult
        )
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(
            request
                == Self.request(
                    "enqueue",
                    #"{"directory":"\#(cwd == "/" ? "" : cwd)/music","headers":["Authorization: Bearer t0k","X-A:1"],"#
                        + #""priority":-2,"urls":["https://a.example/1.mp3","https://a.example/2.mp3"]}"#
                )
        )
        #expect(
            run.stdout == """
                Queued 12  https://a.example/1.mp3  → /music/1.mp3
                Already queued 7  https://a.example/2.mp3

                """
        )
    }

    @Test func enqueueMinimalAndJSON() async throws {
        let (run, request) = try await exchange(
            ["enqueue", "--json", "https://a.example/1.mp3", "--name", "first.mp3", "--to", "/srv/pod"],
            result: Self.enqueueResult
        )
        #expect(run.status == 0)
        #expect(
            request
                == Self.request(
                    "enqueue",
                    #"{"directory":"/srv/pod","name":"first.mp3","urls":["https://a.example/1.mp3"]}"#
                )
        )
        #expect(run.stdout == String(decoding: try WireCoding.line(for: Self.enqueueResult), as: UTF8.self))
    }

    @Test(arguments: [
        ("music", "/home/me", "/home/me/music"), ("./a//b/", "/x", "/x/a/b"), ("/abs/./dir", "/x", "/abs/dir"),
        (".", "/x", "/x"), ("../up", "/x/y", "/x/y/../up"), ("/", "/x", "/"),
    ])
    func absolutePaths(_ path: String, _ cwd: String, _ expected: String) {
        #expect(Paths.absolute(path, currentDirectory: cwd) == expected)
    }

    /// A password file with `mode`, holding `contents`.
    func withPasswordFile<T>(
        _ contents: String,
        mode: mode_t = 0o600,
        _ body: (String) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            let path = directory + "/password"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
            #expect(chmod(path, mode) == 0)
            return try await body(path)
        }
    }

    @Test func passwordIsSentButNeverShown() async throws {
        try await withPasswordFile("s3cr3t-Pa55\nsecond line\n") { file in
            for json in [false, true] {
                let (run, request) = try await exchange(
                    ["enqueue", "https://a.example/1.mp3", "--user", "ada", "--password-file", file]
                        + (json ? ["--json"] : []),
                    result: Self.enqueueResult
                )
                #expect(run.status == 0)
                #expect(run.stderr == "")
                #expect(
                    request
                        == Self.request(
                            "enqueue",
                            #"{"password":"s3cr3t-Pa55","urls":["https://a.example/1.mp3"],"user":"ada"}"#
                        )
                )
                #expect(!run.stdout.contains("s3cr3t"))
            }
        }
    }

    @Test func passwordFileWithCRLFAndNoFinalNewline() throws {
        for (contents, password) in [("pa ss\r\nnext\n", "pa ss"), ("last", "last")] {
            try withPasswordFileSync(contents) { path throws in
                let file = try PasswordFile.read(path)
                #expect(file.password == password)
                #expect(!file.isExposed)
            }
        }
    }

    func withPasswordFileSync(_ contents: String, _ body: (String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "sc-cli-password-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
        #expect(chmod(path, 0o600) == 0)
        try body(path)
    }

    @Test func readablePasswordFileWarns() async throws {
        try await withPasswordFile("hunter2\n", mode: 0o644) { file in
            let (run, request) = try await exchange(
                ["enqueue", "https://a.example/1.mp3", "--user", "ada", "--password-file", file],
                result: Self.enqueueResult
            )
            #expect(run.status == 0)
            #expect(
                run.stderr
                    == "Warning: other users can read the password file '\(file)'; restrict it with 'chmod 600 \(file)'.\n"
            )
            #expect(request.contains(#""password":"hunter2""#))
            #expect(!run.stdout.contains("hunter2"))
        }
    }

    @Test func unreadablePasswordFileFailsBeforeConnecting() async throws {
        try await withTemporaryDirectory { directory in
            // Nothing listens at this socket: an attempt to connect would exit with 69.
            let socket = ["--socket", directory + "/none.sock"]
            let missing = directory + "/missing"
            var run = await runCLI(
                ["enqueue", "https://a.example/1.mp3", "--user", "ada", "--password-file", missing] + socket
            )
            #expect(run.status == 1)
            #expect(run.stdout == "")
            #expect(run.stderr == "Error: cannot read the password file '\(missing)': No such file or directory\n")

            run = await runCLI(
                ["enqueue", "https://a.example/1.mp3", "--user", "ada", "--password-file", directory] + socket
            )
            #expect(run.status == 1)
            #expect(run.stderr == "Error: cannot read the password file '\(directory)': Is a directory\n")

            let empty = directory + "/empty"
            #expect(FileManager.default.createFile(atPath: empty, contents: Data("\nsecret\n".utf8)))
            run = await runCLI(
                ["enqueue", "https://a.example/1.mp3", "--user", "ada", "--password-file", empty] + socket
            )
            #expect(run.status == 1)
            #expect(run.stderr == "Error: cannot read the password file '\(empty)': the first line is empty\n")
            #expect(!run.stderr.contains("secret"))
        }
    }

    // MARK: downloads and show

    @Test func downloadsTable() async throws {
        let list = DownloadsResult(downloads: [DownloadFixtures.active, DownloadFixtures.completed])
        let (run, request) = try await exchange(["downloads"], result: list)
        #expect(run.status == 0)
        #expect(request == Self.request("downloads", "{}"))
        #expect(
            run.stdout == """
                ID  STATE      PROGRESS  SIZE               SPEED     ETA     NAME
                12  active     44%       12.4 MB / 27.6 MB  1.3 MB/s  3m 12s  episode-12.mp3
                1   completed  100%      27.6 MB            -         -       episode-1.mp3

                """
        )
    }

    @Test func downloadsFilteredEmptyAndJSON() async throws {
        var (run, request) = try await exchange(
            ["downloads", "--state", "failed"],
            result: DownloadsResult(downloads: [])
        )
        #expect(request == Self.request("downloads", #"{"state":"failed"}"#))
        #expect(run.stdout == "No failed downloads.\n")
        (run, request) = try await exchange(["downloads"], result: DownloadsResult(downloads: []))
        #expect(run.stdout == "No downloads.\n")
        let list = DownloadsResult(downloads: [DownloadFixtures.failed])
        (run, request) = try await exchange(["downloads", "--json"], result: list)
        #expect(run.stdout == String(decoding: try WireCoding.line(for: list), as: UTF8.self))
    }

    @Test func showOneDownload() async throws {
        var download = DownloadFixtures.active
        download.finalURL = "https://cdn.example.net/x/12.mp3"
        download.headerNames = ["Authorization", "X-Client"]
        download.hasCredentials = true
        download.priority = 5
        let (run, request) = try await exchange(["show", "12"], result: download)
        #expect(run.status == 0)
        #expect(request == Self.request("show", #"{"id":12}"#))
        #expect(
            run.stdout == """
                ID           12
                URL          https://feeds.example.com/show/12.mp3
                Final URL    https://cdn.example.net/x/12.mp3
                File         /home/me/Podcasts/episode-12.mp3
                State        active
                Progress     44%
                Size         12.4 MB / 27.6 MB
                Speed        1.3 MB/s
                ETA          3m 12s
                Attempts     1
                Added        \(Timestamps.text("2026-11-29T11:00:00Z", zone: .system))
                Priority     5, position 12
                Headers      Authorization, X-Client
                Credentials  yes (hidden)

                """
        )
    }

    /// A download a command left as it is comes with the daemon's reason.
    @Test func noOpsSayWhyAndWhatToUseInstead() {
        let completed = ChangedResult.Unchanged(
            id: 1,
            state: "completed",
            reason: "download 1 is completed; use redownload"
        )
        #expect(
            ResumeCommand.render(ChangedResult(changed: [], unchanged: [completed]))
                == "Nothing to resume: download 1 is completed; use redownload.\n"
        )
        let paused = ChangedResult.Unchanged(id: 5, state: "paused", reason: "download 5 is paused already; use resume")
        #expect(
            PauseCommand.render(ChangedResult(changed: [3], unchanged: [paused]))
                == "Paused 3.\nNothing to pause: download 5 is paused already; use resume.\n"
        )
    }

    @Test func daemonErrorsArePrinted() async throws {
        let error = RPCErrorResponse(
            id: .integer(1),
            error: RPCError(code: -32010, message: "No download has ID 99.", reason: "not_found")
        )
        let line = String(decoding: WireCoding.errorLine(error), as: UTF8.self).trimmingCharacters(in: .newlines)
        let (run, _) = try await exchange(["show", "99"], reply: [line])
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(run.stderr == "Error: No download has ID 99.\n")
    }

    @Test func unexpectedResultShapeIsAnInvalidReply() async throws {
        let (run, _) = try await exchange(["pause", "1"], reply: [#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#])
        #expect(run.status == 1)
        #expect(
            run.stderr.hasPrefix(
                "Error: singlecastd sent an invalid reply: the result of 'pause' has an unexpected shape"
            )
        )
    }

    // MARK: changing downloads

    struct ChangeCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var params: String
        var changed: [Int64]
        /// `move`: the priority the move gave.
        var priority: Int? = nil
        /// `resume`: those the metered network keeps paused.
        var held: [Int64]? = nil
        var stdout: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let changeCases: [ChangeCase] = [
        ChangeCase(
            arguments: ["pause", "3", "4", "3"],
            params: #"{"ids":[3,4]}"#,
            changed: [3, 4],
            stdout: "Paused 3, 4.\n"
        ),
        ChangeCase(
            arguments: ["pause", "--all"],
            params: #"{"all":true}"#,
            changed: [],
            stdout: "Nothing to pause.\n"
        ),
        ChangeCase(arguments: ["resume", "5"], params: #"{"ids":[5]}"#, changed: [5], stdout: "Resumed 5.\n"),
        ChangeCase(
            arguments: ["resume", "--all"],
            params: #"{"all":true}"#,
            changed: [],
            stdout: "Nothing to resume.\n"
        ),
        ChangeCase(
            arguments: ["retry", "--all"],
            params: #"{"all":true}"#,
            changed: [3, 9],
            stdout: "Queued again: 3, 9.\n"
        ),
        ChangeCase(arguments: ["retry", "3"], params: #"{"ids":[3]}"#, changed: [], stdout: "Nothing to retry.\n"),
        ChangeCase(arguments: ["cancel", "3"], params: #"{"ids":[3]}"#, changed: [3], stdout: "Cancelled 3.\n"),
        ChangeCase(
            arguments: ["cancel", "--delete-partial", "3", "8"],
            params: #"{"delete_partial":true,"ids":[3,8]}"#,
            changed: [3, 8],
            stdout: "Cancelled 3, 8.\n"
        ),
        ChangeCase(
            arguments: ["move", "3", "--top"],
            params: #"{"id":3,"top":true}"#,
            changed: [3],
            stdout: "Moved 3 to the top.\n"
        ),
        ChangeCase(
            arguments: ["move", "3", "--bottom"],
            params: #"{"bottom":true,"id":3}"#,
            changed: [3],
            stdout: "Moved 3 to the bottom.\n"
        ),
        ChangeCase(
            arguments: ["move", "3", "--before", "5"],
            params: #"{"before":5,"id":3}"#,
            changed: [3],
            stdout: "Moved 3 before 5.\n"
        ),
        ChangeCase(
            arguments: ["move", "3", "--top"],
            params: #"{"id":3,"top":true}"#,
            changed: [],
            stdout: "Nothing to move.\n"
        ),
        ChangeCase(
            arguments: ["move", "3", "--before", "5"],
            params: #"{"before":5,"id":3}"#,
            changed: [3],
            priority: 10,
            stdout: "Moved 3 before 5.\nIts priority is now 10.\n"
        ),
        ChangeCase(
            arguments: ["resume", "3"],
            params: #"{"ids":[3]}"#,
            changed: [3],
            held: [3],
            stdout: "Not started: 3 wait for the download gate: the network is metered (metered = pause).\n"
                + "Start them anyway with 'singlecastctl resume --now 3', or change the setting in the configuration.\n"
        ),
        ChangeCase(
            arguments: ["resume", "3", "--now"],
            params: #"{"ids":[3],"now":true}"#,
            changed: [3],
            stdout: "Resumed 3.\n"
        ),
        ChangeCase(
            arguments: ["clear", "--completed", "--failed"],
            params: #"{"completed":true,"failed":true}"#,
            changed: [1, 2, 3, 4, 5],
            stdout: "Cleared 5 downloads.\n"
        ),
        ChangeCase(
            arguments: ["clear", "--failed"],
            params: #"{"failed":true}"#,
            changed: [9],
            stdout: "Cleared 1 download.\n"
        ),
        ChangeCase(
            arguments: ["clear", "--failed", "--delete-partial"],
            params: #"{"delete_partial":true,"failed":true}"#,
            changed: [9],
            stdout: "Cleared 1 download.\n"
        ),
        ChangeCase(
            arguments: ["clear", "--completed"],
            params: #"{"completed":true}"#,
            changed: [],
            stdout: "Nothing to clear.\n"
        ),
    ]

    @Test(arguments: changeCases)
    func change(_ testCase: ChangeCase) async throws {
        let result = ChangedResult(
            changed: testCase.changed,
            held: testCase.held,
            gate: testCase.held.map { _ in "metered" },
            priority: testCase.priority
        )
        let (run, request) = try await exchange(testCase.arguments, result: result)
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(request == Self.request(testCase.arguments[0], testCase.params))
        #expect(run.stdout == testCase.stdout)
    }

    @Test func changeJSONIsTheResult() async throws {
        let (run, _) = try await exchange(["--json", "cancel", "3"], result: ChangedResult(changed: [3]))
        #expect(run.stdout == #"{"changed":[3]}"# + "\n")
    }

    // MARK: limit

    @Test(arguments: [
        ("2M", LimitCommand.Rate.bytesPerSecond(2_097_152)), ("500K", .bytesPerSecond(512_000)),
        ("500k", .bytesPerSecond(512_000)), ("1.5M", .bytesPerSecond(1_572_864)),
        ("1g", .bytesPerSecond(1_073_741_824)),
        ("2048", .bytesPerSecond(2048)), ("0.5K", .bytesPerSecond(512)), ("0", .unlimited), ("0M", .unlimited),
        ("off", .unlimited), ("none", .unlimited), ("OFF", .unlimited),
    ])
    func rateParses(_ text: String, _ expected: LimitCommand.Rate) {
        #expect(LimitCommand.parseRate(text) == expected)
    }

    @Test(arguments: [
        "", "fast", "M", "-1", "1.2.3", "1e3", "2T", "2MB", ".", "nan", "inf", "0.1", " 2M", "9000000000G",
    ])
    func rateRejects(_ text: String) {
        #expect(LimitCommand.parseRate(text) == nil)
    }

    @Test func limitShowsAndSets() async throws {
        var (run, request) = try await exchange(["limit"], result: LimitParams(rate: 2_097_152))
        #expect(request == Self.request("limit"))
        // Limits are read in 1024-based units, as in the configuration, and shown in the decimal units of speeds.
        #expect(run.stdout == "Speed limit: 2.1 MB/s\n")

        (run, request) = try await exchange(["limit", "1.5M"], result: LimitParams(rate: 1_572_864))
        #expect(request == Self.request("limit", #"{"rate":1572864}"#))
        #expect(run.stdout == "Speed limit: 1.6 MB/s\n")

        // Unlimited goes out as 0, which cannot be mistaken for a request without a rate.
        (run, request) = try await exchange(["limit", "off"], result: LimitParams(rate: nil))
        #expect(request == Self.request("limit", #"{"rate":0}"#))
        #expect(run.stdout == "Speed limit: none\n")

        // `default` forgets the limit set with `limit`: the configured one applies again.
        (run, request) = try await exchange(["limit", "default"], result: LimitParams(rate: 2_097_152))
        #expect(request == Self.request("limit", #"{"reset":true}"#))
        #expect(run.stdout == "Speed limit: 2.1 MB/s\n")

        (run, _) = try await exchange(["limit", "none"], reply: [#"{"jsonrpc":"2.0","id":1,"result":{"rate":0}}"#])
        #expect(run.stdout == "Speed limit: none\n")

        (run, _) = try await exchange(
            ["limit", "--json"],
            reply: [#"{"jsonrpc":"2.0","id":1,"result":{"rate":null}}"#]
        )
        #expect(run.stdout == #"{"rate":null}"# + "\n")
    }

    // MARK: status

    static func statusWithDownloads() throws -> String {
        guard case .object(var result) = try WireCoding.value(of: FormattingTests.status) else {
            throw ExitCode.failure
        }
        result["downloads"] = try WireCoding.value(
            of: DownloadCounts(
                active: 2,
                queued: 7,
                paused: 1,
                failed: 0,
                completed: 12,
                rate: 5_347_737.6,
                rateLimit: 2_097_152
            )
        )
        return DownloadFixtures.resultLine(JSONValue.object(result))
    }

    @Test func statusShowsDownloadCountsWhenTheDaemonSendsThem() async throws {
        let (run, _) = try await exchange(["status"], reply: [try Self.statusWithDownloads()])
        #expect(run.status == 0)
        #expect(
            run.stdout.contains(
                "Download directory  /home/me/.local/share/singlecast/episodes\n"
                    + "Downloads           2 active (5.3 MB/s), 7 queued, 1 paused, 0 failed, 12 completed; "
                    + "limit 2.1 MB/s\nSocket"
            )
        )
        #expect(run.stdout.split(separator: "\n").count == FormattingTests.statusText.split(separator: "\n").count + 1)
    }

    @Test func downloadsSummary() {
        #expect(
            StatusCommand.downloadsSummary(
                DownloadCounts(active: 0, queued: 1, paused: 0, failed: 2, completed: 3, rate: 0, rateLimit: nil)
            ) == "0 active, 1 queued, 0 paused, 2 failed, 3 completed; no speed limit"
        )
        #expect(StatusCommand.downloadCounts(in: .object(["downloads": .null])) == nil)
        #expect(StatusCommand.downloadCounts(in: .object(["downloads": .string("many")])) == nil)
    }

    /// Output that says it is a terminal.
    final class TerminalOutput: TextOutput, @unchecked Sendable {
        let captured = CapturedOutput()
        func write(_ text: String) { captured.write(text) }
        var isTerminal: Bool { true }
    }

    func statusWatch(_ arguments: [String], stdout: some TextOutput, environment: [String: String] = [:]) async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(
                directory: directory,
                behavior: .reply([EndToEndTests.statusLine]),
                connections: 2
            )
            guard
                case .run(let path, let parsed) = CommandParser.parse(
                    ["status", "--watch", "--socket", server.path] + arguments,
                    root: CLI.root
                )
            else {
                Issue.record("status --watch did not parse")
                return
            }
            let command = try #require(try path[path.count - 1].init(parsed) as? StatusCommand)
            #expect(command.watch)
            let context = CommandContext(
                environment: environment,
                stdout: stdout,
                stderr: CapturedOutput(),
                style: .plain,
                responseTimeout: .seconds(10),
                userID: 1000
            )
            try await command.watchLoop(context, interval: .milliseconds(10), frames: 2)
            #expect(server.requests().count == 2)
        }
    }

    @Test func statusWatchRedrawsOnATerminal() async throws {
        let terminal = TerminalOutput()
        try await statusWatch([], stdout: terminal, environment: ["TERM": "xterm"])
        let frame = "\u{1B}[H\u{1B}[2J" + FormattingTests.statusText
        #expect(terminal.captured.text == frame + frame)
    }

    @Test func statusWatchAppendsFramesElsewhere() async throws {
        let plain = CapturedOutput()
        try await statusWatch([], stdout: plain)
        #expect(plain.text == FormattingTests.statusText + "\n" + FormattingTests.statusText)

        let dumb = TerminalOutput()
        try await statusWatch([], stdout: dumb, environment: ["TERM": "dumb"])
        #expect(dumb.captured.text == FormattingTests.statusText + "\n" + FormattingTests.statusText)

        let json = CapturedOutput()
        try await statusWatch(["--json"], stdout: json)
        let lines = json.text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.hasPrefix(#"{"connections":"#) })
    }

    // MARK: watch

    @Test func watchPrintsDownloadEventsAsPlainLines() async throws {
        var progress = DownloadFixtures.active
        var completed = DownloadFixtures.active
        completed.state = .completed
        completed.bytesDone = 27_600_000
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["daemon","downloads"]}}"#,
            DownloadFixtures.eventLine(.added, DownloadFixtures.queued),
            DownloadFixtures.eventLine(.started, DownloadFixtures.active),
            DownloadFixtures.eventLine(.progress, progress),
            {
                progress.bytesDone = 13_000_000
                return DownloadFixtures.eventLine(.progress, progress)
            }(),
            DownloadFixtures.eventLine(.completed, completed),
            // Params this client cannot read as a download: printed like any unknown event.
            #"{"jsonrpc":"2.0","method":"download.progress","params":{"at":"2026-11-29T12:04:00Z","odd":true}}"#,
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, request) = try await exchange(["watch"], reply: lines)
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(request == Self.request("watch"))
        #expect(
            run.stdout == """
                8  added episode-8.mp3  https://feeds.example.com/show/8.mp3
                12  started episode-12.mp3  27.6 MB
                12  progress 44%  1.3 MB/s
                12  completed /home/me/Podcasts/episode-12.mp3  27.6 MB
                \(Timestamps.text("2026-11-29T12:04:00Z", zone: .system)) download.progress  {"odd":true}
                \(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping

                """
        )
    }

    @Test func watchOnATerminalDrawsProgressBars() async throws {
        var completed = DownloadFixtures.active
        completed.state = .completed
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["daemon","downloads"]}}"#,
            DownloadFixtures.eventLine(.started, DownloadFixtures.active),
            DownloadFixtures.eventLine(.progress, ProgressRendererTests.active12Later),
            DownloadFixtures.eventLine(.completed, completed),
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(lines))
            let stdout = TerminalOutput()
            let stderr = CapturedOutput()
            let status = await CLI.main(
                arguments: ["watch", "--socket", server.path],
                environment: ["TERM": "xterm-256color"],
                stdout: stdout,
                stderr: stderr,
                userID: 1000
            )
            #expect(stderr.text == "")
            #expect(status == 0)
            let (up, clear) = ("\u{1B}[1A", "\u{1B}[2K")
            #expect(
                stdout.captured.text
                    == clear + ProgressRendererTests.line12 + "\n"
                    + up + clear + ProgressRendererTests.line12Later + "\n"
                    + up + clear + "12  completed /home/me/Podcasts/episode-12.mp3  27.6 MB\n"
                    + clear + "\(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping\n"
            )
        }
    }

    @Test func watchJSONPrintsDownloadEventsRaw() async throws {
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["downloads"]}}"#,
            DownloadFixtures.eventLine(.progress, DownloadFixtures.active),
            DownloadFixtures.eventLine(.progress, DownloadFixtures.active),
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, request) = try await exchange(["watch", "--json", "--topic", "downloads"], reply: lines)
        #expect(run.status == 0)
        #expect(request == Self.request("watch", #"{"topics":["downloads"]}"#))
        #expect(run.stdout == lines.dropFirst().map { $0 + "\n" }.joined())
    }
}
