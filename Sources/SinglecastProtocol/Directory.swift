import SinglecastSupport

/// Params of `search`.
package struct SearchParams: Codable, Hashable, Sendable {
    /// What to look for; leading, trailing and repeated spaces do not count.
    package var term: String
    /// Results wanted, 1…200; default 50.
    package var limit: Int?
    /// ISO 3166 two-letter store country; default: `search_country` in the configuration.
    package var country: String?

    package init(term: String, limit: Int? = nil, country: String? = nil) {
        self.term = term
        self.limit = limit
        self.country = country
    }
}

/// Params of `lookup`.
package struct LookupParams: Codable, Hashable, Sendable {
    /// The podcast's iTunes id (`collectionId`), as `search` and `top` report it.
    package var id: Int64

    package init(id: Int64) { self.id = id }
}

/// Params of `top`.
package struct TopParams: Codable, Hashable, Sendable {
    /// ISO 3166 two-letter store country; default: `search_country` in the configuration.
    package var country: String?
    /// Entries wanted, 1…200; default 25.
    package var limit: Int?

    package init(country: String? = nil, limit: Int? = nil) {
        self.country = country
        self.limit = limit
    }
}

/// One podcast as the directory (Apple's iTunes Search API) describes it.
package struct DirectoryPodcast: Codable, Hashable, Sendable {
    /// The iTunes id (`collectionId`), for `lookup`.
    package var id: Int64
    package var title: String
    package var author: String?
    /// The RSS feed; absent for podcasts Apple lists without a public feed.
    package var feedURL: String?
    /// Whether there is a feed to subscribe to (`feed_url` is present).
    package var subscribable: Bool
    /// The largest artwork Apple offers (600 px, else 100 px).
    package var artworkURL: String?
    package var episodeCount: Int?
    /// The primary genre, e.g. `History`.
    package var genre: String?
    /// ISO 8601 time of the latest episode, as Apple reports it.
    package var releaseDate: String?
    /// The podcast's page in Apple Podcasts.
    package var storeURL: String?

    package init(
        id: Int64,
        title: String,
        author: String? = nil,
        feedURL: String? = nil,
        artworkURL: String? = nil,
        episodeCount: Int? = nil,
        genre: String? = nil,
        releaseDate: String? = nil,
        storeURL: String? = nil
    ) {
        self.id = id
        self.title = title
        self.author = author
        self.feedURL = feedURL
        self.subscribable = feedURL != nil
        self.artworkURL = artworkURL
        self.episodeCount = episodeCount
        self.genre = genre
        self.releaseDate = releaseDate
        self.storeURL = storeURL
    }

    enum CodingKeys: String, CodingKey {
        case id
        case title
        case author
        case feedURL = "feed_url"
        case subscribable
        case artworkURL = "artwork_url"
        case episodeCount = "episode_count"
        case genre
        case releaseDate = "release_date"
        case storeURL = "store_url"
    }
}

/// Result of `search`.
package struct SearchResult: Codable, Hashable, Sendable {
    /// The term as searched (spaces normalized).
    package var term: String
    package var country: String
    package var limit: Int
    /// Served from the daemon's cache rather than a new request to the directory.
    package var cached: Bool
    package var podcasts: [DirectoryPodcast]

    package init(term: String, country: String, limit: Int, cached: Bool, podcasts: [DirectoryPodcast]) {
        self.term = term
        self.country = country
        self.limit = limit
        self.cached = cached
        self.podcasts = podcasts
    }
}

/// Result of `lookup`.
package struct LookupResult: Codable, Hashable, Sendable {
    package var cached: Bool
    package var podcast: DirectoryPodcast

    package init(cached: Bool, podcast: DirectoryPodcast) {
        self.cached = cached
        self.podcast = podcast
    }
}

