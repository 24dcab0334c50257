import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `search`, `lookup` and `top` end to end: the real daemon asking a local stand-in for Apple's directory that
/// serves the fixture JSON, checks every query and counts the requests.
///
/// Each test does its blocking socket and process work in ``io(_:)``, on a thread of its own, and checks the results
/// afterwards: blocking the two threads of the cooperative pool would stall every other test of the run.
@Suite struct DirectoryTests {
    /// Runs blocking work on a new thread, so the cooperative pool stays free for the rest of the suite.
    private func io<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await onOwnThread(body)
    }

    /// A daemon whose directory endpoints point at `server`, plus `extra` configuration lines, and a client.
    private static func start(_ server: DirectoryServer, _ extra: String = "") throws -> (DaemonProcess, LineClient) {
        let daemon = DaemonProcess()
        try daemon.writeConfig("search_endpoint = \(server.url)\nchart_endpoint = \(server.url)\n" + extra)
        try daemon.startAndWaitUntilReady()
        return (daemon, try LineClient(path: daemon.socketPath))
    }

    /// The error of a call that must fail.
    private static func error(_ client: LineClient, _ method: String, _ params: String) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) \(params) succeeded: \(value)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }

    /// Waits until the server has received a request whose path contains `text`.
    private static func waitForRequest(containing text: String, at server: DirectoryServer) throws {
        let deadline = Date.now.addingTimeInterval(20)
        while !server.requests().contains(where: { $0.contains(text) }) {
            guard Date.now < deadline else { throw HarnessError("no request with \(text) arrived") }
            usleep(10_000)
        }
    }

    private static func searches(_ server: DirectoryServer) -> [String] {
        server.requests().filter { $0.hasPrefix("/search?") }
    }

    @Test func searchDecodesAndMarksPodcastsWithoutAFeed() async throws {
        let server = try DirectoryServer()
        let params = String(
            decoding: try WireCoding.encoder().encode(
                SearchParams(term: "  Tides   & café+ ", limit: 3, country: "gb")
            ),
            as: UTF8.self
        )
        let (result, status) = try await io {
            let (daemon, client) = try Self.start(server)
            return (try client.result("search", as: SearchResult.self, params: params), daemon.stop())
        }

        #expect(result.term == "Tides & café+")
        #expect(result.country == "GB" && result.limit == 3 && !result.cached)
        #expect(result.podcasts.map(\.id) == [1_470_039_059, 1_535_809_341, 1_641_171_534])
        #expect(result.podcasts.map(\.subscribable) == [true, true, false])
        #expect(result.podcasts[1].feedURL == "http://feeds.tides.example.net/daily?format=xml")
        #expect(result.podcasts[2].feedURL == nil)
        #expect(result.podcasts[0].episodeCount == 212 && result.podcasts[0].genre == "History")
        // The server refuses a query in any other shape; this is the exact line it received.
        #expect(
            Self.searches(server) == [
                "/search?media=podcast&entity=podcast&term=Tides%20%26%20caf%C3%A9%2B&limit=3&country=GB"
            ]
        )
        #expect(status == 0)
    }

    @Test func aRepeatedSearchIsServedFromTheCache() async throws {
        let server = try DirectoryServer()
        let (first, second, otherLimit, status) = try await io {
            let (daemon, client) = try Self.start(server)
            return (
                try client.result("search", as: SearchResult.self, params: #"{"term":"Harbour Lights"}"#),
                try client.result("search", as: SearchResult.self, params: #"{"term":" harbour  lights"}"#),
                try client.result("search", as: SearchResult.self, params: #"{"term":"harbour lights","limit":2}"#),
                daemon.stop()
            )
        }

        #expect(!first.cached && second.cached && !otherLimit.cached)
        #expect(second.podcasts == first.podcasts)
        #expect(otherLimit.podcasts.count == 2)
        #expect(Self.searches(server).count == 2, "\(server.requests())")
        #expect(status == 0)
    }

    @Test func theRateLimitSaysWhenToRetry() async throws {
        let server = try DirectoryServer()
        let (limited, cached, status) = try await io {
            let (daemon, client) = try Self.start(server, "search_rate_limit = 3/h\n")
            for term in ["one", "two", "three"] {
                _ = try client.result("search", as: SearchResult.self, params: "{\"term\":\"\(term)\"}")
            }
            return (
                try Self.error(client, "search", #"{"term":"four"}"#),
                try client.result("search", as: SearchResult.self, params: #"{"term":"one"}"#),
                daemon.stop()
            )
        }

        #expect(limited.code == RPCError.rateLimitedCode)
        #expect(limited.reason == "rate_limited")
        let retryAfter = try #require(limited.data?.details?["retry_after_seconds"].flatMap { Int($0) })
        #expect((1000...1200).contains(retryAfter), "one request's worth of 3 an hour")
        #expect(limited.message.contains("at most 3 requests an hour"))
        #expect(limited.message.contains("try again in \(retryAfter) s"))
        #expect(cached.cached, "cached answers need no request")
        #expect(Self.searches(server).count == 3)
        #expect(status == 0)
    }

    @Test func aNewerSearchCancelsTheOneStillRunning() async throws {
        let server = try DirectoryServer(delay: .seconds(30))
        let (lines, elapsed, status) = try await io {
            let (daemon, client) = try Self.start(server)
            try client.send(#"{"jsonrpc":"2.0","id":1,"method":"search","params":{"term":"slow tides"}}"# + "\n")
            try Self.waitForRequest(containing: "term=slow%20tides", at: server)
            let start = Date.now
            try client.send(#"{"jsonrpc":"2.0","id":2,"method":"ping"}"# + "\n")
            try client.send(#"{"jsonrpc":"2.0","id":3,"method":"search","params":{"term":"tides"}}"# + "\n")
            let lines = try (0..<3).map { _ in try client.readLine() ?? "" }
            return (lines, Date.now.timeIntervalSince(start), daemon.stop())
        }

        let replies = try lines.map { try RPCIncoming.parse(line: Array($0.utf8)) }
        guard case .error(.integer(1), let cancelled) = replies[0] else {
            throw HarnessError("the slow search was not cancelled: \(lines[0])")
        }
        #expect(cancelled.code == RPCError.cancelledCode)
        #expect(cancelled.reason == "cancelled")
        #expect(cancelled.message == "Cancelled: a newer 'search' on this connection replaced this one.")
        guard case .result(.integer(2), _) = replies[1], case .result(.integer(3), let value) = replies[2] else {
            throw HarnessError("answers out of order: \(lines)")
        }
        #expect(try WireCoding.decode(SearchResult.self, from: value).podcasts.count == 3)
        #expect(elapsed < 20, "the answers did not wait for the slow directory (\(elapsed) s)")
        #expect(status == 0)
    }

    @Test func pipelinedSearchesLeaveOnlyTheLastOneRunning() async throws {
        let server = try DirectoryServer(delay: .seconds(30))
        let (lines, status) = try await io {
            let (daemon, client) = try Self.start(server)
            try client.send(
                #"{"jsonrpc":"2.0","id":1,"method":"search","params":{"term":"slow tides"}}"# + "\n"
                    + #"{"jsonrpc":"2.0","id":2,"method":"search","params":{"term":"slow harbour"}}"# + "\n"
                    + #"{"jsonrpc":"2.0","id":3,"method":"search","params":{"term":"empty"}}"# + "\n"
            )
            return (try (0..<3).map { _ in try client.readLine() ?? "" }, daemon.stop())
        }

        let replies = try lines.map { try RPCIncoming.parse(line: Array($0.utf8)) }
        for reply in replies.prefix(2) {
            guard case .error(_, let error) = reply else { throw HarnessError("not cancelled: \(lines)") }
            #expect(error.reason == "cancelled")
        }
        guard case .result(.integer(3), let value) = replies[2] else { throw HarnessError("no result: \(lines)") }
        #expect(try WireCoding.decode(SearchResult.self, from: value).podcasts.isEmpty)
        #expect(status == 0)
    }

    @Test func searchesOnDifferentConnectionsDoNotCancelEachOther() async throws {
        let server = try DirectoryServer(delay: .milliseconds(1500))
        let (quick, reply, status) = try await io {
            let (daemon, slow) = try Self.start(server)
            let other = try LineClient(path: daemon.socketPath)
            try slow.send(#"{"jsonrpc":"2.0","id":1,"method":"search","params":{"term":"slow tides"}}"# + "\n")
            try Self.waitForRequest(containing: "slow", at: server)
            let quick = try other.result("search", as: SearchResult.self, params: #"{"term":"tides"}"#)
            return (quick, try RPCIncoming.parse(line: Array((try slow.readLine() ?? "").utf8)), daemon.stop())
        }

        #expect(quick.podcasts.count == 3)
        guard case .result(_, let value) = reply else { throw HarnessError("the slow search failed: \(reply)") }
        #expect(try WireCoding.decode(SearchResult.self, from: value).term == "slow tides")
        #expect(status == 0)
    }

    @Test func aShortTermNamesTheMinimum() async throws {
        let server = try DirectoryServer()
        let (short, status) = try await io {
            let (daemon, client) = try Self.start(server, "search_min_term_length = 3\n")
            return (try Self.error(client, "search", #"{"term":"  ab "}"#), daemon.stop())
        }

        #expect(short.code == RPCError.invalidParamsCode)
        #expect(short.reason == "term_too_short")
        #expect(short.data?.details?["minimum"] == "3")
        #expect(short.message == "Invalid params: the search term 'ab' is too short; give at least 3 characters.")
        #expect(server.requests().isEmpty)
        #expect(status == 0)
    }

    @Test func badAnswersAreClearErrorsAndTheDaemonCarriesOn() async throws {
        let server = try DirectoryServer()
        let (errors, afterwards, status) = try await io {
            let (daemon, client) = try Self.start(server)
            let errors = try ["malformed", "html", "wrong shape", "error", "error"].map {
                try Self.error(client, "search", "{\"term\":\"\($0)\"}")
            }
            let afterwards = try client.result("search", as: SearchResult.self, params: #"{"term":"tides"}"#)
            return (errors, afterwards, daemon.stop())
        }

        let (malformed, html, shape, status500, again) = (errors[0], errors[1], errors[2], errors[3], errors[4])
        for bad in [malformed, html, shape] {
            #expect(bad.code == RPCError.directoryBadResponseCode)
            #expect(bad.reason == "directory_bad_response")
        }
        #expect(malformed.message.contains("it is not valid JSON (text/javascript; charset=utf-8, starting"))
        #expect(html.message.contains("it is not valid JSON (text/html, starting \"<!DOCTYPE html>"))
        #expect(shape.message.contains("'results' is missing"))
        #expect(status500.code == RPCError.directoryHTTPErrorCode)
        #expect(status500.reason == "directory_http_error")
        #expect(status500.data?.details == ["http_status": "500"])
        #expect(status500.message.contains("answered HTTP 500"))
        // Failures are not cached, and the daemon still answers.
        #expect(again == status500)
        #expect(Self.searches(server).count == 6)
        #expect(afterwards.podcasts.count == 3)
        #expect(status == 0)
    }

    @Test func anUnreachableDirectoryIsAClearError() async throws {
        let (unreachable, status) = try await io {
            let daemon = DaemonProcess()
            try daemon.writeConfig("search_endpoint = http://127.0.0.1:9\n")
            try daemon.startAndWaitUntilReady()
            let client = try LineClient(path: daemon.socketPath)
            return (try Self.error(client, "search", #"{"term":"tides"}"#), daemon.stop())
        }

        #expect(unreachable.code == RPCError.directoryUnreachableCode)
        #expect(unreachable.reason == "directory_unreachable")
        #expect(unreachable.data?.details == ["error": "network"])
        #expect(status == 0)
    }

    @Test func lookupReturnsThePodcastWithItsFeed() async throws {
        let server = try DirectoryServer()
        let (found, withoutFeed, unknown, again, status) = try await io {
            let (daemon, client) = try Self.start(server)
            return (
                try client.result("lookup", as: LookupResult.self, params: #"{"id":1470039059}"#),
                try client.result("lookup", as: LookupResult.self, params: #"{"id":1641171534}"#),
                try Self.error(client, "lookup", #"{"id":42}"#),
                try client.result("lookup", as: LookupResult.self, params: #"{"id":1470039059}"#),
                daemon.stop()
            )
        }

        #expect(found.podcast.title == "Harbour Lights & Tides")
        #expect(found.podcast.feedURL == "https://harbour.example.org/feed.xml" && found.podcast.subscribable)
        #expect(!withoutFeed.podcast.subscribable)
        #expect(unknown.code == RPCError.invalidParamsCode && unknown.reason == "unknown_podcast")
        #expect(again.cached)
        #expect(
            server.requests() == [
                "/lookup?id=1470039059&entity=podcast", "/lookup?id=1641171534&entity=podcast",
                "/lookup?id=42&entity=podcast",
            ]
        )
        #expect(status == 0)
    }

    @Test func topReadsBothChartShapesAndFollowsAReload() async throws {
        let server = try DirectoryServer()
        let (current, legacy, status) = try await io {
            let (daemon, client) = try Self.start(server)
            let current = try client.result("top", as: TopResult.self, params: #"{"country":"de","limit":2}"#)
            try daemon.writeConfig("search_endpoint = \(server.url)\nchart_endpoint = \(server.legacyChartTemplate)\n")
            daemon.signal(SIGHUP)
            guard daemon.notify.receive(until: "READY=1") != nil else {
                throw HarnessError("no reload:\n\(daemon.log)")
            }
            return (current, try client.result("top", as: TopResult.self), daemon.stop())
        }

        #expect(current.country == "DE")
        #expect(current.podcasts.map(\.rank) == [1, 2])
        #expect(current.podcasts.map(\.id) == [1_535_809_341, 1_470_039_059])
        #expect(current.podcasts[0].title == "Tides — Daily Ocean News" && current.podcasts[0].genre == "Daily News")
        #expect(legacy.country == "US" && !legacy.cached)
        #expect(legacy.podcasts.map(\.id) == [1_535_809_341])
        #expect(legacy.podcasts[0].author == "Tidal Studios")
        #expect(server.requests() == ["/api/v2/de/podcasts/top/2/podcasts.json", "/us/rss/toppodcasts/limit=25/json"])
        #expect(status == 0)
    }

    @Test func theClientPrintsTablesAndErrors() async throws {
        let server = try DirectoryServer()
        let (runs, status) = try await io {
            let (daemon, _) = try Self.start(server, "search_rate_limit = 4/h\n")
            let environment = ["SINGLECAST_SOCKET": daemon.socketPath, "PATH": "/usr/bin:/bin"]
            let runs = try [
                ["search", "tides"], ["lookup", "1641171534"], ["top", "--limit", "2"], ["search", "tides", "--json"],
                ["search", "x"], ["search", "empty"], ["search", "more"],
            ].map { try runProgram(Binaries.client.path, $0, environment: environment) }
            return (runs, daemon.stop())
        }
        let (search, lookup, top, json, short, limited) = (runs[0], runs[1], runs[2], runs[3], runs[4], runs[6])

        #expect(search.status == 0 && search.stderr == "")
        #expect(
            search.stdout == """
                ID          TITLE                             AUTHOR              EPISODES  GENRE
                1470039059  Harbour Lights & Tides            Harbour Collective  212       History
                1535809341  Tides — Daily Ocean News          Tidal Studios       2417      Daily News
                1641171534  Tide Club (subscriber edition) *  Premium Tide Club   48        Society & Culture

                * No public feed: shown for reference, cannot be subscribed to.

                """
        )
        #expect(lookup.status == 0)
        #expect(lookup.stdout.contains("Feed      none: Apple lists no public feed, so it cannot be subscribed to\n"))
        #expect(
            top.stdout == """
                RANK  ID          TITLE                     AUTHOR              GENRE
                1     1535809341  Tides — Daily Ocean News  Tidal Studios       Daily News
                2     1470039059  Harbour Lights & Tides    Harbour Collective  History

                """
        )
        let decoded = try JSONDecoder().decode(SearchResult.self, from: Data(json.stdout.utf8))
        #expect(decoded.cached && decoded.podcasts.count == 3)
        #expect(short.status == 64, "a wrong value, as the client would call it")
        #expect(
            short.stderr == "Error: the search term 'x' is too short; give at least 2 characters.\n"
        )
        #expect(limited.status == 1)
        #expect(limited.stderr.hasPrefix("Error: Rate limited: the directory is asked at most 4 requests an hour"))
        #expect(status == 0)
    }
}
