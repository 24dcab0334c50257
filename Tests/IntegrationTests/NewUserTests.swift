import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a new user hit, end to end against the real daemon and a real nginx: shared files, cleared lists, files
/// deleted by hand, reused ids, credentials in URLs, half-refused requests and the events that describe them.
@Suite struct NewUserTests {
    /// An RSS feed whose items point at `enclosures` (guid = the file name), newest first.
    private static func feed(_ title: String, _ enclosures: [String]) -> Data {
        let items = enclosures.enumerated().map { index, url in
            """
            <item><title>\(title) \((url as NSString).lastPathComponent)</title>
            <guid isPermaLink="false">\(title)-\(index)</guid>
            <pubDate>\(String(format: "%02d", 28 - index)) Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(url)" type="audio/mpeg" length="4096"/></item>
            """
        }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>\(title)</title><link>https://example.com/</link>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8
        )
    }

    private func error(_ client: LineClient, _ method: String, _ params: String?) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) succeeded unexpectedly: \(value)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }

    private func episodes(_ client: LineClient, _ podcast: Int64) throws -> [EpisodeInfo] {
        try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast)"}"#).episodes
    }

    @Test func unsubscribingOnePodcastKeepsTheFileAnotherPodcastShares() throws {
        let site = try NginxServer()
        let shared = try site.serve(TestContent.mp3(count: 4096, filler: 7), as: "shared.mp3")
        let a = try site.serve(Self.feed("Alpha", [shared]), as: "a.xml")
        let b = try site.serve(Self.feed("Beta", [shared]), as: "b.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let alpha = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(a)"}"#).podcast
        let beta = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(b)"}"#).podcast
        // Both episodes queued while the first download is live: they share it, and its one file.
        let ids = try [alpha.id, beta.id].map { try #require(try episodes(client, $0).first?.id) }
        let queued = try client.result("enqueue", as: EnqueueResult.self, params: #"{"episodes":\#(ids)}"#)
        #expect(queued.downloads.map(\.existing) == [false, true])
        let done = try client.finished([queued.downloads[0].id])
        #expect(done.map(\.state) == [.completed])
        let file = try #require(done.first?.file)
        #expect(try episodes(client, beta.id).map(\.downloadID) == [done[0].id])

        let removed = try client.result(
            "unsubscribe",
            as: UnsubscribeResult.self,
            params: #"{"podcast":"\#(beta.id)","delete_files":true}"#
        )
        #expect(removed.deletedFiles.isEmpty, "Alpha's episode still has that file")
        #expect(FileManager.default.fileExists(atPath: file))
        let left = try episodes(client, alpha.id)
        #expect(left.map(\.downloadState) == [.completed])

        // Once nothing else refers to it, unsubscribing does delete it.
        let last = try client.result(
            "unsubscribe",
            as: UnsubscribeResult.self,
            params: #"{"podcast":"\#(alpha.id)","delete_files":true}"#
        )
        #expect(last.deletedFiles == [file])
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(daemon.stop() == 0)
    }

    @Test func clearingCompletedDownloadsKeepsEpisodesWithTheirFiles() throws {
        let site = try NginxServer()
        let media = try site.serve(TestContent.mp3(count: 4096, filler: 3), as: "one.mp3")
        let feed = try site.serve(Self.feed("Gamma", [media]), as: "g.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#).podcast
        let queued = try client.result(
            "download",
            as: EnqueueResult.self,
            params: #"{"podcast":"\#(podcast.id)","latest":1}"#
        )
        let file = try #require(try client.finished(queued.downloads.map(\.id)).first?.file)

        let cleared = try client.result("clear", as: ChangedResult.self, params: #"{"completed":true}"#)
        #expect(cleared.changed == queued.downloads.map(\.id))
        #expect(try client.result("downloads", as: DownloadsResult.self).downloads.isEmpty)
        #expect(try episodes(client, podcast.id).map(\.downloadState) == [.completed], "the episode lost its file")

        // The file is still the podcast's: unsubscribing with its files deletes it.
        let removed = try client.result(
            "unsubscribe",
            as: UnsubscribeResult.self,
            params: #"{"podcast":"\#(podcast.id)","delete_files":true}"#
        )
        #expect(removed.deletedFiles == [file])
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(daemon.stop() == 0)
    }

    @Test func anEpisodeWhoseFileWasDeletedByHandIsFetchedAgain() throws {
        let site = try NginxServer()
        let media = try site.serve(TestContent.mp3(count: 4096, filler: 5), as: "again.mp3")
        let feed = try site.serve(Self.feed("Delta", [media]), as: "d.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#).podcast
        let ask = #"{"podcast":"\#(podcast.id)","latest":1}"#
        let first = try client.result("download", as: EnqueueResult.self, params: ask)
        let file = try #require(try client.finished(first.downloads.map(\.id)).first?.file)
        #expect(unlink(file) == 0)

        let second = try client.result("download", as: EnqueueResult.self, params: ask)
        #expect(second.downloads.map(\.existing) == [false], "answered 'already queued' for a file that is gone")
        let done = try client.finished(second.downloads.map(\.id))
        #expect(done.map(\.state) == [.completed])
        #expect(sameBytes(FileManager.default.contents(atPath: file), TestContent.mp3(count: 4096, filler: 5)))
        #expect(daemon.stop() == 0)
    }

    @Test func podcastAndEpisodeIdsAreNeverReused() throws {
        let site = try NginxServer()
        let feeds = try ["p", "q", "r"].map { name in
            try site.serve(Self.feed(name, [site.url("/\(name).mp3")]), as: "\(name).xml")
        }
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let p = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feeds[0])"}"#).podcast
        let q = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feeds[1])"}"#).podcast
        let qEpisode = try #require(try episodes(client, q.id).first?.id)
        _ = try client.result("unsubscribe", as: UnsubscribeResult.self, params: #"{"podcast":"\#(q.id)"}"#)
        #expect(daemon.stop() == 0)
        // Across a restart too.
        let again = DaemonProcess(root: daemon.root)
        try again.startAndWaitUntilReady()
        let client2 = try LineClient(path: again.socketPath)
        let r = try client2.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feeds[2])"}"#).podcast
        #expect(r.id > q.id && r.id != p.id, "podcast id \(q.id) was given to another podcast")
        let rEpisode = try #require(try episodes(client2, r.id).first?.id)
        #expect(rEpisode > qEpisode, "episode id \(qEpisode) was given to another episode")
        #expect(again.stop() == 0)
    }

    @Test func credentialsInAnEnqueuedURLAreMovedOutOfIt() throws {
        let faults = try FaultServer()
        let secret = faults.url("/basic-auth/bob/hunter2/1000").replacingOccurrences(
            of: "http://",
            with: "http://bob:hunter2@"
        )
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let queued = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(secret)"],"directory":"\#(daemon.root.file("dl"))"}"#
        )
        #expect(!queued.downloads[0].url.contains("bob:hunter2@"))
        let done = try client.finished(queued.downloads.map(\.id))
        #expect(done[0].state == .completed, "the credentials were not used: \(done[0])")
        #expect(done[0].hasCredentials)
        #expect(!done[0].url.contains("bob:hunter2@") && !done[0].url.contains("bob@"))
        let listed = try client.result("downloads", as: DownloadsResult.self).downloads
        #expect(listed.allSatisfy { !$0.url.contains("bob:hunter2@") })
        #expect(daemon.stop() == 0)
    }

    @Test func aMixedEnqueueWithAnUnknownEpisodeQueuesNothing() throws {
        let site = try NginxServer()
        let url = try site.serve(TestContent.mp3(count: 1000, filler: 1), as: "plain.mp3")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let refused = try error(client, "enqueue", #"{"urls":["\#(url)"],"episodes":[999]}"#)
        #expect(refused.reason == "unknown_episode")
        #expect(try client.result("downloads", as: DownloadsResult.self).downloads.isEmpty, "the URL was queued")
        #expect(daemon.stop() == 0)
    }

    @Test func aCancelledDownloadIsAnnouncedAsCancelled() throws {
        let faults = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let watcher = try LineClient(path: daemon.socketPath)
        _ = try watcher.result("watch", as: WatchResult.self, params: #"{"topics":["downloads"]}"#)
        let client = try LineClient(path: daemon.socketPath)
        let queued = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(faults.url("/slow/1000000/2000"))"],"directory":"\#(daemon.root.file("dl"))"}"#
        )
        let id = queued.downloads[0].id
        _ = try client.result("cancel", as: ChangedResult.self, params: #"{"ids":[\#(id)]}"#)
        var removed: DownloadInfo?
        while removed == nil, let line = try watcher.readLine() {
            guard case .notification(let method, let params?) = try RPCIncoming.parse(line: Array(line.utf8)),
                method == "download.removed"
            else { continue }
            removed = try WireCoding.decode(DownloadEventParams.self, from: params).download
        }
        #expect(removed?.id == id)
        #expect(removed?.state.rawValue == "cancelled")
        #expect(daemon.stop() == 0)
    }

    @Test func movingAFinishedDownloadIsRefused() throws {
        let site = try NginxServer()
        let url = try site.serve(TestContent.mp3(count: 1000, filler: 2), as: "done.mp3")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let queued = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(url)"],"directory":"\#(daemon.root.file("dl"))"}"#
        )
        _ = try client.finished(queued.downloads.map(\.id))
        let refused = try error(client, "move", #"{"id":\#(queued.downloads[0].id),"top":true}"#)
        #expect(refused.reason == "not_movable")
        #expect(refused.message.contains("completed"))
        #expect(daemon.stop() == 0)
    }

    @Test func aFeedThatTricklesForeverDoesNotHoldUpTheShutdown() throws {
        let site = try NginxServer()
        let feed = try site.serve(Self.feed("Slow", [site.url("/s.mp3")]), as: "s.xml")
        let faults = try FaultServer()
        // The first fetch is redirected to the real feed; every later one trickles, fast enough for the low-speed
        // limit, for ten minutes.
        let url = faults.url("/trickle-after/1/shutdown?url=\(feed)")
        let daemon = DaemonProcess()
        try daemon.writeConfig("shutdown_timeout = 2s\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(url)"}"#)
        let refresher = try LineClient(path: daemon.socketPath)
        try refresher.send(#"{"jsonrpc":"2.0","id":7,"method":"refresh"}"# + "\n")
        usleep(1_500_000)  // the refresh is trickling now

        let stopping = Date.now
        daemon.signal(SIGTERM)
        let status = daemon.waitForExit(timeout: 30)
        let took = Date.now.timeIntervalSince(stopping)
        #expect(status == 0, "killed after 30 s: the shutdown waited for the refresh")
        #expect(took < 10, "the stop took \(took) s with shutdown_timeout = 2s")
    }

    @Test func repeatedItemsOfAFeedAreCountedOnItsPodcast() throws {
        let site = try NginxServer()
        let item = #"<item><title>T</title><guid>same</guid><enclosure url="http://h/x.mp3" type="audio/mpeg"/></item>"#
        let feed = try site.serve(
            Data(#"<rss version="2.0"><channel><title>Echo</title>\#(item)\#(item)\#(item)</channel></rss>"#.utf8),
            as: "e.xml"
        )
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#).podcast
        #expect(podcast.episodes == 1)
        #expect(podcast.duplicateItems == 2)
        #expect(daemon.stop() == 0)
        let log = (try? String(contentsOfFile: daemon.stderrPath, encoding: .utf8)) ?? ""
        #expect(log.contains("repeats 2 items"), "\(log)")
    }

    @Test func deleteAndRedownloadOneEpisode() throws {
        let site = try NginxServer()
        let media = try site.serve(TestContent.mp3(count: 4096, filler: 4), as: "del.mp3")
        let feed = try site.serve(Self.feed("Epsilon", [media]), as: "eps.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#).podcast
        let episode = try #require(try episodes(client, podcast.id).first?.id)
        let first = try client.result("enqueue", as: EnqueueResult.self, params: #"{"episodes":[\#(episode)]}"#)
        let file = try #require(try client.finished(first.downloads.map(\.id)).first?.file)

        let deleted = try client.result("delete", as: DeleteResult.self, params: #"{"episodes":[\#(episode)]}"#)
        #expect(deleted.episodes == [episode])
        #expect(deleted.deletedFiles == [file])
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try episodes(client, podcast.id).map(\.downloadID) == [nil])
        let again = try client.result("delete", as: DeleteResult.self, params: #"{"episodes":[\#(episode)]}"#)
        #expect(again.episodes.isEmpty && again.deletedFiles.isEmpty, "nothing left to delete")

        let queued = try client.result("redownload", as: EnqueueResult.self, params: #"{"episodes":[\#(episode)]}"#)
        #expect(queued.downloads.map(\.existing) == [false])
        _ = try client.finished(queued.downloads.map(\.id))
        #expect(sameBytes(FileManager.default.contents(atPath: file), TestContent.mp3(count: 4096, filler: 4)))
        // A redownload of a file that is there fetches it anew.
        let twice = try client.result("redownload", as: EnqueueResult.self, params: #"{"episodes":[\#(episode)]}"#)
        #expect(twice.downloads.map(\.existing) == [false])
        #expect(try client.finished(twice.downloads.map(\.id)).map(\.file) == [file])
        let missing = try error(client, "delete", #"{"episodes":[\#(episode + 1000)]}"#)
        #expect(missing.reason == "unknown_episode")
        #expect(daemon.stop() == 0)
    }

    @Test func theInboxListsNewEpisodesOfEveryPodcastNewestFirst() throws {
        let site = try NginxServer()
        let one = try site.serve(Self.feed("Zeta", [site.url("/z1.mp3")]), as: "z.xml")
        let two = try site.serve(Self.feed("Eta", [site.url("/e1.mp3")]), as: "e.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(one)"}"#)
        _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(two)"}"#)
        #expect(try client.result("inbox", as: InboxResult.self).episodes.isEmpty, "the back catalogue is not new")
        usleep(1_100_000)  // a new Last-Modified second for nginx
        // Newest first: the feed builder dates items 28, 27… Nov; Eta's new item is the newest of all.
        _ = try site.serve(Self.feed("Zeta", [site.url("/z2.mp3"), site.url("/z1.mp3")]), as: "z.xml")
        _ = try site.serve(
            Self.feed("Eta", [site.url("/e3.mp3"), site.url("/e2.mp3"), site.url("/e1.mp3")]),
            as: "e.xml"
        )
        _ = try client.result("refresh", as: RefreshResult.self)
        let inbox = try client.result("inbox", as: InboxResult.self)
        #expect(inbox.episodes.count == 3)
        #expect(Set(inbox.podcasts.map(\.title)) == ["Zeta", "Eta"])
        let dates = inbox.episodes.compactMap(\.published)
        #expect(dates == dates.sorted(by: >), "not newest first: \(dates)")
        let limited = try client.result("inbox", as: InboxResult.self, params: #"{"limit":1}"#)
        #expect(limited.episodes.count == 1)
        #expect(daemon.stop() == 0)
    }

    @Test func aPodcastCanHaveItsOwnNamesFolderAndRefreshInterval() throws {
        let site = try NginxServer()
        let media = try site.serve(TestContent.mp3(count: 4096, filler: 6), as: "own.mp3")
        let feed = try site.serve(Self.feed("Theta", [media]), as: "t.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#).podcast
        let changed = try client.result(
            "set",
            as: PodcastResult.self,
            params:
                #"{"podcast":"\#(podcast.id)","folder":"News","name_template":"{podcast}/{title}.{ext}","refresh_interval":600}"#
        ).podcast
        #expect(changed.folder == "News" && changed.nameTemplate == "{podcast}/{title}.{ext}")
        #expect(changed.refreshInterval == 600)
        let next = try #require(changed.nextRefreshAt.flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(next.timeIntervalSinceNow < 700, "the next refresh does not follow the new interval: \(next)")
        let queued = try client.result(
            "download",
            as: EnqueueResult.self,
            params: #"{"podcast":"\#(podcast.id)","latest":1}"#
        )
        #expect(queued.downloads.map(\.file) == [daemon.root.file("data/singlecast/episodes/News/Theta own.mp3.mp3")])

        for (params, parameter) in [
            (#""folder":"../escape""#, "folder"), (#""name_template":"{nope}""#, "name_template"),
            (#""refresh_interval":5"#, "refresh_interval"),
        ] {
            let refused = try error(client, "set", #"{"podcast":"\#(podcast.id)",\#(params)}"#)
            #expect(refused.reason == "invalid_params" && refused.message.contains(parameter), "\(refused.message)")
        }
        let reset = try client.result(
            "set",
            as: PodcastResult.self,
            params: #"{"podcast":"\#(podcast.id)","folder":"","name_template":"","refresh_interval":0}"#
        ).podcast
        #expect(reset.folder == nil && reset.nameTemplate == nil && reset.refreshInterval == nil)
        #expect(daemon.stop() == 0)
    }

    @Test func importNeverEchoesCredentials() throws {
        let site = try NginxServer()
        let feed = try site.serve(Self.feed("Iota", [site.url("/i.mp3")]), as: "i.xml")
        let secret = feed.replacingOccurrences(of: "http://", with: "http://alice:s3cret@")
        let opml = #"<?xml version="1.0"?><opml version="2.0"><body><outline xmlUrl="\#(secret)"/></body></opml>"#
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let opmlJSON = String(decoding: try JSONEncoder().encode(opml), as: UTF8.self)
        let imported = try client.result("import", as: ImportResult.self, params: #"{"opml":\#(opmlJSON)}"#)
        #expect(imported.feeds.map(\.outcome) == ["subscribed"])
        #expect(imported.feeds.map(\.url) == [feed], "the answer shows the password")
        let podcasts = try client.result("podcasts", as: PodcastsResult.self).podcasts
        #expect(podcasts.map(\.feedURL) == [feed] && podcasts.map(\.hasCredentials) == [true])
        #expect(daemon.stop() == 0)
        #expect(!daemon.log.contains("s3cret"))
    }
}
