import Foundation
import SinglecastDaemon
import SinglecastHTTP
import SinglecastProtocol
import SinglecastSupport
import SinglecastTestServers
import Synchronization
import Testing

/// The directory's pure pieces: query URLs, the token bucket, the cache, decoding Apple's JSON.
@Suite struct DirectoryQueryTests {
    @Test(arguments: [
        ("tides", "tides"),
        ("harbour lights", "harbour%20lights"),
        ("a+b&c=d#e/f?g", "a%2Bb%26c%3Dd%23e%2Ff%3Fg"),
        ("café", "caf%C3%A9"),
        ("AZaz09-._~", "AZaz09-._~"),
        ("100% *!'()", "100%25%20%2A%21%27%28%29"),
        ("🎙️", "%F0%9F%8E%99%EF%B8%8F"),
    ])
    func percentEncodesAllButUnreserved(term: String, encoded: String) {
        #expect(term.percentEncodedExceptUnreserved() == encoded)
    }

    @Test func searchURLHasEveryParameter() {
        #expect(
            DirectoryQuery.searchURL(
                endpoint: "https://itunes.apple.com",
                term: "  the  daily\tnews ",
                country: "de",
                limit: 7
            )
                == "https://itunes.apple.com/search?media=podcast&entity=podcast&term=the%20daily%20news&limit=7&country=DE"
        )
        #expect(
            DirectoryQuery.lookupURL(endpoint: "http://127.0.0.1:8080", id: 1_470_039_059)
                == "http://127.0.0.1:8080/lookup?id=1470039059&entity=podcast"
        )
    }

    @Test func chartURLIsTheCurrentFeedOrATemplate() {
        #expect(
            DirectoryQuery.chartURL(endpoint: "https://rss.marketingtools.apple.com", country: "US", limit: 25)
                == "https://rss.marketingtools.apple.com/api/v2/us/podcasts/top/25/podcasts.json"
        )
        #expect(
            DirectoryQuery.chartURL(
                endpoint: "https://itunes.apple.com/{country}/rss/toppodcasts/limit={limit}/json",
                country: "GB",
                limit: 10
            ) == "https://itunes.apple.com/gb/rss/toppodcasts/limit=10/json"
        )
    }

    @Test func searchKeyIgnoresCaseAndSpacing() {
        let key = DirectoryQuery.searchKey(term: "Harbour Lights", country: "us", limit: 50)
        #expect(key == DirectoryQuery.searchKey(term: " harbour   LIGHTS ", country: "US", limit: 50))
        #expect(key != DirectoryQuery.searchKey(term: "harbour lights", country: "GB", limit: 50))
        #expect(key != DirectoryQuery.searchKey(term: "harbour lights", country: "US", limit: 10))
    }

    @Test(arguments: [("US", true), ("de", true), ("USA", false), ("U", false), ("1A", false), ("ÜS", false)])
    func countryCodes(code: String, valid: Bool) {
        #expect(DirectoryQuery.isCountryCode(code) == valid)
    }
}

@Suite struct TokenBucketTests {
    let start = ContinuousClock.now

