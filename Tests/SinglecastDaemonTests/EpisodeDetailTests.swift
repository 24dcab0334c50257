import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// `episode`: everything known of episodes by id, their downloads and their podcasts.
@Suite struct EpisodeDetailTests {
    @Test func anEpisodeComesWithItsEnclosureDownloadAndPodcast() async throws {
        let enclosures = ["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            _ = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(1))
            )
            #expect(try await harness.completed(1))
            let episodes = try await harness.episodes()
            let detail = try await harness.subscriptions.episodeDetails([episodes[1].id, episodes[0].id])
            #expect(detail.episodes.map(\.record.id) == [episodes[1].id, episodes[0].id])
            let downloaded = try #require(detail.episodes.last)
            #expect(downloaded.record.enclosureURL == enclosures[0])
            #expect(downloaded.record.enclosureLength == Int64(PodcastHarness.body(for: enclosures[0]).count))
            #expect(downloaded.download?.id == episodes[0].downloadID)
            #expect(downloaded.download?.state == .completed)
            #expect(detail.episodes.first?.download == nil)
            #expect(detail.podcasts.map(\.record.title) == ["Show"])
            await #expect(throws: PodcastError.self) { try await harness.subscriptions.episodeDetails([999]) }
        }
    }
}
