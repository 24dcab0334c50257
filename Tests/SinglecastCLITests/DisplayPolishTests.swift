import Foundation
import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport
import Testing

/// Issue 20's polish: tables padded by display width, long lists and titles summarised in messages, one time
/// format and one duration format.
@Suite struct DisplayPolishTests {
    typealias Fixtures = PodcastFixtures

    // MARK: display width

    @Test func columnsLineUpWideAndCombiningCharacters() {
        let text = Formatting.columns([
            ["ID", "TITLE", "STATE"], ["1", "日本語のニュース", "new"], ["2", "Cafe\u{301} 🎧", "new"], ["3", "Plain", "-"],
        ])
        #expect(
            text == """
                ID  TITLE             STATE
                1   日本語のニュース  new
                2   Cafe\u{301} 🎧           new
                3   Plain             -

                """
        )
    }

    @Test func aWideTitleIsCutByColumnsAndNeverInsideACharacter() {
        let cell = Formatting.cell(String(repeating: "日本", count: 40))
        #expect(DisplayWidth.of(cell) <= Formatting.maximumCellWidth)
        #expect(cell == String(repeating: "日本", count: 14) + "日…")
        let family = Formatting.cell(String(repeating: "👨‍👩‍👧", count: 40))
        #expect(family == String(repeating: "👨‍👩‍👧", count: 29) + "…")
    }

    // MARK: summaries

    @Test func aLongListOfIdsInAMessageIsSummarised() {
        let result = SubscribeResult(podcast: Fixtures.daily, existing: true, queued: (1...5000).map(Int64.init))
        #expect(
            SubscribeCommand.render(result).contains(
                "Queued downloads 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … and 4,990 more\n"
            )
        )
        let marked = EpisodesMarkedParams(mark: "played", episodes: (1...1200).map(Int64.init), podcast: 3, at: "")
        #expect(
            PodcastText.markedEventLine(marked)
                == "podcast 3  marked played: 1,200 episodes (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … and 1,190 more)"
        )
    }

    @Test func aLongTitleInAMessageIsCutByDisplayWidth() {
        var podcast = Fixtures.daily
        podcast.title = String(repeating: "長い", count: 1000)
        let line = SubscribeCommand.render(SubscribeResult(podcast: podcast, existing: false, queued: []))
        #expect(line.hasPrefix("Subscribed 3  " + String(repeating: "長い", count: 19) + "長…  (120 episodes"))
    }

    // MARK: one duration and one time format

    @Test(
        arguments: [
            (0, "0s"), (45, "45s"), (60, "1m"), (423, "7m 3s"), (3600, "1h"), (7200, "2h"), (10_920, "3h 2m"),
            (10_925, "3h 2m"), (86_400, "1d"), (183_600, "2d 3h"), (274_359.8, "3d 4h"),
        ] as [(Double, String)]
    )
    func durationsShowTwoUnitsAtMost(_ seconds: Double, _ expected: String) {
        #expect(Formatting.duration(seconds: seconds) == expected)
    }

    @Test func everyCommandShowsTimesInLocalTimeOneWay() {
        let zone = LocalTimeZone.fixed(secondsFromUTC: 3600)
        let status = StatusCommand.render(FormattingTests.status, zone: zone)
        #expect(status.contains("Uptime              3d 4h (since 2026-11-26 09:00)\n"))
        #expect(status.contains("Last reload         2026-11-29 13:00, failed"))

        var podcast = Fixtures.daily
        podcast.nextRefreshAt = "2026-11-29T14:02:11Z"
        let detail = PodcastDetailResult(podcast: podcast, rules: [], files: 0, diskBytes: 0)
        #expect(ShowPodcastCommand.render(detail, zone: zone).contains("Next refresh   2026-11-29 15:02\n"))

        let episode = InboxResult(episodes: [Fixtures.episodes[0]], podcasts: [podcast])
        let shown = ShowEpisodeCommand.render(episode, zone: zone)
        #expect(shown.contains("Published  2026-11-29 00:30\n"))
        #expect(shown.contains("Duration   1h 2m\n"))

        var download = DownloadFixtures.completed
        download.addedAt = "2026-11-29T11:00:00Z"
        download.completedAt = "2026-11-29T11:05:00Z"
        let show = ShowCommand.render(download, now: DownloadFixtures.now, zone: zone)
        #expect(show.contains("Added        2026-11-29 12:00\n"))
        #expect(show.contains("Completed    2026-11-29 12:05\n"))

        var counts = StatusResult.Podcasts(subscribed: 1, failing: 0, gone: 0, nextRefreshAt: "2026-11-30T13:02:00Z")
        #expect(StatusCommand.podcastsSummary(counts, zone: zone) == "1 subscribed; next refresh 2026-11-30 14:02")
        counts.nextRefreshAt = nil
        #expect(StatusCommand.podcastsSummary(counts, zone: zone) == "1 subscribed")
    }
}