    @Test func allowsABurstThenRefillsAtTheRate() {
        var bucket = TokenBucket(limit: RateLimit(count: 20, interval: .seconds(60)))
        for _ in 0..<20 { #expect(bucket.take(at: start) == .allowed) }
        #expect(bucket.take(at: start) == .denied(retryAfter: .seconds(3)))
        #expect(bucket.take(at: start + .seconds(1)) == .denied(retryAfter: .seconds(2)))
        #expect(bucket.take(at: start + .seconds(3)) == .allowed)
        #expect(bucket.take(at: start + .seconds(3)) == .denied(retryAfter: .seconds(3)))
    }

    @Test func neverHoldsMoreThanItsCapacity() {
        var bucket = TokenBucket(limit: RateLimit(count: 2, interval: .seconds(1)))
        let later = start + .seconds(3600)
        #expect(bucket.take(at: later) == .allowed)
        #expect(bucket.take(at: later) == .allowed)
        #expect(bucket.take(at: later) != .allowed)
    }

    @Test func aClockThatGoesBackDoesNotAddTokens() {
        var bucket = TokenBucket(limit: RateLimit(count: 1, interval: .seconds(10)))
        #expect(bucket.take(at: start + .seconds(5)) == .allowed)
        #expect(bucket.take(at: start) == .denied(retryAfter: .seconds(10)))
    }

    @Test(arguments: [
        ("20", RateLimit(count: 20, interval: .seconds(60))),
        ("20/min", RateLimit(count: 20, interval: .seconds(60))),
        ("5/s", RateLimit(count: 5, interval: .seconds(1))),
        ("300/H", RateLimit(count: 300, interval: .seconds(3600))),
        ("0/min", nil), ("-1", nil), ("20/day", nil), ("fast", nil), ("1/2/3", nil),
    ])
    func parsesRates(text: String, expected: RateLimit?) {
        #expect(RateLimit(parsing: text) == expected)
    }
}

@Suite struct DirectoryCacheTests {
    let start = ContinuousClock.now

    @Test func answersUntilTheTimeToLivePasses() {
        var cache = DirectoryCache<Int>(timeToLive: .seconds(60))
        cache.store(1, for: "a", at: start)
        #expect(cache.value(for: "a", at: start + .seconds(59)) == 1)
        #expect(cache.value(for: "a", at: start + .seconds(60)) == nil)
        #expect(cache.value(for: "b", at: start) == nil)
    }

    @Test func zeroTimeToLiveKeepsNothing() {
        var cache = DirectoryCache<Int>(timeToLive: .zero)
        cache.store(1, for: "a", at: start)
        #expect(cache.value(for: "a", at: start) == nil)
        #expect(cache.count == 0)
    }

    @Test func dropsTheOldestWhenFull() {
        var cache = DirectoryCache<Int>(timeToLive: .seconds(60), capacity: 2)
        cache.store(1, for: "a", at: start)
        cache.store(2, for: "b", at: start + .seconds(1))
        cache.store(3, for: "c", at: start + .seconds(2))
        #expect(cache.value(for: "a", at: start + .seconds(2)) == nil)
        #expect(cache.value(for: "b", at: start + .seconds(2)) == 2)
        #expect(cache.value(for: "c", at: start + .seconds(2)) == 3)
        #expect(cache.count == 2)
    }
}

@Suite struct DirectoryResponseTests {
    private let url = "https://itunes.apple.com/search"

    @Test func decodesTheSearchFixture() throws {
        let podcasts = try DirectoryResponse.podcasts(DirectoryServer.fixture("search-podcast.json"), url: url)
        #expect(podcasts.map(\.id) == [1_470_039_059, 1_535_809_341, 1_641_171_534])
        #expect(
            podcasts[0]
                == DirectoryPodcast(
                    id: 1_470_039_059,
                    title: "Harbour Lights & Tides",
                    author: "Harbour Collective",
                    feedURL: "https://harbour.example.org/feed.xml",
                    artworkURL:
                        "https://is1-ssl.mzstatic.example/image/thumb/Podcasts113/v4/aa/bb/cc/art.png/600x600bb.jpg",
                    episodeCount: 212,
                    genre: "History",
                    releaseDate: "2026-11-24T07:00:00Z",
                    storeURL: "https://podcasts.apple.com/us/podcast/harbour-lights-tides/id1470039059?uo=4"
                )
        )
        #expect(podcasts[1].feedURL == "http://feeds.tides.example.net/daily?format=xml")
        #expect(podcasts[0].subscribable && podcasts[1].subscribable)
        #expect(!podcasts[2].subscribable)
        #expect(podcasts[2].feedURL == nil)
    }

    @Test func decodesEmptyAndLookupFixtures() throws {
        #expect(try DirectoryResponse.podcasts(DirectoryServer.fixture("search-empty.json"), url: url).isEmpty)
        let lookup = try DirectoryResponse.podcasts(DirectoryServer.fixture("lookup-podcast.json"), url: url)
        #expect(lookup.map(\.title) == ["Harbour Lights & Tides"])
    }

