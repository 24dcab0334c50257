import FoundationEssentials
import SinglecastHTTP
import SinglecastProtocol

/// The directory's part of the configuration.
package struct DirectorySettings: Sendable, Hashable {
    /// The iTunes Search API's base URL, without a trailing slash.
    package var searchEndpoint = "https://itunes.apple.com"
    /// The chart feed's base URL or template; see ``DirectoryQuery/chartURL(endpoint:country:limit:)``.
    package var chartEndpoint = "https://rss.marketingtools.apple.com"
    /// The store country used when a request names none.
    package var country = "US"
    /// How long answers are kept; zero keeps nothing.
    package var cacheTimeToLive: Duration = .seconds(3600)
    /// Requests to the directory allowed; `nil` = unlimited.
    package var rateLimit: RateLimit? = RateLimit(count: 20, interval: .seconds(60))
    /// The shortest search term, in characters.
    package var minimumTermLength = 2
    /// Connection settings shared with downloads (timeouts, redirects, `require_https`, user agent).
    package var transfer = TransferOptions()
    /// The longest a directory request may take altogether; the engine's own timeouts are for long downloads.
    package var requestTimeout: Duration = .seconds(20)
    /// The largest answer accepted.
    package var maximumResponseBytes: Int64 = 8 << 20

    package init() {}

    /// The settings `configuration` asks for.
    package init(_ configuration: DaemonConfiguration) {
        searchEndpoint = configuration.searchEndpoint
        chartEndpoint = configuration.chartEndpoint
        country = configuration.searchCountry
        cacheTimeToLive = configuration.searchCacheTTL
        rateLimit = configuration.searchRateLimit
        minimumTermLength = configuration.searchMinTermLength
        transfer.userAgent = "singlecast/\(SinglecastVersion.current)"
        transfer.connectTimeout = configuration.connectTimeout
        transfer.lowSpeedLimit = configuration.lowSpeedLimit
        transfer.lowSpeedTime = configuration.lowSpeedTime
        transfer.maxRedirects = configuration.maxRedirects
        transfer.requireHTTPS = configuration.requireHTTPS
    }
}

