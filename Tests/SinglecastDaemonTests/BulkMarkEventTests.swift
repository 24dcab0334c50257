import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// A mark of many episodes is one event, not one per episode; a mark of one is the event it always was.
@Suite struct BulkMarkEventTests {
    struct Line: Decodable {
        var method: String
        var params: Params
    }

    struct Params: Codable {
        var episode: Int64?
        var episodes: [Int64]?
        var count: Int?
        var mark: String?
        var podcast: Int64?
    }

    /// The events published until `end`, a line the test publishes itself after the marks.
    private func events(
        of harness: PodcastHarness,
        during marks: () async throws -> Void
    ) async throws -> [Line] {
        let (id, subscription) = harness.events.subscribe()
        harness.events.setTopics([.episodes], for: id)
        defer { harness.events.remove(id) }
        try await marks()
        harness.events.publish(.episodes, method: "end", params: Params())
        var lines: [Line] = []
        for await data in subscription {
            let line = try JSONDecoder().decode(Line.self, from: data)
            if line.method == "end" { break }
            lines.append(line)
        }
        return lines
    }

    @Test func markingAWholePodcastIsOneEventAndMarkingOneEpisodeIsAsBefore() async throws {
        let enclosures = (1...40).map { "http://cdn.example/e\($0).mp3" }
        let harness = try await PodcastHarness(enclosures: enclosures)
        let podcast = try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(PodcastHarness.feedURL)))
        let ids = try await harness.episodes().map(\.id)
        let lines = try await events(of: harness) {
            _ = try await harness.subscriptions.markPlayed(.wholePodcast("Show"), played: true)
            _ = try await harness.subscriptions.markPlayed(.episodes([ids[0]]), played: false)
            _ = try await harness.subscriptions.pin(.episodes(Array(ids.prefix(3))), pinned: true)
        }
        #expect(lines.map(\.method) == ["episode.marked", "episode.unplayed", "episode.marked"])
        let bulk = try #require(lines.first).params
        #expect(bulk.mark == "played")
        #expect(bulk.count == 40)
        #expect(Set(bulk.episodes ?? []) == Set(ids))
        #expect(bulk.podcast == podcast.podcast.record.id)
        #expect(lines[1].params.episode == ids[0])
        #expect(lines[2].params.mark == "pinned")
        #expect(Set(lines[2].params.episodes ?? []) == Set(ids.prefix(3)))
        #expect(lines[2].params.podcast == nil)
    }
}
