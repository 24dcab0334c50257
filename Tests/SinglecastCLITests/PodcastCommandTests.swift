import Foundation
import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport
import Testing

/// The podcast commands against ``TestServer``: the exact request line each sends, how each renders the canned
/// answer, `--json` passthrough and exit statuses.
@Suite struct PodcastCommandTests {
    typealias Fixtures = PodcastFixtures

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
        DownloadCommandTests.request(method, params)
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try WireCoding.line(for: value), as: UTF8.self)
    }

    // MARK: subscribe

    @Test func subscribeSendsTheURLAndPolicyAndListsTheQueuedDownloads() async throws {
        let result = SubscribeResult(podcast: Fixtures.daily, existing: false, queued: [41, 42, 43])
        let (run, request) = try await exchange(
            ["subscribe", "https://feeds.example.com/daily.xml", "--auto", "Latest:3", "--keep", "5"],
            result: result
        )
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(
            request
                == Self.request(
                    "subscribe",
                    #"{"auto_download":"latest:3","keep":5,"url":"https://feeds.example.com/daily.xml"}"#
                )
        )
        #expect(
            run.stdout == """
                Subscribed 3  The Daily  (120 episodes, auto-download latest:3, keep 5)
                Queued downloads 41, 42, 43
                List its episodes with 'singlecastctl episodes 3'.

                """
        )
    }

    @Test func subscribeByITunesIDToAFeedAlreadySubscribed() async throws {
        let podcast = Fixtures.podcast(7, "Hard Fork", episodes: 1)
        let result = SubscribeResult(podcast: podcast, existing: true, queued: [])
        for arguments in [["--itunes-id", "1200361736"], ["--itunes-id=1200361736", "--keep", "0"]] {
            let (run, request) = try await exchange(["subscribe"] + arguments, result: result)
            #expect(run.status == 0)
            let keep = arguments.count == 3 ? #","keep":0"# : ""
            #expect(request == Self.request("subscribe", #"{"itunes_id":1200361736"# + keep + "}"))
            #expect(run.stdout == "Already subscribed 7  Hard Fork  (1 episode, auto-download off, keep all)\n")
        }
    }

    @Test func subscribeJSONIsTheResult() async throws {
        let result = SubscribeResult(podcast: Fixtures.daily, existing: false, queued: [])
        let (run, _) = try await exchange(
            ["--json", "subscribe", "https://feeds.example.com/daily.xml"],
            result: result
        )
        #expect(run.status == 0)
        #expect(run.stdout == (try Self.json(result)))
    }

    @Test func subscribeSendsThePasswordButNeverShowsIt() async throws {
        try await DownloadCommandTests().withPasswordFile("Pa55 w0rd\r\nsecond line\n") { file in
            let (run, request) = try await exchange(
                ["subscribe", "https://feeds.example.com/p.xml", "--user", "ada", "--password-file", file],
                result: SubscribeResult(podcast: Fixtures.daily, existing: false, queued: [])
            )
            #expect(run.status == 0)
            #expect(run.stderr == "")
            #expect(
                request
                    == Self.request(
                        "subscribe",
                        #"{"password":"Pa55 w0rd","url":"https://feeds.example.com/p.xml","user":"ada"}"#
                    )
            )
            #expect(!run.stdout.contains("Pa55"))
        }
    }

    @Test func subscribeWarnsAboutAPasswordFileOthersCanRead() async throws {
        try await DownloadCommandTests().withPasswordFile("hunter2\n", mode: 0o640) { file in
            let (run, request) = try await exchange(
                ["subscribe", "https://feeds.example.com/p.xml", "--user", "ada", "--password-file", file],
                result: SubscribeResult(podcast: Fixtures.daily, existing: false, queued: [])
            )
            #expect(run.status == 0)
            #expect(run.stderr == PasswordFile.exposedWarning(file))
            #expect(request.contains(#""password":"hunter2""#))
        }
    }

    @Test func unreadablePasswordFileFailsBeforeConnecting() async throws {
        try await withTemporaryDirectory { directory in
            let run = await runCLI(
                ["subscribe", "https://feeds.example.com/p.xml", "--user", "ada", "--password-file", directory + "/x"],
                environment: ["SINGLECAST_SOCKET": directory + "/none.sock"]
            )
            #expect(run.status == 1)
            #expect(
                run.stderr
                    == "Error: cannot read the password file '\(directory)/x': No such file or directory\n"
            )
        }
    }

    @Test func passwordFromStandardInput() throws {
        guard
            case .run(let path, let parsed) = CommandParser.parse(
                ["subscribe", "https://feeds.example.com/p.xml", "--user", "ada", "--password-file", "-"],
                root: CLI.root
            )
        else {
            Issue.record("subscribe did not parse")
            return
        }
        let command = try #require(try path[path.count - 1].init(parsed) as? SubscribeCommand)
        let input = try pipeReading("from a pipe\r\nignored\n")
        defer { close(input) }
        let warnings = CapturedOutput()
        let params = try command.params(standardInput: input, warnings: warnings)
        #expect(params == SubscribeParams(url: "https://feeds.example.com/p.xml", user: "ada", password: "from a pipe"))
        #expect(warnings.text == "")
    }

    // MARK: unsubscribe

    @Test func unsubscribeByTitlePrefixDeletingFiles() async throws {
        let result = UnsubscribeResult(
            podcast: Fixtures.daily,
            cancelledDownloads: [41, 42],
            deletedFiles: ["/music/The Daily/a.mp3", "/music/The Daily/b.mp3"]
        )
        let (run, request) = try await exchange(["unsubscribe", "the daily", "--delete-files"], result: result)
        #expect(run.status == 0)
        #expect(request == Self.request("unsubscribe", #"{"delete_files":true,"podcast":"the daily"}"#))
        #expect(
            run.stdout == """
                Unsubscribed 3  The Daily
                Cancelled downloads 41, 42
                Deleted 2 files

                """
        )
    }

    @Test func unsubscribeKeepingFiles() async throws {
        let result = UnsubscribeResult(podcast: Fixtures.gone, cancelledDownloads: [], deletedFiles: [])
        let (run, request) = try await exchange(["unsubscribe", "4"], result: result)
        #expect(request == Self.request("unsubscribe", #"{"podcast":"4"}"#))
        #expect(run.stdout == "Unsubscribed 4  Old Show\n")
    }

    @Test func unknownPodcastIsTheDaemonsMessage() async throws {
        let error = RPCErrorResponse(
            id: .integer(1),
            error: RPCError(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: no podcast matches 'nope'; see singlecastctl podcasts.",
                reason: "unknown_podcast",
                details: ["podcast": "nope"]
            )
        )
        let line = String(decoding: WireCoding.errorLine(error), as: UTF8.self).trimmingCharacters(in: .newlines)
        for arguments in [["unsubscribe", "nope"], ["episodes", "nope"], ["refresh", "nope"]] {
            let (run, _) = try await exchange(arguments, reply: [line])
            #expect(run.status == 1)
            #expect(run.stdout == "")
            #expect(run.stderr == "Error: no podcast matches 'nope'; see singlecastctl podcasts.\n")
        }
    }

    // MARK: podcasts

    static let podcastsTable = """
        ID  EPISODES  NEW  AUTO      KEEP  REFRESHED         TITLE
        3   120       2    latest:3  5     2026-11-29 11:58  The Daily
        4   87        0    off       all   2026-11-28 06:00  Old Show [gone]
        5   1         1    all-new   all   never             Flaky Feed [error]

        [gone] 4  Old Show: the feed is gone (HTTP 410); it is checked again once a day
        [error] 5  Flaky Feed: the server answered HTTP 500 for https://feeds.example.com/5.xml

        """

    @Test func podcastsTableWithMarkers() {
        let text = PodcastsCommand.render([Fixtures.daily, Fixtures.gone, Fixtures.failing], timeZone: Fixtures.utc)
        #expect(text == Self.podcastsTable)
    }

    @Test func podcastsGoneWithoutAnErrorMessage() {
        var gone = Fixtures.gone
        gone.lastError = nil
        #expect(
            PodcastsCommand.render([gone], timeZone: Fixtures.utc).hasSuffix(
                "\n[gone] 4  Old Show: the feed is gone (HTTP 410); it is checked again once a day\n"
            )
        )
    }

    @Test func podcastsAskTheDaemonAndPrintInLocalTime() async throws {
        let list = PodcastsResult(podcasts: [Fixtures.daily, Fixtures.gone, Fixtures.failing])
        let (run, request) = try await exchange(["podcasts"], result: list)
        #expect(run.status == 0)
        #expect(request == Self.request("podcasts", #"{"limit":\#(PodcastsCommand.pageSize)}"#))
        #expect(run.stdout == PodcastsCommand.render(list.podcasts, timeZone: .system))
    }

    /// Runs `arguments` against a server answering one request after another on one connection with `answers`.
    func conversation(_ arguments: [String], answers: [String]) async throws -> (run: CLIRun, requests: [String]) {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .answers(answers))
            let run = await runCLI(arguments + ["--socket", server.path])
            return (run, server.requests())
        }
    }

    /// The table asks page after page on one connection, each after the last id of the one before, and prints one
    /// table of them all.
    @Test func podcastsTableReadsEveryPage() async throws {
        let pages = [
            PodcastsResult(podcasts: [Fixtures.daily], next: 3),
            PodcastsResult(podcasts: [Fixtures.gone], next: 4),
            PodcastsResult(podcasts: [Fixtures.failing]),
        ]
        let answers = pages.enumerated().map { DownloadFixtures.resultLine($1, id: Int64($0 + 1)) }
        let (run, requests) = try await conversation(["podcasts"], answers: answers)
        #expect(run.status == 0, "\(run.stderr)")
        let size = PodcastsCommand.pageSize
        #expect(
            requests == [
                #"{"id":1,"jsonrpc":"2.0","method":"podcasts","params":{"limit":\#(size)}}"#,
                #"{"id":2,"jsonrpc":"2.0","method":"podcasts","params":{"after":3,"limit":\#(size)}}"#,
                #"{"id":3,"jsonrpc":"2.0","method":"podcasts","params":{"after":4,"limit":\#(size)}}"#,
            ]
        )
        #expect(run.stdout == PodcastsCommand.render([Fixtures.daily, Fixtures.gone, Fixtures.failing]))
    }

    /// A daemon whose `next` does not move past the page it answered would be asked for the same page forever.
    @Test func podcastsTableRefusesACursorThatDoesNotMoveOn() async throws {
        let answers = [
            DownloadFixtures.resultLine(PodcastsResult(podcasts: [Fixtures.gone], next: 4), id: 1),
            DownloadFixtures.resultLine(PodcastsResult(podcasts: [Fixtures.daily], next: 3), id: 2),
        ]
        let (run, requests) = try await conversation(["podcasts"], answers: answers)
        #expect(run.status == 1)
        #expect(requests.count == 2)
        #expect(run.stdout == "")
        #expect(run.stderr.contains("'next' of 'podcasts' does not move past 4"), "\(run.stderr)")
    }

    /// `--limit` asks for one page and says how to ask for the next; `--json` prints the page with its `next`.
    @Test func podcastsLimitShowsOnePageAndTheNextCommand() async throws {
        let page = PodcastsResult(podcasts: [Fixtures.daily, Fixtures.gone], next: 4)
        let (run, request) = try await exchange(["podcasts", "--limit", "2", "--after", "1"], result: page)
        #expect(request == Self.request("podcasts", #"{"after":1,"limit":2}"#))
        #expect(
            run.stdout
                == PodcastsCommand.render(page.podcasts) + "\nMore follow: singlecastctl podcasts --limit 2 --after 4\n"
        )
        let (json, jsonRequest) = try await exchange(["--json", "podcasts", "--limit", "2"], result: page)
        #expect(jsonRequest == Self.request("podcasts", #"{"limit":2}"#))
        #expect(json.stdout == (try Self.json(page)))
        #expect(json.stdout.contains(#""next":4"#))
        let last = PodcastsResult(podcasts: [Fixtures.failing])
        let (end, _) = try await exchange(["podcasts", "--limit", "2", "--after", "4"], result: last)
        #expect(end.stdout == PodcastsCommand.render(last.podcasts))
    }

    @Test func podcastsJSONAndEmpty() async throws {
        let list = PodcastsResult(podcasts: [Fixtures.daily])
        let (json, jsonRequest) = try await exchange(["podcasts", "--json"], result: list)
        #expect(json.stdout == (try Self.json(list)))
        #expect(jsonRequest == Self.request("podcasts"), "--json without --limit asks for every podcast at once")
        let (empty, _) = try await exchange(["podcasts"], result: PodcastsResult(podcasts: []))
        #expect(empty.stdout == "No podcasts. Subscribe with 'singlecastctl subscribe <feed-url>'.\n")
        let (emptyJSON, _) = try await exchange(["--json", "podcasts"], result: PodcastsResult(podcasts: []))
        #expect(emptyJSON.stdout == #"{"podcasts":[]}"# + "\n")
    }

    @Test func boldHeaderOnlyWhenStyled() {
        let text = PodcastsCommand.render([Fixtures.daily], timeZone: Fixtures.utc, style: TextStyle(isEnabled: true))
        #expect(text.hasPrefix("\u{1B}[1mID\u{1B}[0m  "))
        #expect(text.contains("\n3   120 "))
    }

    // MARK: episodes

    static let episodesTable = """
        3  The Daily: 120 episodes, 2 new

        ID   DATE        DURATION  STATE        DOWNLOAD  TITLE
        815  2026-11-28  1h 2m     new          -         Friday
        814  2026-11-27  45m 12s   queued       1814      Thursday
        813  -           -         downloading  1813      Wednesday
        812  2026-11-28  59s       downloaded   1812      Tuesday
        811  someday     1d 6h     failed       1811      Monday
        810  2026-11-28  1h 2m     paused       1810      Sunday
        809  2026-11-28  1h 2m     -            -         Saturday

        """

    @Test func episodesTable() {
        let result = EpisodesResult(podcast: Fixtures.daily, episodes: Fixtures.episodes)
        #expect(EpisodesCommand.render(result, timeZone: Fixtures.utc) == Self.episodesTable)
    }

    @Test func episodesSendTheFiltersAndPrintInLocalTime() async throws {
        let result = EpisodesResult(podcast: Fixtures.daily, episodes: Array(Fixtures.episodes.prefix(1)))
        let (run, request) = try await exchange(["episodes", "daily", "--new", "--limit", "10"], result: result)
        #expect(run.status == 0)
        // The table asks only for what it shows; --json asks for every field.
        #expect(request == Self.request("episodes", #"{"brief":true,"limit":10,"new":true,"podcast":"daily"}"#))
        #expect(run.stdout == EpisodesCommand.render(result, onlyNew: true, timeZone: .system))
        let (plain, plainRequest) = try await exchange(["episodes", "3"], result: result)
        #expect(plainRequest == Self.request("episodes", #"{"brief":true,"podcast":"3"}"#))
        #expect(plain.status == 0)
        let (_, jsonRequest) = try await exchange(["episodes", "3", "--json"], result: result)
        #expect(jsonRequest == Self.request("episodes", #"{"podcast":"3"}"#))
    }

    @Test func episodesEmptyAndJSON() async throws {
        let empty = EpisodesResult(podcast: Fixtures.daily, episodes: [])
        let (run, _) = try await exchange(["episodes", "3", "--new"], result: empty)
        #expect(run.stdout == "3  The Daily: 120 episodes, 2 new\n\nNo new episodes.\n")
        #expect(EpisodesCommand.render(empty) == "3  The Daily: 120 episodes, 2 new\n\nNo episodes.\n")
        let result = EpisodesResult(podcast: Fixtures.daily, episodes: Fixtures.episodes)
        let (json, _) = try await exchange(["episodes", "3", "--json"], result: result)
        #expect(json.stdout == (try Self.json(result)))
    }

    @Test(
        arguments: [
            (nil, "-"), (-1, "-"), (0, "0s"), (59, "59s"), (60, "1m"), (3723, "1h 2m"), (36_000, "10h"),
            (108_000, "1d 6h"),
        ] as [(Int?, String)]
    )
    func durations(_ seconds: Int?, _ text: String) {
        #expect(PodcastText.duration(seconds: seconds) == text)
    }

    @Test func datesFollowTheTimeZone() {
        let helsinki = LocalTimeZone.fixed(secondsFromUTC: 2 * 3600)
        let newYork = LocalTimeZone.fixed(secondsFromUTC: -5 * 3600)
        #expect(PodcastText.day("2026-11-28T23:30:00Z", timeZone: Fixtures.utc) == "2026-11-28")
        #expect(PodcastText.day("2026-11-28T23:30:00Z", timeZone: helsinki) == "2026-11-29")
        #expect(PodcastText.time("2026-11-28T23:30:00Z", timeZone: helsinki) == "2026-11-29 01:30")
        #expect(PodcastText.time("2026-01-01T03:04:05.250Z", timeZone: newYork) == "2025-12-31 22:04")
        #expect(PodcastText.time("2026-11-27T12:00:00+01:00", timeZone: Fixtures.utc) == "2026-11-27 11:00")
        #expect(PodcastText.time("yesterday", timeZone: Fixtures.utc) == "yesterday")
    }

    // MARK: refresh

    static func entry(
        _ podcast: PodcastInfo,
        _ outcome: String,
        new: Int = 0,
        queued: [Int64] = [],
        error: String? = nil
    )
        -> RefreshResult.Entry
    {
        RefreshResult.Entry(podcast: podcast, outcome: outcome, newEpisodes: new, queued: queued, error: error)
    }

    @Test func refreshEveryPodcastPrintsOneLineEach() async throws {
        let result = RefreshResult(refreshed: [
            Self.entry(Fixtures.daily, "updated", new: 2, queued: [41, 42]),
            Self.entry(Fixtures.podcast(6, "Quiet"), "updated"),
            Self.entry(Fixtures.podcast(7, "Same"), "not_modified"),
            Self.entry(Fixtures.podcast(8, "Moved"), "moved", new: 1),
            Self.entry(Fixtures.gone, "gone", error: Fixtures.gone.lastError),
            Self.entry(Fixtures.podcast(9, "Future"), "throttled"),
        ])
        let (run, request) = try await exchange(["refresh"], result: result)
        #expect(run.stderr == "")
        #expect(run.status == 1, "a gone feed ends with status 1, as the help promises")
        #expect(request == Self.request("refresh", #"{"brief":true}"#))
        #expect(
            run.stdout == """
                3  The Daily: updated, 2 new episodes; queued 41, 42
                6  Quiet: updated, no new episodes
                7  Same: not modified
                8  Moved: moved to https://feeds.example.com/8.xml, 1 new episode
                4  Old Show: gone (HTTP 410), asked again once a day
                9  Future: throttled

                """
        )
    }

    @Test func refreshThatFailedEndsWithStatusOne() async throws {
        let result = RefreshResult(refreshed: [
            Self.entry(Fixtures.failing, "failed", error: Fixtures.failing.lastError)
        ])
        let (run, request) = try await exchange(["refresh", "flaky"], result: result)
        #expect(request == Self.request("refresh", #"{"podcast":"flaky"}"#))
        #expect(run.status == 1)
        #expect(run.stderr == "")
        #expect(
            run.stdout == "5  Flaky Feed: failed: the server answered HTTP 500 for https://feeds.example.com/5.xml\n"
        )
        let (json, _) = try await exchange(["refresh", "flaky", "--json"], result: result)
        #expect(json.status == 1)
        #expect(json.stdout == (try Self.json(result)))
    }

    @Test func refreshOfEveryPodcastCountsTheUnchangedOnes() async throws {
        let result = RefreshResult(
            refreshed: [Self.entry(Fixtures.daily, "updated", new: 1, queued: [41])],
            notModified: [6, 7, 8]
        )
        let (run, _) = try await exchange(["refresh"], result: result)
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                3  The Daily: updated, 1 new episode; queued 41
                3 podcasts not modified.

                """
        )
        let (one, _) = try await exchange(["refresh"], result: RefreshResult(refreshed: [], notModified: [6]))
        #expect(one.stdout == "1 podcast not modified.\n")
        // --json shows every podcast in full, as the daemon answers without `brief`.
        let (json, request) = try await exchange(["refresh", "--json"], result: RefreshResult(refreshed: []))
        #expect(request == Self.request("refresh", "{}"))
        #expect(json.status == 0)
    }

    @Test func refreshWithoutPodcasts() async throws {
        let (run, _) = try await exchange(["refresh"], result: RefreshResult(refreshed: []))
        #expect(run.status == 0)
        #expect(run.stdout == "No podcasts to refresh.\n")
    }

    // MARK: set

    @Test func setSendsOnlyWhatIsGiven() async throws {
        var changed = Fixtures.daily
        changed.autoDownload = .off
        changed.keep = nil
        let cases: [([String], String)] = [
            (["set", "3", "--auto", "off", "--keep", "0"], #"{"auto_download":"off","keep":0,"podcast":"3"}"#),
            (["set", "daily", "--auto", "all-new"], #"{"auto_download":"all-new","podcast":"daily"}"#),
            (["set", "daily", "--keep", "7"], #"{"keep":7,"podcast":"daily"}"#),
            (
                ["set", "3", "--auto", "latest:3", "--keep", "3"],
                #"{"auto_download":"latest:3","keep":3,"podcast":"3"}"#
            ),
        ]
        for (arguments, params) in cases {
            let (run, request) = try await exchange(arguments, result: PodcastResult(podcast: changed))
            #expect(run.status == 0, "\(arguments)")
            #expect(request == Self.request("set", params))
            #expect(run.stdout == "Set 3  The Daily: auto-download off, keep all\n")
        }
    }

    // MARK: download

    @Test func downloadLatestQueuesAndListsLikeEnqueue() async throws {
        let (run, request) = try await exchange(
            ["download", "3", "--latest", "2"],
            result: DownloadCommandTests.enqueueResult
        )
        #expect(run.status == 0)
        #expect(request == Self.request("download", #"{"latest":2,"podcast":"3"}"#))
        #expect(run.stdout == EnqueueCommand.render(DownloadCommandTests.enqueueResult))
        let (empty, _) = try await exchange(["download", "3", "--latest", "2"], result: EnqueueResult(downloads: []))
        #expect(empty.stdout == "The podcast has no episodes to download.\n")
    }

    // MARK: import

    static let opml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <opml version="2.0"><body><outline type="rss" text="The Daily" xmlUrl="https://feeds.example.com/3.xml"/></body></opml>

        """

    static let importResult = ImportResult(feeds: [
        .init(
            url: "https://feeds.example.com/3.xml",
            title: "The Daily",
            outcome: "subscribed",
            podcastID: 3,
            error: nil
        ),
        .init(url: "https://feeds.example.com/4.xml", title: "Old Show", outcome: "already", podcastID: 4, error: nil),
        .init(
            url: "http://127.0.0.1:9/feed.xml",
            title: nil,
            outcome: "failed",
            podcastID: nil,
            error: "The feed at http://127.0.0.1:9/feed.xml cannot be fetched: connection refused."
        ),
    ])

    @Test func importSendsTheFileAndReportsEachFeed() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/podcasts.opml"
            // A byte order mark is not part of the text.
            #expect(FileManager.default.createFile(atPath: file, contents: Data([0xEF, 0xBB, 0xBF] + Self.opml.utf8)))
            let (run, request) = try await exchange(["import", file], result: Self.importResult)
            let params = try WireCoding.value(of: ImportParams(opml: Self.opml))
            #expect(request == Self.request("import", try Self.json(params).trimmingCharacters(in: .newlines)))
            #expect(run.status == 1)
            #expect(run.stderr == "")
            #expect(
                run.stdout == """
                    Subscribed 3  The Daily  https://feeds.example.com/3.xml
                    Already subscribed 4  Old Show  https://feeds.example.com/4.xml
                    Failed http://127.0.0.1:9/feed.xml: The feed at http://127.0.0.1:9/feed.xml cannot be fetched: connection refused.
                    1 subscribed, 1 already subscribed, 1 failed.

                    """
            )
            let (json, _) = try await exchange(["import", file, "--json"], result: Self.importResult)
            #expect(json.status == 1)
            #expect(json.stdout == (try Self.json(Self.importResult)))
        }
    }

    @Test func importWithoutFailuresOrFeeds() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/empty.opml"
            #expect(FileManager.default.createFile(atPath: file, contents: Data(#"<opml version="2.0"/>"#.utf8)))
            let (empty, request) = try await exchange(["import", file], result: ImportResult(feeds: []))
            #expect(request == Self.request("import", #"{"opml":"<opml version=\"2.0\"/>"}"#))
            #expect(empty.status == 0)
            #expect(empty.stdout == "No feeds in \(file).\n")
            let fine = ImportResult(feeds: Array(Self.importResult.feeds.prefix(2)))
            let (run, _) = try await exchange(["import", file], result: fine)
            #expect(run.status == 0)
            #expect(run.stdout.hasSuffix("\n1 subscribed, 1 already subscribed, 0 failed.\n"))
        }
    }

    @Test func importFileProblemsFailBeforeConnecting() async throws {
        try await withTemporaryDirectory { directory in
            let latin1 = directory + "/latin1.opml"
            #expect(FileManager.default.createFile(atPath: latin1, contents: Data([0x3C, 0xE9, 0x3E])))
            let environment = ["SINGLECAST_SOCKET": directory + "/none.sock"]
            let missing = await runCLI(["import", directory + "/missing.opml"], environment: environment)
            #expect(missing.status == 1)
            #expect(
                missing.stderr
                    == "Error: cannot read the OPML file '\(directory)/missing.opml': No such file or directory\n"
            )
            let notUTF8 = await runCLI(["import", latin1], environment: environment)
            #expect(notUTF8.status == 1)
            #expect(
                notUTF8.stderr
                    == "Error: cannot read the OPML file '\(latin1)': it is not UTF-8 text; convert it with "
                    + "'iconv -t UTF-8'\n"
            )
            let aDirectory = await runCLI(["import", directory], environment: environment)
            #expect(aDirectory.stderr == "Error: cannot read the OPML file '\(directory)': Is a directory\n")
        }
    }

    @Test func importReadsStandardInput() throws {
        let input = try pipeReading(Self.opml)
        defer { close(input) }
        #expect(try TextFile.read("-", what: "OPML file", standardInput: input) == Self.opml)
    }

    // MARK: export

    static let exportResult = ExportResult(
        opml: #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<opml version="2.0"><head/><body/></opml>"#,
        count: 2
    )

    @Test func exportToStandardOutput() async throws {
        for arguments in [["export"], ["export", "-"]] {
            let (run, request) = try await exchange(arguments, result: Self.exportResult)
            #expect(run.status == 0)
            #expect(request == Self.request("export"))
            #expect(run.stdout == Self.exportResult.opml + "\n")
        }
        let (json, _) = try await exchange(["export", "--json"], result: Self.exportResult)
        #expect(json.stdout == (try Self.json(Self.exportResult)))
    }

    @Test func exportReplacesTheFile() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/subscriptions.opml"
            #expect(
                FileManager.default.createFile(atPath: file, contents: Data("old and longer than the new text".utf8))
            )
            let (run, _) = try await exchange(["export", file], result: Self.exportResult)
            #expect(run.status == 0)
            #expect(run.stdout == "Exported 2 podcasts to \(file).\n")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == Self.exportResult.opml + "\n")
            // Nothing is left behind next to it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["subscriptions.opml"])
            let (json, _) = try await exchange(["export", file, "--json"], result: Self.exportResult)
            #expect(json.stdout == (try Self.json(Self.exportResult)))
        }
    }

    @Test func exportIntoAMissingDirectoryFails() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/missing/subscriptions.opml"
            let (run, _) = try await exchange(["export", file], result: Self.exportResult)
            #expect(run.status == 1)
            #expect(run.stdout == "")
            #expect(run.stderr == "Error: cannot write the OPML file '\(file)': No such file or directory\n")
        }
    }
}

