import SinglecastStore

// What the catalogue's commands answer, in the domain's terms. The router turns them into results
// (`Router+PodcastsResults.swift`), and the event bus into events (`EventBus+Podcasts.swift`).

/// A podcast as the catalogue shows it: its record, its episode totals, and the auto-download its rules make.
package struct PodcastSummary: Sendable, Hashable {
    package var record: PodcastRecord
    /// `nil` when they could not be counted.
    package var counts: EpisodeCounts?
    /// The podcast's own policy over the configured one.
    package var autoDownload: EpisodePolicy.Fetch
}

/// What `subscribe` did.
package struct SubscribeOutcome: Sendable, Hashable {
    package var podcast: PodcastSummary
    /// The feed was subscribed to already; its settings were updated.
    package var existing: Bool
    /// Downloads the policy queued.
    package var queued: [Int64]
    /// The URL given was a web page, and this is the feed found on it.
    package var discovery: FeedDiscovery? = nil
}

/// What `unsubscribe` did.
package struct UnsubscribeOutcome: Sendable, Hashable {
    package var podcast: PodcastSummary
    /// Unfinished downloads it cancelled.
    package var cancelledDownloads: [Int64]
    package var deletedFiles: [String]
}

/// What `rules` found: the rules that apply, and what they would download, delete and skip now.
package struct RulesReport: Sendable, Hashable {
    package enum Source: String, Sendable, Hashable {
        case podcast
        case configuration
    }

    package struct Setting: Sendable, Hashable {
        package var key: EpisodeRules.Key
        package var value: String
        package var source: Source
    }

    /// An episode and why it is listed where it is (`nil` for one to download).
    package struct Entry: Sendable, Hashable {
        package var episode: EpisodeRecord
        package var reason: String?
    }

    package var podcast: PodcastSummary
    /// Changes were tried, not stored.
    package var dryRun: Bool
    package var autoDownload: EpisodePolicy.Fetch
    package var keep: Int?
    package var rules: [Setting]
    package var download: [Entry]
    package var delete: [Entry]
    package var skipped: [Entry]
}

/// One feed of an OPML import, and what became of it.
package struct ImportedFeed: Sendable, Hashable {
    package enum Outcome: Sendable, Hashable {
        case subscribed(podcast: Int64)
        case already(podcast: Int64)
        /// The refusal's own message: an entry of an import is not a request, so it has no JSON-RPC error.
        case failed(String)
    }

    /// Without credentials.
    package var url: String
    package var title: String?
    package var outcome: Outcome
}

/// The subscriptions as one OPML document.
package struct OPMLExport: Sendable, Hashable {
    package var document: String
    package var count: Int
}

/// What one podcast's refresh did.
package struct RefreshReport: Sendable, Hashable {
    package var id: Int64
    /// `nil` when only the id is known: the podcast was unsubscribed, or the refresh was stopped.
    package var podcast: PodcastSummary?
    package var outcome: RefreshOutcome
    package var newEpisodes: Int
    package var queued: [Int64]
    package var error: String?
}

/// The subscriptions at a glance, for `status`.
package struct PodcastOverview: Sendable, Hashable {
    package var subscribed: Int
    /// Whose last refresh failed; gone ones are counted apart.
    package var failing: Int
    package var gone: Int
    package var nextRefreshAt: Int64?
}
