import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// `subscribe` given a web page instead of a feed: the real daemon and client, the page and feeds served by nginx.
@Suite struct FeedDiscoveryTests {
    private static func feed(_ title: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>\(title)</title><link>https://example.com/</link>
            <description>d</description><item><title>One</title><guid>1</guid></item></channel></rss>
            """.utf8
        )
    }

    @Test func aPageNamingFeedsSubscribesToItsFirstRSSFeedAndNamesTheOthers() throws {
        let site = try NginxServer()
        try FileManager.default.createDirectory(
            atPath: site.documentRoot + "/feeds",
            withIntermediateDirectories: true
        )
        try site.serve(Self.feed("Found Radio"), as: "feeds/show.xml")
        try site.serve(Self.feed("Other Radio"), as: "feeds/other.xml")
        let page = try site.serve(
            Data(
                """
                <!DOCTYPE html><html><head><title>Found Radio</title>
                <link rel="alternate" type="application/atom+xml" href="atom.xml">
                <link rel="alternate" type="application/rss+xml" href="show.xml" title="MP3">
                <link rel="alternate" type="application/rss+xml" href="other.xml">
                <base href="/feeds/">
                </head><body>Listen!</body></html>
                """.utf8
            ),
            as: "index.html"
        )
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let run = try runProgram(Binaries.client.path, ["subscribe", page, "--socket", daemon.socketPath])
        #expect(run.status == 0, "\(run.stderr)")
        let feed = site.url("/feeds/show.xml")
        #expect(run.stdout.hasPrefix("\(page) is a web page; it names the feed \(feed)\n"), "\(run.stdout)")
        #expect(
            run.stdout.contains("It also names \(site.url("/feeds/atom.xml")), \(site.url("/feeds/other.xml"));"),
            "\(run.stdout)"
        )
        #expect(run.stdout.contains("Subscribed 1  Found Radio"), "\(run.stdout)")
        let client = try LineClient(path: daemon.socketPath)
        let podcasts = try client.result("podcasts", as: PodcastsResult.self).podcasts
        #expect(podcasts.map(\.feedURL) == [feed])
        #expect(daemon.stop() == 0)
    }

    @Test func aPageWithoutFeedsIsAClearErrorAndSubscribesToNothing() throws {
        let site = try NginxServer()
        let page = try site.serve(
            Data("<!doctype html><html><head><link rel=\"stylesheet\" href=\"s.css\"></head></html>".utf8),
            as: "plain.html"
        )
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let run = try runProgram(Binaries.client.path, ["subscribe", page, "--socket", daemon.socketPath])
        #expect(run.status != 0)
        #expect(
            run.stderr.contains(
                "\(page) is a web page that names no feed (it has no <link rel=\"alternate\" "
                    + "type=\"application/rss+xml\">); give the feed's own URL"
            ),
            "\(run.stderr)"
        )
        let client = try LineClient(path: daemon.socketPath)
        #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.isEmpty)
        #expect(daemon.stop() == 0)
    }
}
