import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `show-episode` lists the chapters and transcripts saved beside an episode, and why one is not.
@Suite struct ShowEpisodeSidecarTests {
    @Test func savedFilesAndRefusalsAreListedUnderTheFile() throws {
        var episode = PodcastFixtures.episode(812, "Tuesday", state: .completed)
        episode.file = "/p/Tuesday.mp3"
        episode.sidecars = [
            EpisodeSidecarInfo(
                kind: "chapters",
                language: nil,
                mimeType: "application/json+chapters",
                url: "https://a/c.json",
                state: "saved",
                file: "/p/Tuesday.chapters.json",
                error: nil
            ),
            EpisodeSidecarInfo(
                kind: "transcript",
                language: "en",
                mimeType: "text/vtt",
                url: "https://a/t.vtt",
                state: "saved",
                file: "/p/Tuesday.en.vtt",
                error: nil
            ),
            EpisodeSidecarInfo(
                kind: "transcript",
                language: nil,
                mimeType: "application/json",
                url: "https://a/t.json",
                state: "refused",
                file: nil,
                error: "too large"
            ),
            EpisodeSidecarInfo(
                kind: "transcript",
                language: "de",
                mimeType: "text/html",
                url: "https://a/t.html",
                state: "wanted",
                file: nil,
                error: "HTTP 503"
            ),
        ]
        let text = ShowEpisodeCommand.render(InboxResult(episodes: [episode], podcasts: [PodcastFixtures.daily]))
        let lines = text.split(separator: "\n").map(String.init)
        let file = try #require(lines.firstIndex { $0.hasPrefix("File") })
        #expect(
            Array(lines[(file + 1)...].prefix(4)) == [
                "Chapters       /p/Tuesday.chapters.json",
                "Transcript en  /p/Tuesday.en.vtt",
                "Transcript     https://a/t.json (refused: too large)",
                "Transcript de  https://a/t.html (not saved yet: HTTP 503)",
            ]
        )
    }
}
