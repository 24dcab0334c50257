import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

/// What `subscribe` found on a web page given instead of a feed.
package struct FeedDiscovery: Sendable, Hashable {
    /// The page's URL, without credentials.
    package var page: String
    /// The feed subscribed to: the page's first RSS feed (else its first feed).
    package var feed: String
    /// The other feeds the page names, in its order.
    package var others: [String]
}

/// Feed autodiscovery for `subscribe`: a URL that answers a web page naming its feeds in `<link rel="alternate">`
/// tags subscribes to the first RSS one, as a browser's or podcast app's "subscribe" does.
extension Subscriptions {
    /// Fetches the feed the page at `page` names first, for `podcast` (whose URL becomes that feed's); credentials
    /// given for the page go along only to the page's own host.
    ///
    /// - Returns: The feed's fetch, and what was found.
    func followDiscovered(
        _ feeds: [String],
        page: String,
        podcast: inout PodcastRecord
    ) async throws -> (FeedFetcher.Fetched, FeedDiscovery) {
        let shown = redactedURL(page)
        let usable = feeds.compactMap { try? HTTPURL($0).string }
        guard let feed = usable.first else {
            throw PodcastError(
                code: .feed(.invalid, url: shown),
                message: "The page at \(shown) names no http or https feed (it names \(feeds.joined(separator: ", ")))."
            )
        }
        if !HTTPURL.sameHost(feed, page) { (podcast.authUser, podcast.authPassword) = (nil, nil) }
        podcast.feedURL = feed
        let discovery = FeedDiscovery(page: shown, feed: feed, others: Array(usable.dropFirst()))
        logger.info("\(shown) is a web page; subscribing to the feed it names, \(redactedURL(feed))")
        let fetched = await refresher.fetch(podcast)
        if case .page = fetched {
            // One step only: a page naming a page is not followed further.
            throw PodcastError(
                code: .feed(.invalid, url: redactedURL(feed)),
                message:
                    "The page at \(shown) names the feed \(redactedURL(feed)), which is a web page too, not a feed."
            )
        }
        return (fetched, discovery)
    }
}
