import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sync with a phone end to end: the real daemon against a real gpodder.net API server no one here wrote (PyPI's
/// gpodder-fastapi-router under uvicorn), a "phone" speaking the API as AntennaPod does, and feeds and files served
/// by nginx.
@Suite(
    .enabled(
        if: GPodderServer.python != nil,
        "no gpodder-fastapi-router venv at \(GPodderServer.venv) (SINGLECAST_GPODDER_VENV); scripts/bootstrap creates it"
    )
)
struct SyncTests {
    /// Runs the phone script; returns its JSON answer.
    func phone(_ server: GPodderServer, _ arguments: [String], device: String = "phone") throws -> String {
        let script = try #require(GPodderServer.phoneScript)
        let run = try runProgram(
            "/usr/bin/python3",
            [script, "--server", server.url, "--user", server.user, "--password", server.password, "--device", device]
                + arguments
        )
        guard run.status == 0 else { throw HarnessError("the phone failed: \(run.stderr)") }
        return run.stdout
    }

    func ctl(
        _ daemon: DaemonProcess,
        _ arguments: [String]
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProgram(Binaries.client.path, arguments + ["--socket", daemon.socketPath])
    }

    /// A daemon synchronising with `server` as device `home-server`, every hour (so only `sync` syncs here).
    func syncingDaemon(
        _ server: GPodderServer,
        password: String? = nil,
        root: TemporaryDirectory = TemporaryDirectory(),
        extra: String = ""
    ) throws -> DaemonProcess {
        let daemon = DaemonProcess(root: root)
        let passwordFile = root.file("gpodder-password")
        _ = FileManager.default.createFile(
            atPath: passwordFile,
            contents: Data(((password ?? server.password) + "\n").utf8)
        )
        chmod(passwordFile, 0o600)
        try daemon.writeConfig(
            """
            sync_server = \(server.url)
            sync_user = \(server.user)
            sync_password_file = \(passwordFile)
            sync_device = home-server
            sync_interval = 1h
            sync_auto_download = latest:1
            use_trash = false
            \(extra)
            """
        )
        return daemon
    }

    static func feed(_ site: NginxServer, _ guids: [String]) -> Data {
        let items = guids.enumerated().map { index, guid in
            """
            <item><title>Episode \(guid)</title><guid isPermaLink="false">\(guid)</guid>
            <pubDate>\(20 - index) Nov 2026 10:00:00 GMT</pubDate><itunes:duration>30:00</itunes:duration>
            <enclosure url="\(site.url("/media-\(guid).mp3"))" type="audio/mpeg" length="4096"/></item>
            """
        }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>Phone Radio</title><link>https://example.com/</link><description>d</description>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8
        )
    }

    func serve(_ site: NginxServer, _ guids: [String]) throws -> String {
        for guid in guids {
            _ = try site.serve(
                TestContent.mp3(count: 4096, filler: Character(guid).asciiValue ?? 0),
                as: "media-\(guid).mp3"
            )
        }
        return try site.serve(Self.feed(site, guids), as: "phone.xml")
    }

    func actions(_ server: GPodderServer) throws -> [[String: Any]] {
        let text = try phone(server, ["actions"])
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return object?["actions"] as? [[String: Any]] ?? []
    }

    @Test func thePhonesSubscriptionAndPlayReachTheDaemonAndItsDownloadAndDeleteReachTheServer() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            let feedURL = try serve(site, ["a", "b"])
            let server = try GPodderServer()
            // The phone subscribes and has listened to the older episode to its end.
            _ = try phone(server, ["subscribe", feedURL])
            _ = try phone(server, ["play", feedURL, site.url("/media-b.mp3"), "1800", "1800"])

            let daemon = try syncingDaemon(server)
            try daemon.startAndWaitUntilReady()
            let synced = try ctl(daemon, ["sync", "--json"])
            #expect(synced.status == 0, "\(synced.stderr)\n\(daemon.log)")
            let result = try JSONDecoder().decode(SyncResult.self, from: Data(synced.stdout.utf8))
            #expect(result.report?.subscribed == 1)
            #expect(result.report?.markedPlayed == 1)

            let client = try LineClient(path: daemon.socketPath)
            let podcasts = try client.result("podcasts", as: PodcastsResult.self)
            let podcast = try #require(podcasts.podcasts.first)
            #expect(podcast.feedURL == feedURL)
            // latest:1: the newest episode downloads; the one the phone played is marked played.
            var episodes: [EpisodeInfo] = []
            let downloaded = try eventually(30) {
                episodes = try client.result(
                    "episodes",
                    as: EpisodesResult.self,
                    params: #"{"podcast":"\#(podcast.id)"}"#
                )
                .episodes
                return episodes.first { $0.guid == "a" }?.downloadState == .completed
            }
            #expect(downloaded, "\(episodes)\n\(daemon.log)")
            #expect(episodes.first { $0.guid == "b" }?.playedAt != nil)
            #expect(episodes.first { $0.guid == "a" }?.playedAt == nil)

            // The user deletes the downloaded file; the next sync tells the server of the download and the delete.
            let a = try #require(episodes.first { $0.guid == "a" })
            _ = try client.call("delete", params: #"{"episodes":[\#(a.id)]}"#)
            let second = try ctl(daemon, ["sync"])
            #expect(second.status == 0, "\(second.stderr)")
            let mine = try actions(server).filter { $0["device"] as? String == "home-server" }
            let kinds = mine.filter { $0["episode"] as? String == site.url("/media-a.mp3") }.compactMap {
                $0["action"] as? String
            }
            #expect(kinds == ["download", "delete"], "\(mine)")
            // The phone's own play did not go back to the server as singlecast's.
            #expect(!mine.contains { $0["action"] as? String == "play" }, "\(mine)")
            // Nothing is left to upload.
            let status = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--status", "--json"]).stdout.utf8)
            )
            #expect(status.status.pending == 0)
            #expect(status.status.lastSuccess != nil)
            #expect(daemon.stop() == 0)
        }
    }

    @Test func thePhonesPlayLetsRetentionDeleteTheFileAndTheServerLearnsOfIt() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            let feedURL = try serve(site, ["a"])
            let server = try GPodderServer()
            _ = try phone(server, ["subscribe", feedURL])
            let root = TemporaryDirectory()
            let daemon = try syncingDaemon(server, root: root, extra: "delete_played_after = 1s\n")
            try daemon.startAndWaitUntilReady()
            #expect(try ctl(daemon, ["sync"]).status == 0, "\(daemon.log)")
            let client = try LineClient(path: daemon.socketPath)
            let podcast = try #require(try client.result("podcasts", as: PodcastsResult.self).podcasts.first)
            func episode() throws -> EpisodeInfo? {
                try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast.id)"}"#)
                    .episodes.first
            }
            #expect(try eventually(30) { try episode()?.downloadState == .completed }, "\(daemon.log)")

            // Heard to the end on the phone: the next sync marks it played, and retention deletes its file.
            _ = try phone(server, ["play", feedURL, site.url("/media-a.mp3"), "1800", "1800"])
            let synced = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--json"]).stdout.utf8)
            )
            #expect(synced.report?.markedPlayed == 1, "\(daemon.log)")
            #expect(try eventually(20) { try episode()?.downloadState == nil }, "\(daemon.log)")
            #expect(try ctl(daemon, ["sync"]).status == 0)
            let mine = try actions(server).filter { $0["device"] as? String == "home-server" }
            #expect(mine.compactMap { $0["action"] as? String } == ["download", "delete"], "\(mine)")
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aFeedURLTheServerRewritesStillNamesTheLocalPodcast() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            _ = try serve(site, ["a"])
            // The server normalises URLs as gpodder.net does: a comma in the path comes back as %2C.
            let feedURL = try site.serve(Self.feed(site, ["a"]), as: "phone,radio.xml")
            let server = try GPodderServer()
            // The phone has a subscription of its own, so the daemon knows the device before the removal below.
            let other = try site.serve(Self.feed(site, ["a"]), as: "other.xml")
            _ = try phone(server, ["subscribe", other])
            let daemon = try syncingDaemon(server)
            try daemon.startAndWaitUntilReady()
            let client = try LineClient(path: daemon.socketPath)
            _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feedURL)"}"#)
            #expect(try ctl(daemon, ["sync"]).status == 0, "\(daemon.log)")
            let rewritten = feedURL.replacingOccurrences(of: ",", with: "%2C")
            let changes = try phone(server, ["subscriptions", "home-server"])
            #expect(changes.contains(rewritten), "\(changes)")

            // The phone subscribes by the server's spelling: no second podcast here. Then it removes it: the podcast
            // subscribed to here goes.
            usleep(1_100_000)
            _ = try phone(server, ["subscribe", rewritten])
            let added = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--json"]).stdout.utf8)
            )
            #expect(added.report?.subscribed == 0, "\(daemon.log)")
            #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.count == 2)
            usleep(1_100_000)
            _ = try phone(server, ["unsubscribe", rewritten])
            let removed = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--json"]).stdout.utf8)
            )
            #expect(removed.report?.unsubscribed == 1, "\(daemon.log)")
            #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.map(\.feedURL) == [other])
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aChangeOutlivesKill9AndReachesTheServerExactlyOnce() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            let feedURL = try serve(site, ["a"])
            let server = try GPodderServer()
            let root = TemporaryDirectory()
            let daemon = try syncingDaemon(server, root: root)
            try daemon.startAndWaitUntilReady()
            #expect(try ctl(daemon, ["sync"]).status == 0, "\(daemon.log)")

            let client = try LineClient(path: daemon.socketPath)
            _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feedURL)"}"#)
            // Killed between the local change and its upload.
            daemon.signal(SIGKILL)
            _ = daemon.waitForExit()

            let restarted = DaemonProcess(root: root)
            try restarted.startAndWaitUntilReady()
            let before = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(restarted, ["sync", "--status", "--json"]).stdout.utf8)
            )
            #expect(before.status.pending == 1)
            let pushesBefore = server.requests().filter { $0.hasPrefix("POST /api/2/subscriptions/") }.count
            #expect(try ctl(restarted, ["sync"]).status == 0, "\(restarted.log)")
            #expect(try ctl(restarted, ["sync"]).status == 0)
            let pushes = server.requests().filter { $0.hasPrefix("POST /api/2/subscriptions/") }.count - pushesBefore
            #expect(pushes == 1, "\(server.requests())")
            let changes = try phone(server, ["subscriptions", "home-server"])
            let object = try JSONSerialization.jsonObject(with: Data(changes.utf8)) as? [String: Any]
            #expect(object?["add"] as? [String] == [feedURL], "\(changes)")
            #expect(restarted.stop() == 0)
        }
    }

    @Test func aPodcastUnsubscribedHereIsNotResurrectedByTheServer() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            let feedURL = try serve(site, ["a"])
            let server = try GPodderServer()
            _ = try phone(server, ["subscribe", feedURL])
            let daemon = try syncingDaemon(server)
            try daemon.startAndWaitUntilReady()
            #expect(try ctl(daemon, ["sync"]).status == 0, "\(daemon.log)")
            let client = try LineClient(path: daemon.socketPath)
            let podcast = try #require(try client.result("podcasts", as: PodcastsResult.self).podcasts.first)
            // The server's timestamps are whole seconds: the phone's next changes must come after the last sync's.
            usleep(1_100_000)
            // The phone subscribes again (a newer add on the server) while the user unsubscribes here.
            _ = try phone(server, ["unsubscribe", feedURL])
            _ = try phone(server, ["subscribe", feedURL])
            _ = try client.call("unsubscribe", params: #"{"podcast":"\#(podcast.id)"}"#)
            let synced = try ctl(daemon, ["sync", "--json"])
            #expect(synced.status == 0, "\(synced.stderr)")
            let result = try JSONDecoder().decode(SyncResult.self, from: Data(synced.stdout.utf8))
            #expect(result.report?.keptUnsubscribed == 1)
            #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.isEmpty)
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aRefusedPasswordIsOneClearErrorAndNoRetryStorm() async throws {
        try await onOwnThread {
            let server = try GPodderServer()
            let daemon = try syncingDaemon(server, password: "wrong")
            try daemon.startAndWaitUntilReady()
            let synced = try ctl(daemon, ["sync"])
            #expect(synced.status != 0)
            #expect(synced.stderr.contains("refused the user '\(server.user)'"), "\(synced.stderr)")
            #expect(synced.stderr.contains(server.url), "\(synced.stderr)")
            #expect(!synced.stderr.contains("wrong"), "the password must never be shown: \(synced.stderr)")
            usleep(1_500_000)
            #expect(server.requests().filter { $0.hasSuffix(" 401") }.count == 1, "\(server.requests())")
            let status = try ctl(daemon, ["sync", "--status"])
            #expect(status.stdout.contains("refused the user"), "\(status.stdout)")
            #expect(status.stdout.contains("after a reload or 'sync'"), "\(status.stdout)")
            #expect(!daemon.log.contains("wrong"))
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aPasswordFileOthersCanReadIsRefusedAtStart() async throws {
        try await onOwnThread {
            let server = try GPodderServer()
            let root = TemporaryDirectory()
            let daemon = try syncingDaemon(server, root: root)
            chmod(root.file("gpodder-password"), 0o644)
            try daemon.start()
            #expect(daemon.waitForExit() != 0)
            #expect(daemon.log.contains("must be readable by its owner only"), "\(daemon.log)")
        }
    }
}
