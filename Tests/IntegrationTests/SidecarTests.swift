import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// Chapters and transcripts saved beside episodes end to end: the real daemon, a feed, its episodes and their
/// `podcast:chapters` and `podcast:transcript` files served by a real nginx.
@Suite struct SidecarTests {
    @Test func savedBesideTheEpisodeRefusedWhenTooBigAndDeletedWithIt() throws {
        let site = try NginxServer()
        for guid in ["a", "b"] {
            _ = try site.serve(TestContent.mp3(count: 4096, filler: Character(guid).asciiValue ?? 0), as: "\(guid).mp3")
        }
        let chapters = Data(#"{"version":"1.2.0","chapters":[{"startTime":0,"title":"Intro"}]}"#.utf8)
        let english = Data("WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n".utf8)
        let german = Data("1\n00:00:00,000 --> 00:00:01,000\nHallo\n".utf8)
        let plain = Data("WEBVTT\n\n00:00.000 --> 00:01.000\nB\n".utf8)
        _ = try site.serve(chapters, as: "a.chapters.json")
        _ = try site.serve(english, as: "a.en.vtt")
        _ = try site.serve(german, as: "a.de.srt")
        _ = try site.serve(plain, as: "b.vtt")
        // Past the 5 MiB a chapters or transcript file may have.
        _ = try site.serve(Data(repeating: UInt8(ascii: " "), count: 6 << 20), as: "b.json")
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Side Cars</title>
            <item><title>Alpha</title><guid>a</guid><pubDate>27 Nov 2026 10:00:00 GMT</pubDate>
              <enclosure url="\(site.url("/a.mp3"))" type="audio/mpeg" length="4096"/>
              <podcast:chapters url="/a.chapters.json" type="application/json+chapters"/>
              <podcast:transcript url="/a.en.vtt" type="text/vtt" language="en" rel="captions"/>
              <podcast:transcript url="/a.de.srt" type="application/x-subrip" language="de"/>
            </item>
            <item><title>Beta</title><guid>b</guid><pubDate>26 Nov 2026 10:00:00 GMT</pubDate>
              <enclosure url="\(site.url("/b.mp3"))" type="audio/mpeg" length="4096"/>
              <podcast:transcript url="/b.json" type="application/json"/>
              <podcast:transcript url="/b.vtt" type="text/vtt"/>
            </item>
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.writeConfig("name_template = {podcast}/{title}.{ext}\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)

        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:2"}"#
        )
        #expect(try client.finished(subscribed.queued).allSatisfy { $0.state == .completed })
        let folder = daemon.root.file("data/singlecast/episodes/Side Cars")
        func names() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []) }
        let expected: Set<String> = [
            "Alpha.mp3", "Alpha.chapters.json", "Alpha.en.vtt", "Alpha.de.srt", "Beta.mp3", "Beta.vtt",
        ]
        #expect(eventually { names() == expected }, "\(names())")
        #expect(FileManager.default.contents(atPath: folder + "/Alpha.chapters.json") == chapters)
        #expect(FileManager.default.contents(atPath: folder + "/Alpha.en.vtt") == english)
        #expect(FileManager.default.contents(atPath: folder + "/Alpha.de.srt") == german)
        #expect(FileManager.default.contents(atPath: folder + "/Beta.vtt") == plain)

