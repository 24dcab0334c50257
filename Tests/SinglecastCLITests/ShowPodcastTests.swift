import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `show-podcast`: one podcast's feed, settings, rules and disk use.
@Suite struct ShowPodcastTests {
    @Test func showPodcastPrintsItsSettingsRulesAndDiskUse() async throws {
        var podcast = PodcastFixtures.daily
        podcast.folder = "The Daily (2)"
        podcast.refreshInterval = 21_600
        podcast.lastError = "the server answered HTTP 500"
        podcast.nextRefreshAt = "2026-11-29T14:02:11Z"
        let result = PodcastDetailResult(
            podcast: podcast,
            rules: [
                RulesResult.Rule(key: "title_exclude", value: "trailer", source: "podcast"),
                RulesResult.Rule(key: "delete_played_after", value: "7d", source: "configuration"),
            ],
            files: 3,
            diskBytes: 123_400_000
        )
        let (run, request) = try await DownloadCommandTests().exchange(["show-podcast", "daily"], result: result)
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(request == DownloadCommandTests.request("podcast", #"{"podcast":"daily"}"#))
        #expect(
            run.stdout == """
                Podcast        3
                Title          The Daily
                Feed           https://feeds.example.com/3.xml
                Folder         The Daily (2)
                Name template  configured
                Refresh every  6h
                Refreshed      \(Timestamps.text("2026-11-29T11:58:30Z", zone: .system))
                Next refresh   \(Timestamps.text("2026-11-29T14:02:11Z", zone: .system))
                Last error     the server answered HTTP 500
                Auto-download  latest:3
                Keep           5
                Episodes       120 (2 new)
                Disk use       3 files, 123.4 MB

                Rules:
                  title_exclude = trailer  (podcast)
                  delete_played_after = 7d  (configuration)

                """
        )
    }
}
