import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `downloads` and `show` name the episode of an episode's download (its id is another number than the download's),
/// and the host a download waits on.
@Suite struct DownloadEpisodeTextTests {
    private static let episode = DownloadEpisode(
        id: 29,
        title: "A rather long episode title that a table has to cut somewhere near here",
        podcastID: 3,
        podcast: "The Daily"
    )

    @Test func downloadsShowTheEpisodeAndPodcastOfAnEpisodesDownload() {
        var ofEpisode = DownloadFixtures.download(31, .paused, file: "2026-11-28 - a-rather-long.mp3")
        ofEpisode.episode = Self.episode
        let byURL = DownloadFixtures.download(32, .queued, file: "loose.mp3")
        #expect(
            DownloadsCommand.render([ofEpisode, byURL], now: DownloadFixtures.now) == """
                ID  STATE   PROGRESS  SIZE  SPEED  ETA  EPISODE  PODCAST    NAME
                31  paused  -         -     -      -    29       The Daily  A rather long episode title that a table has to cut somewhe…
                32  queued  -         -     -      -    -        -          loose.mp3

                """
        )
        let shown = ShowCommand.render(ofEpisode, now: DownloadFixtures.now)
        #expect(shown.contains("Episode      29 \"\(Self.episode.title)\"\n"), "whole in show: \(shown)")
        #expect(shown.contains("Podcast      3 \"The Daily\"\n"))
        #expect(!ShowCommand.render(byURL, now: DownloadFixtures.now).contains("Episode"))
    }

    @Test func aDownloadWaitingForItsHostsSlotNamesTheHost() {
        var waiting = DownloadFixtures.download(7, .queued, file: "a.mp3")
        waiting.waitingForHost = "cdn.example.com"
        #expect(
            DownloadText.state(waiting, now: DownloadFixtures.now) == "queued (waiting for a slot on cdn.example.com)"
        )
        waiting.nextRetryAt = "2026-11-29T11:59:00Z"
        #expect(
            ShowCommand.render(waiting, now: DownloadFixtures.now).contains(
                "(due, waiting for a slot on cdn.example.com)"
            )
        )
    }

    @Test func anInputFileSkipsCommentsAndReportsBadLinesByNumber() {
        let text = """
            # my list
            https://cdn.example.com/a.mp3

              http://cdn.example.com/b.mp3\r
            ftp://cdn.example.com/c.mp3
            https://cdn.example.com/d e.mp3
            812
            0
            https:///nohost.mp3
            """
        let (words, problems) = EnqueueInputFile.parse(text)
        #expect(words == ["https://cdn.example.com/a.mp3", "http://cdn.example.com/b.mp3", "812"])
        #expect(problems.map(\.line) == [5, 6, 8, 9])
        #expect(
            problems.map { EnqueueInputFile.describe($0, in: "urls.txt") } == [
                "urls.txt:5: not an http or https URL: ftp://cdn.example.com/c.mp3\n",
                "urls.txt:6: one URL a line, without spaces: https://cdn.example.com/d e.mp3\n",
                "urls.txt:8: an episode ID is a positive whole number: 0\n",
                "urls.txt:9: the URL names no host: https:///nohost.mp3\n",
            ]
        )
    }
}

/// `enqueue 29` says which episode it took 29 for: a number meant for download 29 shows at once.
@Suite struct EnqueueEpisodeNamingTests {
    @Test func anEpisodesDownloadIsNamedByItsEpisode() {
        let episode = DownloadEpisode(id: 29, title: "Pilot", podcastID: 3, podcast: "The Daily")
        let result = EnqueueResult(downloads: [
            .init(
                id: 31,
                url: "https://cdn/p.mp3",
                existing: false,
                file: "/p/Pilot.mp3",
                state: .queued,
                episode: episode
            ),
            .init(
                id: 31,
                url: "https://cdn/p.mp3",
                existing: true,
                file: "/p/Pilot.mp3",
                state: .paused,
                episode: episode
            ),
            .init(id: 32, url: "https://cdn/u.mp3", existing: false, file: "/d/u.mp3", state: .queued),
        ])
        #expect(
            EnqueueCommand.render(result) == """
                Queued 31  episode 29 "Pilot" of "The Daily"  → /p/Pilot.mp3
                Already added 31  episode 29 "Pilot" of "The Daily"  paused; resume it with 'singlecastctl resume 31'
                Queued 32  https://cdn/u.mp3  → /d/u.mp3

                """
        )
    }
}

/// `enqueue -i FILE` against a scripted daemon: one request with the good lines, the bad ones on stderr, status 1.
@Suite struct EnqueueInputFileCommandTests {
    @Test func theGoodLinesGoInOneRequestAndTheBadOnesAreNamedByLine() async throws {
        try await withTemporaryDirectory { directory in
            let list = directory + "/urls.txt"
            try "# list\nhttps://a.example/1.mp3\n\nnot a url\nhttps://a.example/2.mp3\n812\n".write(
                toFile: list,
                atomically: true,
                encoding: .utf8
            )
            let reply = EnqueueResult(downloads: [
                .init(id: 1, url: "https://a.example/1.mp3", existing: false, file: "/d/1.mp3"),
                .init(id: 2, url: "https://a.example/2.mp3", existing: false, file: "/d/2.mp3"),
            ])
            let server = try TestServer(directory: directory, behavior: .reply([DownloadFixtures.resultLine(reply)]))
            let run = await runCLI(["enqueue", "https://a.example/0.mp3", "-i", list, "--socket", server.path])
            let request = try server.requestLine()
            #expect(
                request.contains(
                    #""urls":["https:\/\/a.example\/0.mp3","https:\/\/a.example\/1.mp3","https:\/\/a.example\/2.mp3"]"#
                )
                    || request.contains(
                        #""urls":["https://a.example/0.mp3","https://a.example/1.mp3","https://a.example/2.mp3"]"#
                    ),
                "\(request)"
            )
            #expect(request.contains(#""episodes":[812]"#), "\(request)")
            #expect(run.stderr == "\(list):4: one URL a line, without spaces: not a url\n")
            #expect(run.stdout.hasPrefix("Queued 1  https://a.example/1.mp3"))
            #expect(run.status == 1, "a line left out is a failure for scripts")
        }
    }
}