    @Test func skipsOddEntriesAndPrefersSmallArtworkToNone() throws {
        let json = """
            {"results": [42, {"collectionName": "no id"}, {"collectionId": 7, "collectionName": "Seven",
            "artworkUrl100": "https://a.example/100.jpg", "feedUrl": ""}, {"collectionId": "x"}]}
            """
        let podcasts = try DirectoryResponse.podcasts(Data(json.utf8), url: url)
        #expect(podcasts == [DirectoryPodcast(id: 7, title: "Seven", artworkURL: "https://a.example/100.jpg")])
        #expect(podcasts.first?.subscribable == false, "an empty feedUrl is no feed")
    }

    @Test func decodesTheCurrentChart() throws {
        let entries = try DirectoryResponse.chart(DirectoryServer.fixture("top-podcasts-v2.json"), url: url)
        #expect(entries.map(\.rank) == [1, 2, 3])
        #expect(
            entries[0]
                == ChartEntry(
                    rank: 1,
                    id: 1_535_809_341,
                    title: "Tides — Daily Ocean News",
                    author: "Tidal Studios",
                    genre: "Daily News",
                    artworkURL:
                        "https://is3-ssl.mzstatic.example/image/thumb/Podcasts125/v4/08/4c/5b/tides.jpg/100x100bb.png",
                    storeURL: "https://podcasts.apple.com/us/podcast/tides-daily-ocean-news/id1535809341"
                )
        )
    }

    @Test func decodesTheLegacyChart() throws {
        let entries = try DirectoryResponse.chart(DirectoryServer.fixture("top-podcasts-legacy.json"), url: url)
        #expect(
            entries == [
                ChartEntry(
                    rank: 1,
                    id: 1_535_809_341,
                    title: "Tides — Daily Ocean News",
                    author: "Tidal Studios",
                    genre: "Daily News",
                    artworkURL:
                        "https://is3-ssl.mzstatic.example/image/thumb/Podcasts125/v4/08/4c/5b/tides.jpg/170x170bb.png",
                    storeURL: "https://podcasts.apple.com/us/podcast/tides-daily-ocean-news/id1535809341?uo=2"
                )
            ]
        )
        // A single entry may come as an object instead of an array.
        let single = #"{"feed":{"entry":{"im:name":{"label":"One"},"id":{"attributes":{"im:id":"5"}}}}}"#
        #expect(try DirectoryResponse.chart(Data(single.utf8), url: url) == [ChartEntry(rank: 1, id: 5, title: "One")])
    }

    @Test(arguments: [
        ("{\"results\": [", "it is not valid JSON (text/javascript, starting \"{\"results\": [\")"),
        ("<html>down</html>", "it is not valid JSON (text/javascript, starting \"<html>down</html>\")"),
        ("", "it is not valid JSON (text/javascript, an empty body)"),
        ("{\"resultCount\": 0}", "the JSON is not a Search API answer with a 'results' array ('results' is missing)"),
        (
            "{\"results\": {}}",
            "the JSON is not a Search API answer with a 'results' array ('results' has the wrong type)"
        ),
        ("[1, 2]", "the JSON is not a Search API answer with a 'results' array (the top level has the wrong type)"),
    ])
    func unusableSearchAnswersAreClearErrors(body: String, detail: String) {
        do {
            _ = try DirectoryResponse.podcasts(Data(body.utf8), contentType: "text/javascript", url: url)
            Issue.record("decoded \(body)")
        } catch {
            let error = RPCError(error)
            #expect(error.code == RPCError.directoryBadResponseCode)
            #expect(error.reason == "directory_bad_response")
            #expect(error.message.contains(detail), "\(error.message)")
        }
    }

    @Test func chartWithoutAFeedIsAnError() {
        #expect(throws: DirectoryError.self) { try DirectoryResponse.chart(Data(#"{"results":[]}"#.utf8), url: url) }
    }
}

