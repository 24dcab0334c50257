import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's first flow (the block between `<!-- first-flow -->` and `<!-- /first-flow -->`), run as written with
/// the real `singlecastctl` against the real daemon: Apple's lookup answer (the shared fixture) and the feeds come
/// from a local nginx. A listener following it must get no trailer, and nothing surprising in `episodes`, `downloads`
/// or the Trash.
@Suite struct ReadmeFirstFlowTests {
    /// The README's commands, each as its arguments to `singlecastctl` (comments and `swift run` left out; `a && b`
    /// is two commands).
    static func commands() throws -> [[String]] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let start = text.range(of: "<!-- first-flow"), let end = text.range(of: "<!-- /first-flow -->") else {
            throw HarnessError("README.md has no first-flow block")
        }
        let prefix = "$ swift run singlecastctl "
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").flatMap { line -> [[String]] in
            guard line.hasPrefix(prefix) else { return [] }
            let command = line.dropFirst(prefix.count).components(separatedBy: "  #")[0]
            return command.components(separatedBy: " && swift run singlecastctl ").map {
                $0.split(separator: " ").map(String.init)
            }
        }
    }

    /// 212 episodes, the newest a trailer; every enclosure is served.
    private static func harbourFeed(_ site: NginxServer) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let newest = Date(timeIntervalSince1970: 1_795_000_000)
        let items = try (0..<212).map { index -> String in
            let trailer = index == 0
            let name = trailer ? "trailer.mp3" : "ep\(212 - index).mp3"
            let url = try site.serve(TestContent.mp3(count: 4096, filler: UInt8(index % 250)), as: "h-" + name)
            let title = trailer ? "Season 4 trailer" : "Episode \(212 - index)"
            return """
                <item><title>\(title)</title><guid isPermaLink="false">harbour-\(index)</guid>
                <pubDate>\(formatter.string(from: newest.addingTimeInterval(Double(-index) * 86_400)))</pubDate>
                <itunes:episodeType>\(trailer ? "trailer" : "full")</itunes:episodeType>
                <enclosure url="\(url)" type="audio/mpeg" length="4096"/></item>
                """
        }
        return try site.serve(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
                <title>Harbour Lights &amp; Tides</title><link>https://example.com/</link>
                \(items.joined(separator: "\n"))
                </channel></rss>
                """.utf8
            ),
            as: "harbour.xml"
        )
    }

    private static func smallFeed(_ site: NginxServer, _ title: String, as name: String) throws -> String {
        let media = try site.serve(TestContent.mp3(count: 4096, filler: 9), as: name + "-1.mp3")
        return try site.serve(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0"><channel><title>\(title)</title><link>https://example.com/</link>
                <item><title>\(title) 1</title><guid>\(name)-1</guid><pubDate>Sat, 28 Nov 2026 10:00:00 GMT</pubDate>
                <enclosure url="\(media)" type="audio/mpeg" length="4096"/></item>
                </channel></rss>
                """.utf8
            ),
            as: name + ".xml"
        )
    }

    /// Waits until no download is queued or active: a listener reads one answer before typing the next command.
    private static func settle(_ client: LineClient) throws {
        let settled = try eventually(60) {
            try client.result("downloads", as: DownloadsResult.self).downloads.allSatisfy {
                $0.state != .queued && $0.state != .active
            }
        }
        if !settled { throw HarnessError("the downloads did not settle") }
    }

    private static func trash(_ daemon: DaemonProcess) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: daemon.root.file("data/Trash/files"))) ?? []).sorted()
    }

    @Test func theReadmesFirstFlowGetsNoTrailerAndLeavesNothingSurprising() async throws {
        try await onOwnThread {
            let commands = try Self.commands()
            #expect(commands.count >= 15, "\(commands)")
            let site = try NginxServer()
            let harbour = try Self.harbourFeed(site)
            let privateFeed = try Self.smallFeed(site, "Private Show", as: "private")
            let other = try Self.smallFeed(site, "Other Show", as: "other")
            // The podcast's web page, which names its feed (subscribe's autodiscovery).
            let pageFeed = try Self.smallFeed(site, "Page Show", as: "page-feed")
            let page = try site.serve(
                Data(
                    """
                    <!doctype html><html><head><title>Page Show</title>
                    <link rel="alternate" type="application/rss+xml" title="Page Show" href="\(pageFeed)"></head>
                    <body>Listen to Page Show.</body></html>
                    """.utf8
                ),
                as: "page.html"
            )
            // Apple's answer, as the shared fixture has it, naming the local feed.
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                    "shared/fixtures/apple/lookup-podcast.json"
                )
            let lookup = try String(contentsOf: fixture, encoding: .utf8)
                .replacingOccurrences(of: "https://harbour.example.org/feed.xml", with: harbour)
            try site.serve(Data(lookup.utf8), as: "lookup")

            let daemon = DaemonProcess()
            try daemon.writeConfig("search_endpoint = \(site.url(""))\n")
            try daemon.startAndWaitUntilReady()
            defer { _ = daemon.stop() }
            let client = try LineClient(path: daemon.socketPath)
            let home = daemon.root.file("home")
            try "hunter2\n".write(toFile: home + "/.feedpass", atomically: true, encoding: .utf8)
            chmod(home + "/.feedpass", 0o600)
            try """
            <?xml version="1.0"?><opml version="2.0"><body><outline type="rss" text="Other Show" xmlUrl="\(other)"/></body></opml>
            """.write(toFile: home + "/other.opml", atomically: true, encoding: .utf8)

            // The README's hosts are the local ones; `~` is the listener's home.
            let hosts = ["https://feeds.example.com/private": privateFeed, "https://harbour.example.com/": page]
            var trashBeforeUnsubscribe: [String] = []
            for command in commands {
                let arguments = command.map { word in
                    hosts[word] ?? (word.hasPrefix("~/") ? home + word.dropFirst() : word)
                }
                if arguments.first == "unsubscribe" {
                    // What the flow left before the last step, which deletes it all.
                    trashBeforeUnsubscribe = Self.trash(daemon)
                    let episodes = try client.result(
                        "episodes",
                        as: EpisodesResult.self,
                        params: #"{"podcast":"harbour"}"#
                    ).episodes
                    let trailer = try #require(episodes.first { $0.episodeType == "trailer" })
                    #expect(trailer.downloadID == nil, "the trailer was downloaded: \(trailer)")
                    let downloads = try client.result("downloads", as: DownloadsResult.self).downloads
                    #expect(downloads.allSatisfy { $0.state == .completed }, "\(downloads)")
                    #expect(!downloads.contains { $0.file.contains(" (2)") }, "a file was fetched twice: \(downloads)")
                    let files = Set(downloads.map(\.file))
                    #expect(files.count == downloads.count, "two downloads share a file: \(downloads)")
                    let fortyTwo = try #require(episodes.first { $0.id == 42 })
                    #expect(fortyTwo.downloadID == nil, "'delete 42' left its download")
                }
                // In the listener's home, where the flow's export and import files are.
                let result = try runProgram(
                    Binaries.client.path,
                    arguments,
                    environment: daemon.environment,
                    currentDirectory: home
                )
                #expect(result.status == 0, "singlecastctl \(arguments.joined(separator: " ")): \(result.stderr)")
                #expect(!result.stdout.contains("trailer"), "\(arguments): \(result.stdout)")
                try Self.settle(client)
            }
            // Only what the listener deleted or replaced went to the Trash, as the README says: the files of episode 42
            // ('delete') and of episode 43 ('redownload'), Episodes 171 and 170 of the feed.
            #expect(
                trashBeforeUnsubscribe.map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? $0 } == [
                    "Episode 170.mp3", "Episode 171.mp3",
                ],
                "\(trashBeforeUnsubscribe)"
            )
            // Unsubscribing with its files leaves nothing of Harbour behind but what went to the Trash.
            let left = try client.result("downloads", as: DownloadsResult.self).downloads
            #expect(!left.contains { $0.episode?.podcast == "Harbour Lights & Tides" }, "\(left)")
            let partial =
                FileManager.default.enumerator(atPath: daemon.root.file("data"))?.compactMap { $0 as? String }
                .filter { $0.hasSuffix(".part") } ?? []
            #expect(partial.isEmpty, "\(partial)")
        }
    }
}