/// Searches Apple's podcast directory (the iTunes Search API and the top-podcasts chart) for the `search`, `lookup`
/// and `top` methods.
///
/// Answers are cached for ``DirectorySettings/cacheTimeToLive``; requests that reach the directory are limited by a
/// ``TokenBucket`` (Apple asks for about 20 a minute), and a request over the limit fails at once with
/// a ``DirectoryError`` (`rate_limited`) saying when to retry. Cancelling the calling task (the control
/// server does so when a newer `search` arrives on the same connection) stops the request and throws
/// a ``DirectoryError`` (`cancelled`).
package actor PodcastDirectory {
    /// Fetches one URL; ``HTTPEngine/fetch(_:)`` in the daemon, a stand-in in tests.
    package typealias Fetch = @Sendable (FetchRequest) async throws(TransferError) -> FetchResult

    private var settings: DirectorySettings
    private let fetch: Fetch
    private let now: @Sendable () -> ContinuousClock.Instant
    private var bucket: TokenBucket?
    private var searches: DirectoryCache<[DirectoryPodcast]>
    private var lookups: DirectoryCache<DirectoryPodcast>
    private var charts: DirectoryCache<[ChartEntry]>

    package static let defaultSearchLimit = 50
    package static let defaultChartLimit = 25
    package static let limits = 1...200
    package static let maximumTermLength = 300

    /// - Parameters:
    ///   - now: The clock for the cache and the rate limit.
    package init(
        settings: DirectorySettings,
        fetch: @escaping Fetch,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.settings = settings
        self.fetch = fetch
        self.now = now
        bucket = settings.rateLimit.map(TokenBucket.init)
        searches = DirectoryCache(timeToLive: settings.cacheTimeToLive)
        lookups = DirectoryCache(timeToLive: settings.cacheTimeToLive)
        charts = DirectoryCache(timeToLive: settings.cacheTimeToLive)
    }

    /// Applies a reloaded configuration: a new rate limit starts with a full bucket, new endpoints or a new cache
    /// time drop the cached answers.
    package func update(_ new: DirectorySettings) {
        if new.rateLimit != settings.rateLimit { bucket = new.rateLimit.map(TokenBucket.init) }
        if new.searchEndpoint != settings.searchEndpoint || new.chartEndpoint != settings.chartEndpoint
            || new.cacheTimeToLive != settings.cacheTimeToLive
        {
            searches = DirectoryCache(timeToLive: new.cacheTimeToLive)
            lookups = DirectoryCache(timeToLive: new.cacheTimeToLive)
            charts = DirectoryCache(timeToLive: new.cacheTimeToLive)
        }
        settings = new
    }

    /// The `search` method.
    package func search(_ params: SearchParams) async throws(DirectoryError) -> SearchResult {
        let term = DirectoryQuery.normalizedTerm(params.term)
        if term.count < settings.minimumTermLength {
            throw DirectoryError(
                code: .termTooShort(term: term, minimum: settings.minimumTermLength),
                message: "the search term '\(term)' is too short"
            )
        }
        if term.count > Self.maximumTermLength {
            throw .invalid("'term' may hold at most \(Self.maximumTermLength) characters", parameter: "term")
        }
        let limit = try Self.limit(params.limit, default: Self.defaultSearchLimit)
        let country = try country(params.country)
        let key = DirectoryQuery.searchKey(term: term, country: country, limit: limit)
        if let podcasts = searches.value(for: key, at: now()) {
            return SearchResult(term: term, country: country, limit: limit, cached: true, podcasts: podcasts)
        }
        let url = DirectoryQuery.searchURL(
            endpoint: settings.searchEndpoint,
            term: term,
            country: country,
            limit: limit
        )
        let (data, contentType) = try await get(url, what: "search")
        let podcasts = Array(try DirectoryResponse.podcasts(data, contentType: contentType, url: url).prefix(limit))
        searches.store(podcasts, for: key, at: now())
        return SearchResult(term: term, country: country, limit: limit, cached: false, podcasts: podcasts)
    }

    /// The `lookup` method.
    package func lookup(_ params: LookupParams) async throws(DirectoryError) -> LookupResult {
        guard params.id > 0 else {
            throw .invalid("'id' must be a positive iTunes id such as 1470039059", parameter: "id")
        }
        let key = "lookup|\(params.id)"
        if let podcast = lookups.value(for: key, at: now()) {
            return LookupResult(cached: true, podcast: podcast)
        }
        let url = DirectoryQuery.lookupURL(endpoint: settings.searchEndpoint, id: params.id)
        let (data, contentType) = try await get(url, what: "lookup")
        let podcasts = try DirectoryResponse.podcasts(data, contentType: contentType, url: url)
        guard let podcast = podcasts.first(where: { $0.id == params.id }) ?? podcasts.first else {
            throw DirectoryError(
                code: .unknownPodcast(params.id),
                message: "the directory has no podcast with id \(params.id)"
            )
        }
        lookups.store(podcast, for: key, at: now())
        return LookupResult(cached: false, podcast: podcast)
    }

    /// The `top` method.
    package func top(_ params: TopParams) async throws(DirectoryError) -> TopResult {
        let limit = try Self.limit(params.limit, default: Self.defaultChartLimit)
        let country = try country(params.country)
        let key = "top|\(country)|\(limit)"
        if let entries = charts.value(for: key, at: now()) {
            return TopResult(country: country, cached: true, podcasts: entries)
        }
        let url = DirectoryQuery.chartURL(endpoint: settings.chartEndpoint, country: country, limit: limit)
        let (data, contentType) = try await get(url, what: "chart")
        let entries = Array(try DirectoryResponse.chart(data, contentType: contentType, url: url).prefix(limit))
        charts.store(entries, for: key, at: now())
        return TopResult(country: country, cached: false, podcasts: entries)
    }

    // MARK: Parameters

    private static func limit(_ value: Int?, default: Int) throws(DirectoryError) -> Int {
        guard let value else { return `default` }
        guard limits.contains(value) else {
            throw .invalid(
                "'limit' must be from \(limits.lowerBound) to \(limits.upperBound), not \(value)",
                parameter: "limit"
            )
        }
        return value
    }

    private func country(_ value: String?) throws(DirectoryError) -> String {
        guard let value else { return settings.country }
        guard DirectoryQuery.isCountryCode(value) else {
            throw .invalid(
                "'country' must be a two-letter ISO 3166 code such as US or DE, not '\(value)'",
                parameter: "country"
            )
        }
        return value.uppercased()
    }

    // MARK: Requests

    /// The body of a `2xx` answer from `url`, after the rate limit allowed the request.
    private func get(_ url: String, what: String) async throws(DirectoryError) -> (Data, String?) {
        if Task.isCancelled { throw Self.cancelled(what) }
        if var bucket {
            let decision = bucket.take(at: now())
            self.bucket = bucket
            if case .denied(let retryAfter) = decision {
                let seconds = max(1, Int(retryAfter.seconds.rounded(.up)))
                throw DirectoryError(
                    code: .rateLimited(retryAfterSeconds: seconds, limit: bucket.limit.description),
                    message: "the directory is asked at most \(bucket.limit.description)"
                )
            }
        }
        let request = FetchRequest(
            url: url,
            headers: ["Accept: application/json"],
            maxBytes: settings.maximumResponseBytes,
            options: settings.transfer
        )
        let result = try await fetchWithDeadline(request, what: what)
        guard (200..<300).contains(result.response.status) else {
            throw DirectoryError(
                code: .httpStatus(result.response.status, url: url),
                message: "the podcast directory answered HTTP \(result.response.status) for \(url)"
            )
        }
        return (result.body, result.response.contentType)
    }

    /// Runs the fetch against ``DirectorySettings/requestTimeout``.
    private func fetchWithDeadline(_ request: FetchRequest, what: String) async throws(DirectoryError) -> FetchResult {
        let outcome = await fetchWithin(settings.requestTimeout, fetch, request)
        if Task.isCancelled { throw Self.cancelled(what) }
        switch outcome {
        case .success(let result)?:
            return result
        case .failure(let error)?:
            if error.code == .cancelled { throw Self.cancelled(what) }
            throw DirectoryError(code: .unreachable(transferError: error.code.rawValue), message: error.message)
        case nil:
            throw DirectoryError(
                code: .unreachable(transferError: TransferError.Code.timeout.rawValue),
                message: "\(redactedURL(request.url)) did not answer within \(Int(settings.requestTimeout.seconds)) s. "
                    + "Try again later."
            )
        }
    }

    private static func cancelled(_ what: String) -> DirectoryError {
        DirectoryError(
            code: .cancelled,
            message: what == "search"
                ? "a newer 'search' on this connection replaced this one"
                : "the \(what) request was stopped before it finished"
        )
    }
}
