import SinglecastFeeds
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

/// What one fetch of its feed does to a podcast's record. Pure: the one owner of both URL moves (the end of a
/// permanent redirect chain, `itunes:new-feed-url`), of `410`, and of how a success or a failure is recorded.
/// Storing the episodes is the caller's part.
package enum FeedUpdate {
    /// How long a feed that answered 410 waits before it is asked again.
    package static let goneRecheck: Int64 = 86_400_000

    /// A fetch of the feed as the refresher saw it.
    package enum Fetch: Sendable {
        /// A new version: its channel, the response's validators, and where a permanent redirect chain ended.
        case updated(Feed, etag: String?, lastModified: String?, movedTo: String?)
        case notModified(movedTo: String?)
        /// `410 Gone`.
        case gone
        case failed(String)
    }

    /// The podcast after the fetch, and what to tell.
    package struct Change: Sendable {
        package var podcast: PodcastRecord
        package var outcome: RefreshOutcome
        /// Why the refresh failed (and the podcast's `lastError`), when it did.
        package var failure: String?
        /// Lines for the log, in order.
        package var log: [LogLine]
    }

    package struct LogLine: Hashable, Sendable {
        package var level: LogLevel
        package var message: String
    }

    /// Applies a fetch to `podcast`.
    ///
    /// - Parameters:
    ///   - nextRefreshAt: When the podcast is refreshed next.
    ///   - urlTaken: Whether another subscription has a feed URL. The podcast never moves there: two subscriptions
    ///     of one feed would download its episodes twice.
    package static func apply(
        _ fetch: Fetch,
        to podcast: PodcastRecord,
        now: Int64,
        nextRefreshAt: Int64,
        urlTaken: (String) -> Bool
    ) -> Change {
        var podcast = podcast
        podcast.refreshedAt = now
        podcast.nextRefreshAt = nextRefreshAt
        var log: [LogLine] = []
        var moved = false
        /// Moves the podcast to `url` when it is a new http(s) URL no other subscription has.
        func move(to url: String?, _ why: String) {
            guard let url, let valid = try? HTTPURL(url), valid.string != podcast.feedURL, !urlTaken(valid.string)
            else { return }
            podcast.feedURL = valid.string
            moved = true
            log.append(
                LogLine(level: .notice, message: "feed of \(podcast.title) \(why): \(redactedURL(valid.string))")
            )
        }
        switch fetch {
        case .updated(let feed, let etag, let lastModified, let movedTo):
            move(to: movedTo, "moved permanently")
            if !feed.title.isEmpty { podcast.title = feed.title }
            podcast.author = feed.author ?? podcast.author
            podcast.description = feed.description
            podcast.link = feed.link ?? podcast.link
            podcast.language = feed.language ?? podcast.language
            podcast.artworkURL = feed.artworkURL ?? podcast.artworkURL
            podcast.etag = etag
            podcast.lastModified = lastModified
            podcast.succeededAt = now
            podcast.lastError = nil
            podcast.gone = false
            podcast.duplicateItems = feed.duplicateItems
            move(to: feed.newFeedURL, "announces a new URL")
            if feed.duplicateItems > 0 {
                log.append(
                    LogLine(
                        level: .info,
                        message:
                            "feed of \(ListSummary.title(podcast.title)) repeats \(ListSummary.count(feed.duplicateItems, "item")); the first of each "
                            + "is kept: " + feed.duplicateIdentities.joined(separator: ", ")
                    )
                )
            }
            return Change(podcast: podcast, outcome: moved ? .moved : .updated, failure: nil, log: log)
        case .notModified(let movedTo):
            move(to: movedTo, "moved permanently")
            podcast.succeededAt = now
            podcast.lastError = nil
            podcast.gone = false
            return Change(podcast: podcast, outcome: moved ? .moved : .notModified, failure: nil, log: log)
        case .gone:
            podcast.gone = true
            // A 410 may be a server's mistake: asked again a day later, not retired for good (any other answer
            // revives it), at the podcast's own pace when that is slower.
            podcast.nextRefreshAt = max(nextRefreshAt, now.saturatingAdd(goneRecheck))
            podcast.lastError = "the feed is gone (HTTP 410); it is checked again once a day"
            log.append(LogLine(level: .warning, message: "feed of \(podcast.title) is gone (HTTP 410)"))
            return Change(podcast: podcast, outcome: .gone, failure: podcast.lastError, log: log)
        case .failed(let message):
            podcast.lastError = message
            log.append(LogLine(level: .info, message: "refresh of \(podcast.title) failed: \(message)"))
            return Change(podcast: podcast, outcome: .failed, failure: message, log: log)
        }
    }
}
