import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The media check end to end: the real daemon, libmagic, the fault server's canned bodies (`/typed/<kind>/<name>`)
/// and a feed on a real nginx whose enclosures announce their types.
@Suite struct NotMediaTests {
    private func enqueue(_ client: LineClient, _ urls: [String], into directory: String) throws -> [Int64] {
        let params = EnqueueParams(urls: urls, directory: directory)
        let json = String(decoding: try WireCoding.encoder().encode(params), as: UTF8.self)
        return try client.result("enqueue", as: EnqueueResult.self, params: json).downloads.map(\.id)
    }

    /// A feed on `site` whose items (newest first, a day apart) announce each URL with its type.
    private func serveFeed(on site: NginxServer, _ items: [(title: String, url: String, type: String)]) throws -> String
    {
        let entries = items.enumerated().map { index, item in
            """
            <item><title>\(item.title)</title><guid>\(item.title.lowercased())</guid>\
            <pubDate>0\(2 - index) Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(item.url)" type="\(item.type)"/></item>
            """
        }
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Checked</title><link>https://example.com/</link>
            \(entries.joined(separator: "\n"))
            </channel></rss>
            """
        return try site.serve(Data(document.utf8), as: "feed.xml")
    }

    /// Subscribes to `feed` and queues its newest `latest` episodes.
    private func queueLatest(_ latest: Int, of feed: String, with client: LineClient) throws -> EnqueueResult {
        let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#).podcast
        return try client.result(
            "download",
            as: EnqueueResult.self,
            params: #"{"podcast":"\#(podcast.id)","latest":\#(latest)}"#
        )
    }

    @Test func anHTMLPageServedAsAudioFailsAsNotMediaUntilTheUserRetries() throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let directory = daemon.root.file("dl")
        let ids = try enqueue(
            client,
            [server.url("/typed/html/episode.mp3"), server.url("/typed/mp3/real.mp3")],
            into: directory
        )
        let done = try client.finished(ids)
        let (page, real) = (done[0], done[1])
        #expect(page.state == .failed, "\(page)")
        #expect(page.lastError?.code == "not_media")
        #expect(page.lastError?.message == "announced audio/mpeg but received an HTML page (text/html)")
        #expect(page.nextRetryAt == nil)
        #expect(page.attempts == 1)
        #expect(real.state == .completed, "\(real)")
        #expect(FileManager.default.contents(atPath: real.file)?.prefix(3) == Data("ID3".utf8))
        // Failed for good: neither a final file nor a partial one, and no second attempt by itself.
        usleep(1_500_000)
        #expect(try client.result("show", as: DownloadInfo.self, params: #"{"id":\#(ids[0])}"#).attempts == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["real.mp3"])
        #expect(daemon.log.contains("download \(ids[0]) failed: announced audio/mpeg but received an HTML page"))

        // The user's retry asks again; the server still answers with its page.
        _ = try client.result("retry", as: ChangedResult.self, params: #"{"ids":[\#(ids[0])]}"#)
        let again = try client.finished([ids[0]])[0]
        #expect(again.state == .failed)
        #expect(again.lastError?.code == "not_media")
        #expect(daemon.log.components(separatedBy: "download \(ids[0]) failed: announced").count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["real.mp3"])
        #expect(daemon.stop() == 0)
    }

    @Test func aFeedsEnclosureTypeIsWhatTheBodyIsCheckedAgainst() throws {
        let server = try FaultServer()
        let site = try NginxServer()
        // The server calls the page text/html, but the feed announced audio: that is what the episode should be.
        let page = server.url("/typed/html/page.mp3?type=text/html")
        // An MP3 where the feed announced video/mp4: plausible, kept, and noted in the log.
        let clip = server.url("/typed/mp3/clip.mp4?type=video/mp4")
        let feed = try serveFeed(on: site, [("Page", page, "audio/mpeg"), ("Clip", clip, "video/mp4")])
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let queued = try queueLatest(2, of: feed, with: client)
        let done = try client.finished(queued.downloads.map(\.id))
        let byURL = Dictionary(uniqueKeysWithValues: done.map { ($0.url, $0) })
        let failed = try #require(byURL[page])
        #expect(failed.state == .failed, "\(failed)")
        #expect(failed.lastError?.message == "announced audio/mpeg but received an HTML page (text/html)")
        #expect(!FileManager.default.fileExists(atPath: failed.file + ".part"))
        let kept = try #require(byURL[clip])
        #expect(kept.state == .completed, "\(kept)")
        #expect(FileManager.default.fileExists(atPath: kept.file))
        #expect(daemon.log.contains("download \(kept.id): announced video/mp4 but received audio/mpeg; keeping it"))
        #expect(daemon.stop() == 0)
    }

    /// The queue keeps what an episode's feed announced for the downloads it queued; after a restart it asks the
    /// store, so that the check still holds the body against the feed's type, not only the URL's extension.
    @Test func aFeedsEnclosureTypeStillCountsAfterARestart() throws {
        let server = try FaultServer()
        let site = try NginxServer()
        let page = server.url("/typed/html/page.mp3?type=text/html")
        let feed = try serveFeed(on: site, [("Page", page, "audio/mpeg")])
        // A window two hours away (UTC): the download waits across the restart, which opens the gate.
        let minute = Int(Date.now.timeIntervalSince1970) / 60
        func clock(_ minute: Int) -> String { String(format: "%02d:%02d", minute % 1440 / 60, minute % 60) }
        let daemon = DaemonProcess(extraEnvironment: ["TZ": "UTC"])
        try daemon.writeConfig("download_window = \(clock(minute + 120))-\(clock(minute + 180))\n")
        try daemon.startAndWaitUntilReady()
        var client = try LineClient(path: daemon.socketPath)
        let queued = try queueLatest(1, of: feed, with: client)
        let id = try #require(queued.downloads.first?.id)
        #expect(try client.result("show", as: DownloadInfo.self, params: #"{"id":\#(id)}"#).state == .paused)
        #expect(daemon.stop() == 0)

        try daemon.writeConfig("")
        let again = DaemonProcess(root: daemon.root, extraEnvironment: ["TZ": "UTC"])
        try again.startAndWaitUntilReady()
        client = try LineClient(path: again.socketPath)
        let failed = try #require(try client.finished([id]).first)
        #expect(failed.state == .failed, "\(failed)")
        // From the feed: the URL alone would say ".mp3".
        #expect(failed.lastError?.message == "announced audio/mpeg but received an HTML page (text/html)")
        #expect(again.stop() == 0)
    }

    @Test func withoutLibmagicsDatabaseNothingIsCheckedAndThatIsLoggedOnce() throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        // libmagic reads its database from $MAGIC when set: here one that does not exist.
        daemon.environment["MAGIC"] = daemon.root.file("no-such-magic")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let urls = [server.url("/typed/html/one.mp3"), server.url("/typed/html/two.mp3")]
        let params = String(
            decoding: try WireCoding.encoder().encode(EnqueueParams(urls: urls, directory: daemon.root.file("dl"))),
            as: UTF8.self
        )
        let ids = try client.result("enqueue", as: EnqueueResult.self, params: params).downloads.map(\.id)
        let done = try client.finished(ids)
        #expect(done.map(\.state) == [.completed, .completed], "\(done)")
        #expect(daemon.log.components(separatedBy: "cannot load libmagic's database").count == 2, "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }
}
