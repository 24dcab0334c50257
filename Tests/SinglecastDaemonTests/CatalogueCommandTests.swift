import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// The catalogue's commands in the domain's terms only: no request, result or event of the protocol here (this file
/// does not import SinglecastProtocol). The harness is a real SQLite store and queue in a temporary directory.
@Suite struct CatalogueCommandTests {
    private let enclosures = ["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]

    @Test func subscribeChangeAndListWithDomainValues() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        let subscribed = try await harness.subscriptions.subscribe(
            SubscribeCommand(feed: .url(PodcastHarness.feedURL))
        )
        #expect(!subscribed.existing)
        #expect(subscribed.queued.isEmpty)
        #expect(subscribed.podcast.record.title == "Show")
        #expect(subscribed.podcast.counts?.total == 2)
        #expect(subscribed.podcast.autoDownload == .off)

        // The same feed again changes the subscription that exists.
        let again = try await harness.subscriptions.subscribe(
            SubscribeCommand(feed: .url(PodcastHarness.feedURL), keep: 1)
        )
        #expect(again.existing)
        #expect(again.podcast.record.id == subscribed.podcast.record.id)
        #expect(again.podcast.record.keep == 1)

        let changed = try await harness.subscriptions.set(
            PodcastChange(podcast: "Show", folder: "Talk", refreshInterval: 600)
        )
        #expect(changed.record.folder == "Talk")
        #expect(changed.record.refreshInterval == 600_000)
        #expect(try await harness.store.podcasts().first?.folder == "Talk", "answered but not stored")

        let listing = try await harness.subscriptions.episodes(EpisodeQuery(podcast: "show", limit: 1, brief: true))
        #expect(listing.podcast.record.id == subscribed.podcast.record.id)
        #expect(listing.episodes.map(\.record.title) == ["Episode 2"])
        #expect(listing.episodes.first?.record.enclosureURL == nil, "a brief listing shows no enclosure")
    }

    @Test func aRefusedChangeIsADomainErrorAndStoresNothing() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        _ = try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(PodcastHarness.feedURL)))
        let refused = await #expect(throws: PodcastError.self) {
            try await harness.subscriptions.set(PodcastChange(podcast: "Show", folder: "../up"))
        }
        #expect(refused?.code == .invalid(parameter: "folder"))
        #expect(try await harness.store.podcasts().first?.folder == nil)
        let empty = await #expect(throws: PodcastError.self) {
            try await harness.subscriptions.set(PodcastChange(podcast: "Show"))
        }
        #expect(empty?.code == .invalid(parameter: "auto_download"))
        let unknown = await #expect(throws: PodcastError.self) {
            try await harness.subscriptions.unsubscribe(UnsubscribeCommand(podcast: "Other"))
        }
        #expect(unknown?.code == .unknownPodcast("Other"))
    }
}
