import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The web view in a real browser: headless Chromium, driven by Selenium (scripts/browser-check), against a daemon
/// whose directory is the Apple stand-in and whose feed and episode come from nginx.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
        "chromium and chromium-driver are not installed (scripts/bootstrap installs them)"
    )
)
struct WebViewBrowserTests {
    private struct Seen: Decodable {
        var status: String
        var results: [String]
        var podcast: String
        var episodes: Int
        var episode: Episode
        var progressSeen: [Int]
        var feedURL: String
        var consoleErrors: [String]

        struct Episode: Decodable {
            var id: Int64
            var title: String
        }

        enum CodingKeys: String, CodingKey {
            case status, results, podcast, episodes, episode
            case progressSeen = "progress_seen"
            case feedURL = "feed_url"
            case consoleErrors = "console_errors"
        }
    }

    @Test func aListenerSearchesSubscribesDownloadsWatchingTheProgressAndMarksItPlayed() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            // Big enough, and slowed by speed_limit, for the progress bar to be seen moving.
            let episode = try site.serve(TestContent.mp3(count: 6 << 20, filler: 3), as: "episode.mp3")
            let feed = try site.serve(
                Data(
                    """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <rss version="2.0"><channel><title>Harbour Lights &amp; Tides</title><link>https://example.com/</link>
                    <item><title>Low water</title><guid isPermaLink="false">low-1</guid>
                    <pubDate>Thu, 03 Dec 2026 10:00:00 GMT</pubDate>
                    <enclosure url="\(episode)" type="audio/mpeg" length="\(6 << 20)"/></item>
                    <item><title>High water</title><guid isPermaLink="false">high-1</guid>
                    <pubDate>Wed, 02 Dec 2026 10:00:00 GMT</pubDate>
                    <enclosure url="\(episode)" type="audio/mpeg" length="\(6 << 20)"/></item>
                    </channel></rss>
                    """.utf8
                ),
                as: "feed.xml"
            )
            let directory = try DirectoryServer(feedURL: feed)
            let port = try freeLoopbackPort()
            let daemon = DaemonProcess()
            try daemon.writeConfig(
                """
                http_listen = 127.0.0.1:\(port)
                search_endpoint = \(directory.url)
                speed_limit = 2M
                """
            )
            try daemon.startAndWaitUntilReady()
            let client = try LineClient(path: daemon.socketPath)
            let secret = try client.result("http_password", as: HTTPPasswordResult.self)

            let screenshot = daemon.root.file("web-view.png")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../scripts/browser-check").standardized.path
            let run = try runProgram(
                "/usr/bin/python3",
                [
                    script, "--url", "http://127.0.0.1:\(port)/", "--user", secret.user, "--password", secret.password,
                    "--search", "tides", "--podcast", "Harbour Lights & Tides", "--screenshot", screenshot,
                    "--timeout", "60",
                ]
            )
            try #require(
                run.status == 0,
                "browser-check failed: \(run.stderr)\n\(run.stdout)\ndaemon log:\n\(daemon.log)"
            )
            let seen = try JSONDecoder().decode(Seen.self, from: Data(run.stdout.utf8))
            #expect(seen.status.contains("podcasts"))
            #expect(seen.results.contains("Harbour Lights & Tides"))
            #expect(seen.podcast == "Harbour Lights & Tides")
            #expect(seen.episodes == 2)
            #expect(seen.episode.title == "Low water")
            #expect(seen.progressSeen.last == 100)
            #expect(seen.feedURL.hasPrefix("http://127.0.0.1:\(port)/feeds/"))
            // The directory fixtures' artwork lives on .example hosts, which never resolve; anything else is the page's.
            let pageErrors = seen.consoleErrors.filter { !$0.contains(".example/") }
            #expect(pageErrors.isEmpty, "the page logged errors: \(pageErrors)")

            // What the page did is what the daemon did.
            let shown = try client.result(
                "episode",
                as: InboxResult.self,
                params: #"{"episodes":[\#(seen.episode.id)]}"#
            )
            let marked = try #require(shown.episodes.first)
            #expect(marked.playedAt != nil)
            #expect(marked.downloadState == .completed)
            let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "the screenshot is a PNG")
            if let keep = ProcessInfo.processInfo.environment["SINGLECAST_SCREENSHOT"] {
                try png.write(to: URL(fileURLWithPath: keep))
            }
        }
    }
}