/// ``PodcastDirectory`` with a stand-in for the network and a clock moved by hand.
@Suite struct PodcastDirectoryTests {
    /// Answers every fetch from a closure and records the URLs asked for.
    final class FakeDirectory: Sendable {
        let requests = Mutex<[FetchRequest]>([])
        let clock = Mutex(ContinuousClock.now)
        let answer: @Sendable (String) async throws(TransferError) -> FetchResult

        init(answer: @escaping @Sendable (String) async throws(TransferError) -> FetchResult) {
            self.answer = answer
        }

        var urls: [String] { requests.withLock { $0.map(\.url) } }

        func directory(_ settings: DirectorySettings = DirectorySettings()) -> PodcastDirectory {
            PodcastDirectory(
                settings: settings,
                fetch: { request throws(TransferError) in
                    self.requests.withLock { $0.append(request) }
                    return try await self.answer(request.url)
                },
                now: { self.clock.withLock { $0 } }
            )
        }

        func advance(_ duration: Duration) { clock.withLock { $0 += duration } }
    }

    static func ok(
        _ fixture: String,
        status: Int = 200
    ) -> @Sendable (String) async throws(TransferError) -> FetchResult {
        let body = (try? DirectoryServer.fixture(fixture)) ?? Data()
        return { url in FetchResult(response: TransferResponse(status: status, finalURL: url), body: body) }
    }

    /// The error `body` throws, as the control server answers it.
    func rpcError(_ body: () async throws(DirectoryError) -> some Any) async -> RPCError? {
        do {
            _ = try await body()
            Issue.record("expected an error")
            return nil
        } catch {
            return RPCError(error)
        }
    }