/// One place in Apple's top-podcasts chart. Charts carry no feed URL: subscribing goes through `lookup`.
package struct ChartEntry: Codable, Hashable, Sendable {
    /// 1 for the top podcast.
    package var rank: Int
    /// The iTunes id, for `lookup`.
    package var id: Int64
    package var title: String
    package var author: String?
    package var genre: String?
    package var artworkURL: String?
    package var storeURL: String?

    package init(
        rank: Int,
        id: Int64,
        title: String,
        author: String? = nil,
        genre: String? = nil,
        artworkURL: String? = nil,
        storeURL: String? = nil
    ) {
        self.rank = rank
        self.id = id
        self.title = title
        self.author = author
        self.genre = genre
        self.artworkURL = artworkURL
        self.storeURL = storeURL
    }

    enum CodingKeys: String, CodingKey {
        case rank
        case id
        case title
        case author
        case genre
        case artworkURL = "artwork_url"
        case storeURL = "store_url"
    }
}

/// Result of `top`.
package struct TopResult: Codable, Hashable, Sendable {
    package var country: String
    package var cached: Bool
    package var podcasts: [ChartEntry]

    package init(country: String, cached: Bool, podcasts: [ChartEntry]) {
        self.country = country
        self.cached = cached
        self.podcasts = podcasts
    }
}

extension RPCError {
    // The directory's errors: -32010 ... -32019.
    package static let rateLimitedCode = -32010
    package static let cancelledCode = -32011
    package static let directoryUnreachableCode = -32012
    package static let directoryHTTPErrorCode = -32013
    package static let directoryBadResponseCode = -32014

    /// A search term shorter than `search_min_term_length`.
    package static func termTooShort(_ term: String, minimum: Int) -> RPCError {
        RPCError(
            code: invalidParamsCode,
            message: "Invalid params: the search term '\(term)' is too short; give at least \(minimum) "
                + "characters.",
            reason: "term_too_short",
            details: ["parameter": "term", "minimum": String(minimum)]
        )
    }

    /// `lookup` of an id the directory does not know.
    package static func unknownPodcast(_ id: Int64) -> RPCError {
        RPCError(
            code: invalidParamsCode,
            message: "Invalid params: the directory has no podcast with id \(id); 'singlecastctl search' finds ids.",
            reason: "unknown_podcast",
            details: ["id": String(id)]
        )
    }

    /// Too many requests to the directory; `retryAfterSeconds` says when the next one is allowed.
    package static func rateLimited(retryAfterSeconds: Int, limit: String) -> RPCError {
        RPCError(
            code: rateLimitedCode,
            message: "Rate limited: the directory is asked at most \(limit) (search_rate_limit); try again in "
                + "\(retryAfterSeconds) s.",
            reason: "rate_limited",
            details: ["retry_after_seconds": String(retryAfterSeconds), "limit": limit]
        )
    }

    /// A request that was stopped before it finished, e.g. a search replaced by a newer one on the same connection.
    package static func cancelled(_ detail: String) -> RPCError {
        RPCError(code: cancelledCode, message: "Cancelled: \(detail).", reason: "cancelled")
    }

    /// The directory could not be reached (DNS, refused, timeout, TLS…); `error` is the transfer's error code.
    package static func directoryUnreachable(_ detail: String, error: String) -> RPCError {
        RPCError(
            code: directoryUnreachableCode,
            message: "The podcast directory could not be reached: \(detail)",
            reason: "directory_unreachable",
            details: ["error": error]
        )
    }

    /// The directory answered with an HTTP error status.
    package static func directoryHTTPError(status: Int, url: String) -> RPCError {
        let hint =
            HTTPStatus.isTransient(status)
            ? "it is overloaded or down; try again later" : "check search_endpoint and chart_endpoint"
        return RPCError(
            code: directoryHTTPErrorCode,
            message: "The podcast directory answered HTTP \(status) for \(url); \(hint).",
            reason: "directory_http_error",
            details: ["http_status": String(status)]
        )
    }

    /// The directory's answer is not JSON, or not JSON of the expected shape.
    package static func directoryBadResponse(_ detail: String, url: String) -> RPCError {
        RPCError(
            code: directoryBadResponseCode,
            message: "The podcast directory sent an unusable answer for \(url): \(detail). Check search_endpoint "
                + "and chart_endpoint, or try again later.",
            reason: "directory_bad_response"
        )
    }
}