        let listed = try client.result(
            "episodes",
            as: EpisodesResult.self,
            params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
        )
        let ids = Dictionary(uniqueKeysWithValues: listed.episodes.map { ($0.guid ?? "", $0.id) })
        let (alpha, beta) = (try #require(ids["a"]), try #require(ids["b"]))

        // The oversize transcript is refused with its reason; the episode and its other transcript stay.
        var shown = try client.result("episode", as: InboxResult.self, params: #"{"episodes":[\#(beta)]}"#)
        let betaSidecars = try #require(shown.episodes.first?.sidecars)
        #expect(betaSidecars.map(\.state) == ["refused", "saved"])
        #expect(betaSidecars[0].error?.contains("5 MiB") == true, "\(betaSidecars[0])")
        #expect(betaSidecars[1].file == folder + "/Beta.vtt" && betaSidecars[1].mimeType == "text/vtt")
        #expect(shown.episodes.first?.downloadState == .completed)
        shown = try client.result("episode", as: InboxResult.self, params: #"{"episodes":[\#(alpha)]}"#)
        #expect(shown.episodes.first?.sidecars?.map(\.rel) == [nil, "captions", nil])
        #expect(
            shown.episodes.first?.sidecars?.map { "\($0.kind) \($0.language ?? "-") \($0.mimeType)" } == [
                "chapters - application/json+chapters", "transcript en text/vtt", "transcript de application/x-subrip",
            ]
        )

        // Deleting the episode takes its chapters and transcripts with it.
        let deleted = try client.result("delete", as: DeleteResult.self, params: #"{"episodes":[\#(alpha)]}"#)
        #expect(deleted.episodes == [alpha])
        #expect(names() == ["Beta.mp3", "Beta.vtt"])
        shown = try client.result("episode", as: InboxResult.self, params: #"{"episodes":[\#(alpha)]}"#)
        #expect(shown.episodes.first?.sidecars == nil)

        // Downloaded again, saved again; unsubscribing with the files leaves no folder behind.
        let again = try client.result("redownload", as: EnqueueResult.self, params: #"{"episodes":[\#(alpha)]}"#)
        _ = try client.finished(again.downloads.map(\.id))
        #expect(
            eventually { names().isSuperset(of: ["Alpha.mp3", "Alpha.chapters.json", "Alpha.en.vtt"]) },
            "\(names())"
        )
        // A rule deletes Beta (downloaded by the rules; Alpha was asked for): its transcript goes with it.
        _ = try client.result(
            "set",
            as: PodcastResult.self,
            params: #"{"podcast":"Side Cars","rules":{"delete_older_than":"1d"}}"#
        )
        #expect(eventually { names().isDisjoint(with: ["Beta.mp3", "Beta.vtt"]) }, "\(names())")
        #expect(names().contains("Alpha.en.vtt"), "\(names())")
        _ = try client.result(
            "unsubscribe",
            as: UnsubscribeResult.self,
            params: #"{"podcast":"Side Cars","delete_files":true}"#
        )
        #expect(!FileManager.default.fileExists(atPath: folder), "\(names())")
        #expect(daemon.stop() == 0)
    }

    @Test func aPrivateFeedsCredentialsGoToItsHostOnly() throws {
        let site = try NginxServer()
        let fault = try FaultServer()
        _ = try site.serve(TestContent.mp3(count: 4096, filler: 1), as: "p.mp3")
        // Both transcripts demand the feed's credentials; only the one on the feed's host (127.0.0.1) gets them.
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Private</title>
            <item><title>P</title><guid>p</guid>
              <enclosure url="\(site.url("/p.mp3"))" type="audio/mpeg" length="4096"/>
              <podcast:transcript url="\(fault.url("/basic-auth/u/pw/100"))" type="text/vtt" language="en"/>
              <podcast:transcript url="http://localhost:\(fault.port)/basic-auth/u/pw/100" type="text/vtt" language="de"/>
            </item>
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.writeConfig("name_template = {podcast}/{title}.{ext}\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","user":"u","password":"pw","auto_download":"latest:1"}"#
        )
        _ = try client.finished(subscribed.queued)
        let episode = try #require(
            try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"Private"}"#).episodes.first
        )
        var states: [String] = []
        #expect(
            try eventually {
                let shown = try client.result(
                    "episode",
                    as: InboxResult.self,
                    params: #"{"episodes":[\#(episode.id)]}"#
                )
                states = (shown.episodes.first?.sidecars ?? []).map {
                    "\($0.language ?? "") \($0.state) \($0.error ?? "")"
                }
                return !states.contains { $0.contains("wanted") } && states.count == 2
            },
            "\(states)"
        )
        #expect(states == ["en saved ", "de refused HTTP 401"])
        let folder = daemon.root.file("data/singlecast/episodes/Private")
        #expect(FileManager.default.contents(atPath: folder + "/P.en.vtt")?.count == 100)
        #expect(!FileManager.default.fileExists(atPath: folder + "/P.de.vtt"))
        #expect(daemon.stop() == 0)
    }

    @Test func whatAStopLeftBehindGoesAtTheNextStart() throws {
        let site = try NginxServer()
        _ = try site.serve(TestContent.mp3(count: 4096, filler: 2), as: "s.mp3")
        _ = try site.serve(Data(#"{"version":"1.2.0","chapters":[]}"#.utf8), as: "s.json")
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Stop</title>
            <item><title>S</title><guid>s</guid>
              <enclosure url="\(site.url("/s.mp3"))" type="audio/mpeg" length="4096"/>
              <podcast:chapters url="/s.json" type="application/json+chapters"/>
            </item>
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.writeConfig("name_template = {podcast}/{title}.{ext}\nuse_trash = false\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:1"}"#
        )
        let download = try #require(subscribed.queued.first)
        _ = try client.finished([download])
        let folder = daemon.root.file("data/singlecast/episodes/Stop")
        #expect(eventually { FileManager.default.fileExists(atPath: folder + "/S.chapters.json") })
        #expect(daemon.stop() == 0)

        // As if the daemon had stopped after deleting the episode's file and its download, before the chapters.
        try FileManager.default.removeItem(atPath: folder + "/S.mp3")
        let database = daemon.root.file("state/singlecast/singlecast.sqlite3")
        let status = try spawnAndWait(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    + "c.execute('UPDATE episodes SET download_id = NULL'); "
                    + "c.execute('DELETE FROM downloads WHERE id = ?', (int(sys.argv[2]),)); c.commit()",
                database, String(download),
            ],
            output: daemon.root.file("python.out")
        )
        #expect(status == 0)
        let restarted = DaemonProcess(root: daemon.root)
        try restarted.startAndWaitUntilReady()
        #expect(eventually { !FileManager.default.fileExists(atPath: folder + "/S.chapters.json") })
        #expect(restarted.stop() == 0)
    }
}
