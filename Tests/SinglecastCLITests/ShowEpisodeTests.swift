import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `show-episode`: one episode with everything known of it, its download and its podcast.
@Suite struct ShowEpisodeTests {
    typealias Fixtures = PodcastFixtures

    @Test func showEpisodePrintsItsEnclosureDownloadAndDescription() async throws {
        var episode = Fixtures.episode(812, "Tuesday", state: .completed)
        episode.description = "What happened.\nAnd why."
        episode.enclosureLength = 12_300_000
        episode.file = "/home/ada/Podcasts/The Daily/2026-11-28 Tuesday.mp3"
        let result = InboxResult(episodes: [episode], podcasts: [Fixtures.daily])
        let (run, request) = try await DownloadCommandTests().exchange(["show-episode", "812"], result: result)
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(request == DownloadCommandTests.request("episode", #"{"episodes":[812]}"#))
        #expect(
            run.stdout == """
                Episode    812
                Title      Tuesday
                Podcast    3 The Daily
                Published  \(Timestamps.text("2026-11-28T23:30:00Z", zone: .system))
                Duration   1h 2m
                Enclosure  https://cdn.example.com/812.mp3
                Type       audio/mpeg
                Size       12.3 MB
                State      downloaded
                Download   1812 (completed)
                File       /home/ada/Podcasts/The Daily/2026-11-28 Tuesday.mp3

                What happened.
                And why.

                """
        )
    }
}
