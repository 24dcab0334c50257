import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Subscriptions end to end: the real daemon, feeds and episodes served by a real nginx (ETag, Last-Modified,
/// Range) and the fault server for moved and gone feeds.
@Suite struct PodcastTests {
    /// An RSS document with one item per episode, newest first; enclosures point at `site`.
    private static func feed(title: String, episodes: [(guid: String, day: Int)], site: NginxServer) -> Data {
        let items = episodes.map { episode in
            """
            <item><title>Episode \(episode.guid) &amp; friends</title><guid isPermaLink="false">\(episode.guid)</guid>
            <pubDate>\(String(format: "%02d", episode.day)) Nov 2026 10:00:00 GMT</pubDate>
            <itunes:duration>12:34</itunes:duration>
            <enclosure url="\(site.url("/media-\(episode.guid).mp3"))?tracking=\(UUID().uuidString)" type="audio/mpeg" length="4096"/>
            </item>
            """
        }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>\(title)</title><link>https://example.com/</link>
            <description>&lt;p&gt;About &lt;b&gt;\(title)&lt;/b&gt;&lt;/p&gt;</description>
            <itunes:image href="/art.png"/>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8
        )
    }

    private func call<T: Decodable>(
        _ client: LineClient,
        _ method: String,
        _ params: String?,
        as type: T.Type
    ) throws -> T {
        try client.result(method, as: type, params: params)
    }

    private func error(_ client: LineClient, _ method: String, _ params: String?) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) succeeded unexpectedly: \(value)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }

    @Test func subscribeRefreshAutoDownloadAndKeep() throws {
        let site = try NginxServer()
        for guid in ["a", "b", "c", "d"] {
            _ = try site.serve(
                TestContent.mp3(count: 4096, filler: Character(guid).asciiValue ?? 0),
                as: "media-\(guid).mp3"
            )
        }
        // A PNG's signature and header chunk: artwork is cached only when libmagic reads it as an image.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52]
        _ = try site.serve(Data(png + [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89]), as: "art.png")
        let feedURL = try site.serve(
            Self.feed(title: "Loopback Radio", episodes: [("c", 27), ("b", 26), ("a", 25)], site: site),
            as: "feed.xml"
        )
        let daemon = DaemonProcess()
        try daemon.writeConfig("name_template = {podcast}/{date} {title}.{ext}\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)

        let subscribed = try call(
            client,
            "subscribe",
            #"{"url":"\#(feedURL)","auto_download":"latest:2","keep":2}"#,
            as: SubscribeResult.self
        )
        #expect(!subscribed.existing)
        #expect(subscribed.podcast.title == "Loopback Radio")
        #expect(subscribed.podcast.description == "About Loopback Radio")
        #expect(subscribed.podcast.episodes == 3)
        #expect(subscribed.podcast.newEpisodes == 0, "the back catalogue is not new")
        #expect(subscribed.queued.count == 2)
        let first = try client.finished(subscribed.queued)
        #expect(first.allSatisfy { $0.state == .completed })
        let folder = daemon.root.file("data/singlecast/episodes/Loopback Radio")
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder))
                == ["2026-11-27 Episode c & friends.mp3", "2026-11-26 Episode b & friends.mp3"]
        )

        // Subscribing again changes nothing; the same podcast comes back.
        let again = try call(client, "subscribe", #"{"url":"\#(feedURL)"}"#, as: SubscribeResult.self)
        #expect(again.existing && again.podcast.id == subscribed.podcast.id)

        // Unchanged feed: nginx answers the conditional GET with 304.
        var refreshed = try call(client, "refresh", #"{"podcast":"loop"}"#, as: RefreshResult.self)
        #expect(refreshed.refreshed.map(\.outcome) == ["not_modified"])
        #expect(refreshed.notModified == nil, "a full answer lists unchanged feeds as entries")
        // A brief answer lists them by id only.
        refreshed = try call(client, "refresh", #"{"brief":true}"#, as: RefreshResult.self)
        #expect(refreshed.refreshed.isEmpty)
        #expect(refreshed.notModified == [subscribed.podcast.id])

        // A new episode (and new tracking tokens on the old ones, which must not look new).
        usleep(1_100_000)  // a new Last-Modified second for nginx
        _ = try site.serve(
            Self.feed(title: "Loopback Radio", episodes: [("d", 28), ("c", 27), ("b", 26), ("a", 25)], site: site),
            as: "feed.xml"
        )
        refreshed = try call(client, "refresh", #"{"brief":true}"#, as: RefreshResult.self)
        #expect(refreshed.notModified == [], "a changed feed is an entry of a brief answer too")
        let entry = try #require(refreshed.refreshed.first)
        #expect(entry.outcome == "updated")
        #expect(entry.newEpisodes == 1)
        #expect(entry.queued.count == 1)
        _ = try client.finished(entry.queued)
        // keep 2: the oldest downloaded file (b) goes once d is in.
        let deadline = Date.now.addingTimeInterval(20)
        var names = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        while names.count > 2 && Date.now < deadline {
            _ = try call(client, "refresh", nil, as: RefreshResult.self)
            names = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        }
        #expect(names == ["2026-11-28 Episode d & friends.mp3", "2026-11-27 Episode c & friends.mp3"])

        let episodes = try call(
            client,
            "episodes",
            #"{"podcast":"\#(subscribed.podcast.id)"}"#,
            as: EpisodesResult.self
        )
        #expect(episodes.episodes.map(\.guid) == ["d", "c", "b", "a"])
        #expect(episodes.episodes.first?.durationSeconds == 754)
        #expect(episodes.episodes.first?.downloadState == .completed)
        #expect(episodes.episodes[2].downloadID == nil, "b's file was deleted by keep")
        let onlyNew = try call(client, "episodes", #"{"podcast":"Loopback","new":true}"#, as: EpisodesResult.self)
        #expect(onlyNew.episodes.isEmpty, "d was downloaded, so it is no longer new")

        // Manual download of the oldest episode, by id.
        let oldest = try #require(episodes.episodes.last)
        let queued = try call(client, "enqueue", #"{"episodes":[\#(oldest.id)]}"#, as: EnqueueResult.self)
        _ = try client.finished(queued.downloads.map(\.id))

        let podcasts = try call(client, "podcasts", nil, as: PodcastsResult.self)
        let artwork = try #require(podcasts.podcasts.first?.artworkPath)
        #expect(FileManager.default.fileExists(atPath: artwork))

        // Export, unsubscribe with its files, import again.
        let exported = try call(client, "export", nil, as: ExportResult.self)
        #expect(exported.count == 1 && exported.opml.contains(feedURL))
        let removed = try call(
            client,
            "unsubscribe",
            #"{"podcast":"Loopback Radio","delete_files":true}"#,
            as: UnsubscribeResult.self
        )
        #expect(removed.deletedFiles.count == 3)
        // Its folder went with its files; the download directory stays.
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(FileManager.default.fileExists(atPath: daemon.root.file("data/singlecast/episodes")))
        #expect(try call(client, "podcasts", nil, as: PodcastsResult.self).podcasts.isEmpty)
        let opmlJSON = String(decoding: try JSONEncoder().encode(exported.opml), as: UTF8.self)
        let imported = try call(client, "import", #"{"opml":\#(opmlJSON)}"#, as: ImportResult.self)
        #expect(imported.feeds.map(\.outcome) == ["subscribed"])
        let reimported = try call(client, "import", #"{"opml":\#(opmlJSON)}"#, as: ImportResult.self)
        #expect(reimported.feeds.map(\.outcome) == ["already"])
        #expect(daemon.stop() == 0)
    }

    @Test func movedGoneAndBrokenFeedsAreReportedClearly() throws {
        let site = try NginxServer()
        let faults = try FaultServer()
        let feedURL = try site.serve(Self.feed(title: "Mover", episodes: [("a", 1)], site: site), as: "mover.xml")
        _ = try site.serve(Data("<html><body>not a feed</body></html>".utf8), as: "page.html")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)

        // A 301 is followed and the new URL stored.
        let moved = try call(
            client,
            "subscribe",
            #"{"url":"\#(faults.url("/moved-to?url=\(feedURL)"))"}"#,
            as: SubscribeResult.self
        )
        #expect(moved.podcast.feedURL == feedURL)

        // Credentials in the URL are moved out of it and never shown.
        let secret = faults.url("/basic-auth/alice/s3cret/100").replacingOccurrences(
            of: "http://",
            with: "http://alice:s3cret@"
        )
        let refused = try error(client, "subscribe", #"{"url":"\#(secret)"}"#)
        #expect(refused.reason == "feed_invalid", "the body is not a feed, but it was fetched with the credentials")
        #expect(!refused.message.contains("alice:s3cret@"))

        let notFound = try error(client, "subscribe", #"{"url":"\#(site.url("/missing.xml"))"}"#)
        #expect(notFound.code == -32020 && notFound.reason == "feed_unreachable")
        #expect(notFound.message.contains("404"))
        let html = try error(client, "subscribe", #"{"url":"\#(site.url("/page.html"))"}"#)
        #expect(html.code == -32021 && html.reason == "feed_invalid")
        let gone = try error(client, "subscribe", #"{"url":"\#(faults.url("/gone"))"}"#)
        #expect(gone.reason == "feed_unreachable" && gone.message.contains("410"))
        let scheme = try error(client, "subscribe", #"{"url":"file:///etc/passwd"}"#)
        #expect(scheme.reason == "invalid_params")
        let unknown = try error(client, "episodes", #"{"podcast":"nothing like it"}"#)
        #expect(unknown.reason == "unknown_podcast")
        let both = try error(client, "subscribe", #"{"url":"\#(feedURL)","itunes_id":1}"#)
        #expect(both.reason == "invalid_params")
        let badPolicy = try error(client, "set", #"{"podcast":"Mover","auto_download":"latest:5","keep":2}"#)
        #expect(badPolicy.reason == "invalid_params" && badPolicy.message.contains("keep"))

        // A feed that turns 410 at a refresh keeps its episodes and is asked again a day later; `set` with a new
        // feed URL revives it at once, and `refresh` of it reads the new feed.
        let doomedURL = faults.url("/gone-after/1/doomed?url=\(feedURL)")
        let doomed = try call(client, "subscribe", #"{"url":"\#(doomedURL)"}"#, as: SubscribeResult.self)
        #expect(doomed.podcast.feedURL == doomedURL, "a temporary redirect keeps the URL")
        let retired = try call(client, "refresh", "{\"podcast\":\"\(doomed.podcast.id)\"}", as: RefreshResult.self)
        #expect(retired.refreshed.first?.outcome == "gone", "\(retired)")
        let kept = try call(client, "podcasts", nil, as: PodcastsResult.self).podcasts.first {
            $0.id == doomed.podcast.id
        }
        #expect(kept?.gone == true && kept?.nextRefreshAt != nil, "\(String(describing: kept))")
        #expect(kept?.episodes == doomed.podcast.episodes && kept?.lastError?.contains("410") == true)
        let taken = try error(client, "set", "{\"podcast\":\"\(doomed.podcast.id)\",\"feed_url\":\"\(feedURL)\"}")
        #expect(taken.reason == "invalid_params" && taken.message.contains("subscribed"), "\(taken.message)")
        let newURL = try site.serve(
            Self.feed(title: "Reborn", episodes: [("a", 1), ("b", 2)], site: site),
            as: "reborn.xml"
        )
        let revived = try call(
            client,
            "set",
            "{\"podcast\":\"\(doomed.podcast.id)\",\"feed_url\":\"\(newURL)\"}",
            as: PodcastResult.self
        ).podcast
        #expect(revived.feedURL == newURL && !revived.gone && revived.lastError == nil, "\(revived)")
        let reborn = try call(client, "refresh", "{\"podcast\":\"\(doomed.podcast.id)\"}", as: RefreshResult.self)
        #expect(reborn.refreshed.first?.outcome == "updated", "\(reborn)")
        #expect(reborn.refreshed.first?.podcast.title == "Reborn")
        _ = try call(client, "unsubscribe", "{\"podcast\":\"\(doomed.podcast.id)\"}", as: UnsubscribeResult.self)

        // The podcast survives a restart, and a broken refresh keeps its episodes.
        #expect(daemon.stop() == 0)
        let again = DaemonProcess(root: daemon.root)
        try again.startAndWaitUntilReady()
        let second = try LineClient(path: again.socketPath)
        _ = try site.serve(Data("garbage <<<".utf8), as: "mover.xml")
        let failed = try call(second, "refresh", #"{"podcast":"mov"}"#, as: RefreshResult.self)
        #expect(failed.refreshed.first?.outcome == "failed")
        let listed = try call(second, "podcasts", nil, as: PodcastsResult.self).podcasts
        #expect(listed.first?.episodes == 1)
        #expect(listed.first?.lastError != nil)
        #expect(again.stop() == 0)
    }

    @Test func periodicRefreshFindsNewEpisodesByItself() throws {
        let site = try NginxServer()
        for guid in ["a", "b"] { _ = try site.serve(TestContent.mp3(count: 2048, filler: 7), as: "media-\(guid).mp3") }
        let feedURL = try site.serve(Self.feed(title: "Ticker", episodes: [("a", 1)], site: site), as: "ticker.xml")
        let daemon = DaemonProcess()
        try daemon.writeConfig("refresh_interval = 1s\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        _ = try call(client, "watch", #"{"topics":["podcasts"]}"#, as: WatchResult.self)
        let subscribed = try call(
            client,
            "subscribe",
            #"{"url":"\#(feedURL)","auto_download":"all-new"}"#,
            as: SubscribeResult.self
        )
        #expect(subscribed.queued.isEmpty, "all-new takes nothing from the back catalogue")
        usleep(1_100_000)
        _ = try site.serve(Self.feed(title: "Ticker", episodes: [("b", 2), ("a", 1)], site: site), as: "ticker.xml")
        // No refresh call: the daemon's own schedule finds b and downloads it.
        let deadline = Date.now.addingTimeInterval(15)
        var found: EpisodeInfo?
        while Date.now < deadline {
            let episodes = try call(client, "episodes", #"{"podcast":"Ticker"}"#, as: EpisodesResult.self).episodes
            if let b = episodes.first(where: { $0.guid == "b" }), b.downloadState == .completed {
                found = b
                break
            }
            usleep(100_000)
        }
        let episode = try #require(found, "episode b was not found and downloaded by a periodic refresh")
        #expect(episode.file?.hasSuffix("Episode b & friends.mp3") == true)
        #expect(daemon.stop() == 0)
    }

    @Test func refreshFollowsNewFeedURLsAndKeepsTemporaryRedirects() throws {
        let site = try NginxServer()
        let faults = try FaultServer()
        let newHome = try site.serve(
            Self.feed(title: "Wanderer", episodes: [("b", 2), ("a", 1)], site: site),
            as: "new-home.xml"
        )
        let announcing = String(
            decoding: Self.feed(title: "Wanderer", episodes: [("a", 1)], site: site),
            as: UTF8.self
        ).replacingOccurrences(
            of: "<channel>",
            with: "<channel><itunes:new-feed-url>\(newHome)</itunes:new-feed-url>"
        )
        let oldHome = try site.serve(Data(announcing.utf8), as: "old-home.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)

        let subscribed = try call(
            client,
            "subscribe",
            #"{"url":"\#(oldHome)","user":"u","password":"pw"}"#,
            as: SubscribeResult.self
        )
        #expect(subscribed.podcast.feedURL == newHome, "itunes:new-feed-url is followed from the first fetch on")
        #expect(subscribed.podcast.hasCredentials)
        let refreshed = try call(client, "refresh", nil, as: RefreshResult.self).refreshed
        #expect(refreshed.first?.podcast.episodes == 2, "the next refresh reads the new URL")

        // A temporary redirect is followed but not stored.
        _ = try site.serve(Self.feed(title: "Visitor", episodes: [("a", 1)], site: site), as: "visitor.xml")
        let visitor = try call(
            client,
            "subscribe",
            #"{"url":"\#(faults.url("/redirect-to?url=\(site.url("/visitor.xml"))"))"}"#,
            as: SubscribeResult.self
        )
        #expect(visitor.podcast.feedURL.contains("/redirect-to"), "a temporary redirect keeps the subscribed URL")
        let mode = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/singlecast.sqlite3")[
            .posixPermissions
        ]
        #expect((mode as? NSNumber)?.intValue == 0o600, "the database holds credentials")
        #expect(daemon.stop() == 0)
    }
}