/// `delete`, `redownload` and `inbox`: what they send and how they print.
@Suite struct EpisodeFileCommandTests {
    /// The command the words parse into; `nil` when the parser itself refuses them.
    private func command<T: CLICommand>(_ words: [String], as type: T.Type) throws -> T? {
        guard case .run(let path, let parsed) = CommandParser.parse(words, root: CLI.root) else { return nil }
        return try path[path.count - 1].init(parsed) as? T
    }

    @Test func deleteTakesEpisodeIDsAndSaysWhatHappened() throws {
        let parsed = try #require(try command(["delete", "815", "816", "815"], as: DeleteCommand.self))
        #expect(parsed.params == EpisodeSelectionParams(episodes: [815, 816]))
        #expect(
            DeleteCommand.render(DeleteResult(episodes: [815], deletedFiles: ["/d/a.mp3"], keptFiles: ["/d/b.mp3"]))
                == "Deleted /d/a.mp3 for good (use_trash is off)\nKept /d/b.mp3 (another podcast's episode has it)\n"
        )
        #expect(
            DeleteCommand.render(DeleteResult(episodes: [], deletedFiles: [], keptFiles: [])) == "Nothing to delete.\n"
        )
    }

    /// `delete` says where each file went: the Trash and its place there, or deleted for good with use_trash off;
    /// and why nothing was deleted.
    @Test func deleteSaysWhereEachFileWentAndWhyNothingWas() {
        let trashed = DeleteResult(
            episodes: [815],
            deletedFiles: ["/d/a.mp3"],
            keptFiles: [],
            trashedTo: ["/d/a.mp3": "/t/files/a.mp3"]
        )
        #expect(DeleteCommand.render(trashed) == "Moved /d/a.mp3 to the Trash: /t/files/a.mp3\n")
        let gone = DeleteResult(episodes: [815], deletedFiles: ["/d/a.mp3"], keptFiles: [])
        #expect(DeleteCommand.render(gone) == "Deleted /d/a.mp3 for good (use_trash is off)\n")
        #expect(
            DeleteCommand.render(DeleteResult(episodes: [], deletedFiles: [], keptFiles: []), asked: [815, 816])
                == "Nothing to delete: episodes 815 and 816 have no download.\n"
        )
        #expect(
            DeleteCommand.render(DeleteResult(episodes: [], deletedFiles: [], keptFiles: []), asked: [815])
                == "Nothing to delete: episode 815 has no download.\n"
        )
    }

    @Test func episodeIDsMustBePositiveWholeNumbers() throws {
        #expect(throws: UsageError.self) { try command(["redownload", "x1"], as: RedownloadCommand.self) }
        #expect(try command(["delete"], as: DeleteCommand.self) == nil, "an ID is required")
    }

    @Test func theInboxNamesEachEpisodesPodcast() throws {
        let parsed = try #require(try command(["inbox", "--limit", "5"], as: InboxCommand.self))
        #expect(parsed.params == InboxParams(limit: 5))
        #expect(InboxCommand.render(InboxResult(episodes: [], podcasts: [])) == "No new episodes.\n")
    }
}
