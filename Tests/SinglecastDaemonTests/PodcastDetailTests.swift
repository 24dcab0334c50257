import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// `podcast`: one podcast's settings, the rules that apply to it, and the disk its files take.
@Suite struct PodcastDetailTests {
    @Test func aPodcastComesWithItsRulesAndTheBytesOfItsFiles() async throws {
        let enclosures = ["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]
        let harness = try await PodcastHarness(enclosures: enclosures) { podcasts, _ in
            try? podcasts.rules.set(.deletePlayedAfter, to: "7d")
        }
        try await harness.whileRunning {
            _ = try await harness.subscriptions.subscribe(
                SubscribeCommand(
                    feed: .url(PodcastHarness.feedURL),
                    autoDownload: .latest(2),
                    rules: ["title_exclude": "trailer"]
                )
            )
            #expect(try await harness.completed(2))
            let details = try await harness.subscriptions.details("Show")
            #expect(details.podcast.record.title == "Show")
            #expect(details.files == 2)
            #expect(details.bytes == Int64(enclosures.map { PodcastHarness.body(for: $0).count }.reduce(0, +)))
            let rules = details.rules.map { "\($0.key.rawValue)=\($0.value) \($0.source.rawValue)" }
            #expect(rules.contains("title_exclude=trailer podcast"), "\(rules)")
            #expect(rules.contains("delete_played_after=7d configuration"), "\(rules)")
        }
    }
}
