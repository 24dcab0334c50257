import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `search`, `lookup` and `top` against ``TestServer``: the request line each sends and the golden text.
@Suite struct DirectoryCommandTests {
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

    static func request(_ method: String, _ params: String) -> String {
        #"{"id":1,"jsonrpc":"2.0","method":""# + method + #"","params":"# + params + "}"
    }

    static let harbour = DirectoryPodcast(
        id: 1_470_039_059,
        title: "Harbour Lights & Tides",
        author: "Harbour Collective",
        feedURL: "https://harbour.example.org/feed.xml",
        artworkURL: "https://img.example/600.jpg",
        episodeCount: 212,
        genre: "History",
        releaseDate: "2026-11-24T07:00:00Z",
        storeURL: "https://podcasts.apple.com/us/podcast/id1470039059"
    )

    static let club = DirectoryPodcast(
        id: 1_641_171_534,
        title: "Tide Club (subscriber edition) with a title far too long to fit in any table column",
        author: "Premium Tide Club",
        episodeCount: nil,
        genre: "Society & Culture"
    )

    static let searchResult = SearchResult(
        term: "tides",
        country: "US",
        limit: 50,
        cached: false,
        podcasts: [harbour, club]
    )

    @Test func searchJoinsTheWordsAndMarksPodcastsWithoutAFeed() async throws {
        let (run, request) = try await exchange(
            ["search", "harbour", "lights", "--limit", "5", "--country", "gb"],
            result: Self.searchResult
        )
        #expect(run.status == 0)
        #expect(run.stderr == "")
        #expect(request == Self.request("search", #"{"country":"GB","limit":5,"term":"harbour lights"}"#))
        #expect(
            run.stdout == """
                ID          TITLE                                                 AUTHOR              EPISODES  GENRE
                1470039059  Harbour Lights & Tides                                Harbour Collective  212       History
                1641171534  Tide Club (subscriber edition) with a title far t… *  Premium Tide Club   -         Society & Culture

                * No public feed: shown for reference, cannot be subscribed to.

                """
        )
    }

    @Test func searchWithoutResultsAndAsJSON() async throws {
        let empty = SearchResult(term: "zzz", country: "US", limit: 50, cached: true, podcasts: [])
        var (run, request) = try await exchange(["search", "zzz"], result: empty)
        #expect(request == Self.request("search", #"{"term":"zzz"}"#))
        #expect(run.stdout == "No podcasts found for 'zzz'.\n")

        (run, _) = try await exchange(["search", "--json", "tides"], result: Self.searchResult)
        #expect(run.stdout == String(decoding: try WireCoding.line(for: Self.searchResult), as: UTF8.self))
    }

    @Test func lookupShowsTheFeedOrWhyThereIsNone() async throws {
        var (run, request) = try await exchange(
            ["lookup", "1470039059"],
            result: LookupResult(cached: false, podcast: Self.harbour)
        )
        #expect(request == Self.request("lookup", #"{"id":1470039059}"#))
        #expect(
            run.stdout == """
                ID        1470039059
                Title     Harbour Lights & Tides
                Author    Harbour Collective
                Feed      https://harbour.example.org/feed.xml
                Episodes  212
                Genre     History
                Latest    \(Timestamps.text("2026-11-24T07:00:00Z", zone: .system))
                Artwork   https://img.example/600.jpg
                Page      https://podcasts.apple.com/us/podcast/id1470039059

                """
        )
        (run, _) = try await exchange(["lookup", "1641171534"], result: LookupResult(cached: true, podcast: Self.club))
        #expect(
            run.stdout == """
                ID      1641171534
                Title   Tide Club (subscriber edition) with a title far too long to fit in any table column
                Author  Premium Tide Club
                Feed    none: Apple lists no public feed, so it cannot be subscribed to
                Genre   Society & Culture

                """
        )
    }

    @Test func topListsTheChart() async throws {
        let chart = TopResult(
            country: "DE",
            cached: false,
            podcasts: [
                ChartEntry(rank: 1, id: 1_535_809_341, title: "Tides — Daily Ocean News", author: "Tidal Studios"),
                ChartEntry(rank: 2, id: 1_470_039_059, title: "Harbour Lights & Tides", genre: "History"),
            ]
        )
        var (run, request) = try await exchange(["top", "--country", "de", "--limit", "2"], result: chart)
        #expect(request == Self.request("top", #"{"country":"DE","limit":2}"#))
        #expect(
            run.stdout == """
                RANK  ID          TITLE                     AUTHOR         GENRE
                1     1535809341  Tides — Daily Ocean News  Tidal Studios  -
                2     1470039059  Harbour Lights & Tides    -              History

                """
        )
        (run, request) = try await exchange(["top"], result: TopResult(country: "US", cached: true, podcasts: []))
        #expect(request == Self.request("top", "{}"))
        #expect(run.stdout == "The US chart is empty.\n")
    }

    @Test func daemonErrorsArePrintedAsTheyCome() async throws {
        let error = RPCError.rateLimited(retryAfterSeconds: 12, limit: "20 requests a minute")
        let line = String(
            decoding: WireCoding.errorLine(RPCErrorResponse(id: .integer(1), error: error)),
            as: UTF8.self
        ).trimmingCharacters(in: .newlines)
        let (run, _) = try await exchange(["search", "tides"], reply: [line])
        #expect(run.status == 1)
        #expect(
            run.stderr
                == "Error: Rate limited: the directory is asked at most 20 requests a minute (search_rate_limit); "
                + "try again in 12 s.\n"
        )
    }

    @Test(arguments: [
        (["search"], "Error: Missing expected argument '<term>'"),
        (
            ["search", "tides", "--limit", "0"],
            "Error: The value '0' is invalid for '--limit <n>': expected a whole number from 1 to 200"
        ),
        (
            ["search", "tides", "--country", "USA"],
            "Error: The value 'USA' is invalid for '--country <cc>': expected a two-letter country code such as US or DE"
        ),
        (
            ["top", "--limit", "x"],
            "Error: The value 'x' is invalid for '--limit <n>': expected a whole number from 1 to 200"
        ),
        (
            ["lookup", "-5"],
            "Error: The value '-5' is invalid for '<id>': an iTunes id is a positive whole number such as 1470039059"
        ),
        (
            ["lookup", "id1470039059"],
            "Error: The value 'id1470039059' is invalid for '<id>': an iTunes id is a positive whole number such as 1470039059"
        ),
        (["lookup", "1", "2"], "Error: Unexpected argument '2'"),
    ])
    func usageErrors(arguments: [String], firstLine: String) async {
        let run = await runCLI(arguments + ["--socket", "/nonexistent/socket"])
        #expect(run.status == 64)
        #expect(run.stdout == "")
        #expect(run.stderr.split(separator: "\n").first.map(String.init) == firstLine, "\(run.stderr)")
    }
}