    @Test func searchAsksOnceThenServesFromTheCacheUntilItExpires() async throws {
        let fake = FakeDirectory(answer: Self.ok("search-podcast.json"))
        let directory = fake.directory()

        let first = try await directory.search(SearchParams(term: "Harbour  Lights"))
        let second = try await directory.search(SearchParams(term: "harbour lights", country: "us"))
        fake.advance(.seconds(3601))
        let third = try await directory.search(SearchParams(term: "harbour lights"))

        #expect(!first.cached && second.cached && !third.cached)
        #expect(first.term == "Harbour Lights" && first.country == "US" && first.limit == 50)
        #expect(first.podcasts.count == 3 && second.podcasts == first.podcasts)
        #expect(
            fake.urls == [
                "https://itunes.apple.com/search?media=podcast&entity=podcast&term=Harbour%20Lights&limit=50&country=US",
                "https://itunes.apple.com/search?media=podcast&entity=podcast&term=harbour%20lights&limit=50&country=US",
            ]
        )
        #expect(fake.requests.withLock { $0.first?.headers } == ["Accept: application/json"])
    }

    @Test func rateLimitSaysWhenToRetry() async throws {
        let fake = FakeDirectory(answer: Self.ok("search-empty.json"))
        var settings = DirectorySettings()
        settings.rateLimit = RateLimit(count: 2, interval: .seconds(60))
        let directory = fake.directory(settings)

        _ = try await directory.search(SearchParams(term: "one"))
        _ = try await directory.search(SearchParams(term: "two"))
        let error = await rpcError { () async throws(DirectoryError) in
            try await directory.search(SearchParams(term: "three"))
        }
        // A cached answer needs no token.
        let cached = try await directory.search(SearchParams(term: "one"))
        fake.advance(.seconds(30))
        let later = try await directory.search(SearchParams(term: "three"))

        #expect(error?.code == RPCError.rateLimitedCode)
        #expect(error?.reason == "rate_limited")
        #expect(error?.data?.details?["retry_after_seconds"] == "30")
        #expect(error?.message.contains("try again in 30 s") == true)
        #expect(cached.cached && !later.cached)
        #expect(fake.urls.count == 3)
    }

    @Test func parametersAreChecked() async throws {
        let fake = FakeDirectory(answer: Self.ok("search-empty.json"))
        var settings = DirectorySettings()
        settings.minimumTermLength = 3
        let directory = fake.directory(settings)

        let short = await rpcError { () async throws(DirectoryError) in
            try await directory.search(SearchParams(term: " ab  "))
        }
        let limit = await rpcError { () async throws(DirectoryError) in
            try await directory.search(SearchParams(term: "abc", limit: 201))
        }
        let country = await rpcError { () async throws(DirectoryError) in
            try await directory.top(TopParams(country: "USA"))
        }
        let id = await rpcError { () async throws(DirectoryError) in try await directory.lookup(LookupParams(id: 0)) }

        #expect(short?.code == RPCError.invalidParamsCode)
        #expect(short?.reason == "term_too_short")
        #expect(short?.data?.details == ["parameter": "term", "minimum": "3"])
        #expect(short?.message.contains("at least 3 characters") == true)
        #expect(limit?.data?.details?["parameter"] == "limit")
        #expect(country?.data?.details?["parameter"] == "country")
        #expect(id?.data?.details?["parameter"] == "id")
        #expect(fake.urls.isEmpty)
    }

    @Test func lookupFindsThePodcastOrSaysItIsUnknown() async throws {
        let fake = FakeDirectory { url throws(TransferError) in
            try await Self.ok(url.contains("id=1470039059") ? "lookup-podcast.json" : "search-empty.json")(url)
        }
        let directory = fake.directory()

        let found = try await directory.lookup(LookupParams(id: 1_470_039_059))
        let unknown = await rpcError { () async throws(DirectoryError) in
            try await directory.lookup(LookupParams(id: 42))
        }

        #expect(found.podcast.feedURL == "https://harbour.example.org/feed.xml")
        #expect(unknown?.reason == "unknown_podcast")
        #expect(fake.urls.first == "https://itunes.apple.com/lookup?id=1470039059&entity=podcast")
    }

    @Test func topReadsEitherChartShapeAndHonoursTheLimit() async throws {
        let fake = FakeDirectory { url throws(TransferError) in
            try await Self.ok(url.contains("/rss/") ? "top-podcasts-legacy.json" : "top-podcasts-v2.json")(url)
        }
        var settings = DirectorySettings()
        let current = try await fake.directory(settings).top(TopParams(country: "gb", limit: 2))
        settings.chartEndpoint = "https://itunes.apple.com/{country}/rss/toppodcasts/limit={limit}/json"
        let legacy = try await fake.directory(settings).top(TopParams())

        #expect(current.country == "GB")
        #expect(current.podcasts.map(\.id) == [1_535_809_341, 1_470_039_059])
        #expect(legacy.podcasts.map(\.id) == [1_535_809_341])
        #expect(
            fake.urls == [
                "https://rss.marketingtools.apple.com/api/v2/gb/podcasts/top/2/podcasts.json",
                "https://itunes.apple.com/us/rss/toppodcasts/limit=25/json",
            ]
        )
    }

    @Test func failuresBecomeDirectoryErrors() async throws {
        let fake = FakeDirectory { url throws(TransferError) in
            if url.contains("refused") { throw TransferError(code: .network, message: "Connecting failed.") }
            return try await Self.ok("search-empty.json", status: url.contains("busy") ? 503 : 404)(url)
        }
        let directory = fake.directory()

        let refused = await rpcError { () async throws(DirectoryError) in
            try await directory.search(SearchParams(term: "refused"))
        }
        let busy = await rpcError { () async throws(DirectoryError) in
            try await directory.search(SearchParams(term: "busy"))
        }
        let missing = await rpcError { () async throws(DirectoryError) in try await directory.top(TopParams()) }

        #expect(refused?.code == RPCError.directoryUnreachableCode)
        #expect(refused?.data?.details == ["error": "network"])
        #expect(busy?.code == RPCError.directoryHTTPErrorCode)
        #expect(busy?.data?.details == ["http_status": "503"])
        #expect(busy?.message.contains("try again later") == true)
        #expect(missing?.data?.details == ["http_status": "404"])
    }

    @Test func aHungDirectoryTimesOut() async throws {
        let fake = FakeDirectory { url throws(TransferError) in
            try? await Task.sleep(for: .seconds(600))
            throw TransferError(code: .cancelled, message: "stopped")
        }
        var settings = DirectorySettings()
        settings.requestTimeout = .milliseconds(200)
        let directory = fake.directory(settings)

        let error = await rpcError { () async throws(DirectoryError) in
            try await directory.search(SearchParams(term: "hang"))
        }

        // Only the deadline can produce a timeout: the fake would hang for 10 minutes and then say cancelled. No
        // bound on the elapsed time, which a busy two-core run stretches far beyond the deadline.
        #expect(error?.code == RPCError.directoryUnreachableCode)
        #expect(error?.data?.details == ["error": "timeout"])
    }

    @Test func cancellingTheCallerStopsTheSearch() async throws {
        let fake = FakeDirectory { url throws(TransferError) in
            try? await Task.sleep(for: .seconds(30))
            throw TransferError(code: .cancelled, message: "stopped")
        }
        let directory = fake.directory()
        let task = Task { try await directory.search(SearchParams(term: "slow")) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()

        var error: RPCError?
        if case .failure(let failure) = await task.result { error = (failure as? DirectoryError).map(RPCError.init) }

        #expect(error?.code == RPCError.cancelledCode)
        #expect(error?.reason == "cancelled")
        #expect(error?.message == "Cancelled: a newer 'search' on this connection replaced this one.")
    }

    @Test func reloadDropsTheCacheWhenTheEndpointChanges() async throws {
        let fake = FakeDirectory(answer: Self.ok("search-empty.json"))
        let directory = fake.directory()
        _ = try await directory.search(SearchParams(term: "tides"))
        var settings = DirectorySettings()
        await directory.update(settings)
        #expect(try await directory.search(SearchParams(term: "tides")).cached)
        settings.searchEndpoint = "http://127.0.0.1:1"
        await directory.update(settings)
        #expect(try await !directory.search(SearchParams(term: "tides")).cached)
        #expect(fake.urls.last?.hasPrefix("http://127.0.0.1:1/search?") == true)
    }
}

