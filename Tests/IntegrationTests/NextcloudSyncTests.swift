import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sync_flavor = nextcloud` against a STAND-IN for the Nextcloud gpoddersync app (``NextcloudStandIn``: its
/// documented endpoints, in memory), since no Nextcloud can run here. It checks singlecast's side of that API.
@Suite struct NextcloudSyncTests {
    /// A request to the stand-in as a phone would make it; returns the JSON answer.
    private func phone(
        _ server: NextcloudStandIn,
        _ method: String,
        _ path: String,
        _ body: String? = nil
    ) throws
        -> String
    {
        let program = """
            import base64, sys, urllib.request
            data = sys.argv[4].encode() if len(sys.argv) > 4 else None
            request = urllib.request.Request(sys.argv[1] + sys.argv[3], data=data, method=sys.argv[2])
            request.add_header("Authorization", "Basic " + base64.b64encode(b"\(server.user):\(server.password)").decode())
            request.add_header("Content-Type", "application/json")
            print(urllib.request.urlopen(request, timeout=30).read().decode())
            """
        let run = try runProgram(
            "/usr/bin/python3",
            ["-c", program, server.url, method, "/index.php/apps/gpoddersync/" + path] + (body.map { [$0] } ?? [])
        )
        guard run.status == 0 else { throw HarnessError("the phone failed: \(run.stderr)") }
        return run.stdout
    }

    @Test func subscriptionsAndPlaysGoBothWaysThroughTheNextcloudEndpoints() throws {
        let site = try NginxServer()
        _ = try site.serve(TestContent.mp3(count: 4096, filler: 1), as: "media-a.mp3")
        let feed = Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Cloud Radio</title><link>https://example.com/</link><description>d</description>
            <item><title>A</title><guid>a</guid><pubDate>20 Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(site.url("/media-a.mp3"))" type="audio/mpeg" length="4096"/></item>
            </channel></rss>
            """.utf8
        )
        let feedURL = try site.serve(feed, as: "cloud.xml")
        let server = try NextcloudStandIn()
        _ = try phone(server, "POST", "subscription_change/create", #"{"add":["\#(feedURL)"],"remove":[]}"#)
        let play =
            #"[{"podcast":"\#(feedURL)","episode":"\#(site.url("/media-a.mp3"))","action":"PLAY","timestamp":"2026-12-04T20:00:00","started":0,"position":60,"total":60}]"#
        _ = try phone(server, "POST", "episode_action/create", play)

        let root = TemporaryDirectory()
        let daemon = DaemonProcess(root: root)
        let passwordFile = root.file("nextcloud-password")
        _ = FileManager.default.createFile(atPath: passwordFile, contents: Data("secret".utf8))
        chmod(passwordFile, 0o600)
        try daemon.writeConfig(
            """
            sync_server = \(server.url)
            sync_flavor = nextcloud
            sync_user = \(server.user)
            sync_password_file = \(passwordFile)
            sync_interval = 1h
            sync_auto_download = off

            """
        )
        try daemon.startAndWaitUntilReady()
        let synced = try runProgram(Binaries.client.path, ["sync", "--json", "--socket", daemon.socketPath])
        #expect(synced.status == 0, "\(synced.stderr)\n\(daemon.log)")
        let result = try JSONDecoder().decode(SyncResult.self, from: Data(synced.stdout.utf8))
        #expect(result.report?.subscribed == 1)
        #expect(result.report?.markedPlayed == 1)
        // No device endpoints: the app has none.
        #expect(!server.requests().contains { $0.contains("/api/2/") || $0.contains("device") }, "\(server.requests())")

        // An episode marked unplayed here goes up as the API's new action.
        let client = try LineClient(path: daemon.socketPath)
        let podcast = try #require(try client.result("podcasts", as: PodcastsResult.self).podcasts.first)
        let episode = try #require(
            try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast.id)"}"#).episodes
                .first
        )
        #expect(episode.playedAt != nil)
        _ = try client.call("unplayed", params: #"{"episodes":[\#(episode.id)]}"#)
        #expect(try runProgram(Binaries.client.path, ["sync", "--socket", daemon.socketPath]).status == 0)
        let actions = try phone(server, "GET", "episode_action?since=0")
        #expect(actions.contains(#""action": "new""#), "\(actions)")
        let subscriptions = try phone(server, "GET", "subscriptions?since=0")
        #expect(subscriptions.contains(feedURL), "\(subscriptions)")
        #expect(daemon.stop() == 0)
    }
}
