import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `watch` with `podcast.*` events: one plain line each, or the raw lines with `--json`.
@Suite struct PodcastWatchTests {
    typealias Fixtures = PodcastFixtures

    func exchange(_ arguments: [String], reply: [String]) async throws -> (run: CLIRun, request: String) {
        try await DownloadCommandTests().exchange(arguments, reply: reply)
    }

    @Test func watchPrintsPodcastEventsAsPlainLines() async throws {
        var failed = Fixtures.failing
        failed.lastError = "the server answered HTTP 500"
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["podcasts"]}}"#,
            Fixtures.eventLine(.subscribed, Fixtures.daily),
            Fixtures.eventLine(.refreshed, Fixtures.daily, newEpisodes: 2),
            Fixtures.eventLine(.refreshed, Fixtures.podcast(6, "Quiet"), newEpisodes: 0),
            Fixtures.eventLine(.refreshed, failed, newEpisodes: 0),
            Fixtures.eventLine(.refreshed, Fixtures.gone, newEpisodes: 0),
            Fixtures.eventLine(.unsubscribed, Fixtures.daily),
            #"{"jsonrpc":"2.0","method":"podcast.artwork","params":{"podcast":"#
                + (try PodcastCommandTests.json(Fixtures.daily))
                .trimmingCharacters(in: .newlines) + "}}",
            // Params this client cannot read as a podcast: printed like any unknown event.
            #"{"jsonrpc":"2.0","method":"podcast.subscribed","params":{"at":"2026-11-29T12:04:00Z","odd":1}}"#,
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, request) = try await exchange(["watch", "--topic", "podcasts"], reply: lines)
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(request == DownloadCommandTests.request("watch", #"{"topics":["podcasts"]}"#))
        #expect(
            run.stdout == """
                podcast 3  subscribed The Daily  120 episodes, auto-download latest:3, keep 5
                podcast 3  refreshed The Daily  2 new episodes
                podcast 6  refreshed Quiet  no new episodes
                podcast 5  refreshed Flaky Feed  failed: the server answered HTTP 500
                podcast 4  refreshed Old Show  gone: the feed is gone (HTTP 410); it is checked again once a day
                podcast 3  unsubscribed The Daily
                podcast 3  artwork The Daily
                \(Timestamps.text("2026-11-29T12:04:00Z", zone: .system)) podcast.subscribed  {"odd":1}
                \(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping

                """
        )
    }

    @Test func watchPrintsABulkMarkAsOneLine() async throws {
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["episodes"]}}"#,
            #"{"jsonrpc":"2.0","method":"episode.played","params":{"at":"2026-11-29T12:00:00Z","episode":815,"podcast":3,"title":"Friday"}}"#,
            #"{"jsonrpc":"2.0","method":"episode.marked","params":{"at":"2026-11-29T12:01:00Z","count":3,"episodes":[815,814,813],"mark":"played","podcast":3}}"#,
            #"{"jsonrpc":"2.0","method":"episode.marked","params":{"at":"2026-11-29T12:02:00Z","count":2,"episodes":[815,12],"mark":"pinned"}}"#,
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, _) = try await exchange(["watch", "--topic", "episodes"], reply: lines)
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                episode 815  played Friday
                podcast 3  marked played: 3 episodes (815, 814, 813)
                episodes  marked pinned: 2 episodes (815, 12)
                \(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping

                """
        )
    }

    /// `--event` asks the daemon for those events alone; the connection's end ends the command.
    @Test func watchAsksForTheChosenEventsOnly() async throws {
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"events":["daemon.stopping","podcast.refreshed"],"topics":["daemon","podcasts"]}}"#,
            Fixtures.eventLine(.refreshed, Fixtures.daily, newEpisodes: 2),
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, request) = try await exchange(["watch", "--event", "podcast.refreshed", "--json"], reply: lines)
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(
            request == DownloadCommandTests.request("watch", #"{"events":["podcast.refreshed","daemon.stopping"]}"#)
        )
        #expect(run.stdout == lines.dropFirst().map { $0 + "\n" }.joined())
        let (_, both) = try await exchange(
            ["watch", "--topic", "downloads", "--event", "download.completed", "--event", "download.failed"],
            reply: [#"{"jsonrpc":"2.0","id":1,"result":{"topics":["downloads"]}}"#]
        )
        #expect(
            both
                == DownloadCommandTests.request(
                    "watch",
                    #"{"events":["download.completed","download.failed","daemon.stopping"],"topics":["downloads","daemon"]}"#
                )
        )
    }

    @Test func watchJSONPrintsPodcastEventsRaw() async throws {
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["daemon","downloads","podcasts"]}}"#,
            Fixtures.eventLine(.refreshed, Fixtures.daily, newEpisodes: 2),
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, _) = try await exchange(["watch", "--json"], reply: lines)
        #expect(run.status == 0)
        #expect(run.stdout == lines.dropFirst().map { $0 + "\n" }.joined())
    }
}