/// The directory's keys in singlecast.conf.
@Suite struct DirectoryConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, path: "/etc/sc.conf", home: "/home/u")
    }

    @Test func everyDirectoryKeyIsRead() throws {
        let configuration = try parse(
            """
            search_endpoint = http://127.0.0.1:8080/
            chart_endpoint = https://itunes.apple.com/{country}/rss/toppodcasts/limit={limit}/json
            search_country = de
            search_cache_ttl = 0
            search_rate_limit = 5/s
            search_min_term_length = 3
            """
        )
        #expect(configuration.searchEndpoint == "http://127.0.0.1:8080")
        #expect(configuration.chartEndpoint == "https://itunes.apple.com/{country}/rss/toppodcasts/limit={limit}/json")
        #expect(configuration.searchCountry == "DE")
        #expect(configuration.searchCacheTTL == .zero)
        #expect(configuration.searchRateLimit == RateLimit(count: 5, interval: .seconds(1)))
        #expect(configuration.searchMinTermLength == 3)
        let settings = DirectorySettings(configuration)
        #expect(settings.searchEndpoint == "http://127.0.0.1:8080")
        #expect(settings.country == "DE")
        #expect(settings.rateLimit == RateLimit(count: 5, interval: .seconds(1)))
        #expect(try parse("search_rate_limit = off").searchRateLimit == nil)
    }

    @Test(arguments: [
        ("search_endpoint = itunes.apple.com", "search_endpoint must be an http:// or https:// URL"),
        ("chart_endpoint = ftp://example.com", "chart_endpoint must be an http:// or https:// URL"),
        ("search_endpoint = https://", "search_endpoint must be an http:// or https:// URL"),
        ("search_country = USA", "search_country must be a two-letter ISO 3166 code"),
        ("search_cache_ttl = forever", "search_cache_ttl must be a duration"),
        ("search_rate_limit = 20/day", "search_rate_limit must be requests per time such as 20/min"),
        ("search_min_term_length = 0", "search_min_term_length must be a whole number from 1 to 100"),
    ])
    func badValuesNameTheKey(text: String, message: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.hasPrefix("/etc/sc.conf:1: \(message)"), "\(error)")
        }
    }
}
