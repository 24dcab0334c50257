/// What one refresh of a feed came to; its raw value is the `outcome` of `refresh` results.
package enum RefreshOutcome: String, Sendable, Hashable {
    /// A new version of the feed was stored.
    case updated
    /// The server answered 304: nothing changed.
    case notModified = "not_modified"
    /// The feed's URL changed (a 301/308 chain, or `itunes:new-feed-url`); stored under the new URL.
    case moved
    /// The feed answered 410; it is asked again once a day.
    case gone
    /// The feed could not be fetched, read or stored; the last good episodes stay.
    case failed
}

/// Why a feed could not be used; the raw value is the `data.reason` of the `subscribe` error.
package enum FeedProblem: String, Sendable, Hashable {
    /// Not fetched: the network, the server's status, a deadline.
    case unreachable = "feed_unreachable"
    /// Fetched, but not a feed the parser can read.
    case invalid = "feed_invalid"
}
