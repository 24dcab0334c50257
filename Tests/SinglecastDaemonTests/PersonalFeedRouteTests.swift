import Foundation
import SinglecastFeeds
import SinglecastStore
import SinglecastSupport
import SinglecastTestServers
import Testing

@testable import SinglecastDaemon

/// The feed, media and artwork routes over a real store, queue and downloaded files, asked as the listener would ask
/// them; the feeds are read back by two podcast clients (podcastparser, feedparser).
@Suite struct PersonalFeedRouteTests {
    static let base = "http://127.0.0.1:8372"
    private let enclosures = ["http://cdn.example/e3.mp3", "http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]

    /// A feed of three episodes with show notes, durations and guids, and titles that need escaping in XML and in
    /// a URL.
    private func feed() -> String {
        let titles = ["Third: Ünïcode & <tags>", "Second \"quoted\" 50%", "First one"]
        let items = enclosures.enumerated().map { index, url in
            """
            <item><title>\(XMLEscape.text(titles[index]))</title><guid isPermaLink="false">urn:ep:\(3 - index)</guid>
            <description>Notes of &lt;b&gt;episode&lt;/b&gt; \(3 - index) &amp; more</description>
            <itunes:duration>\(600 * (3 - index))</itunes:duration>
            <pubDate>\(28 - index) Jan 2027 10:00:00 GMT</pubDate>
            <enclosure url="\(url)" type="audio/mpeg" length="\(PodcastHarness.body(for: url).count)"/></item>
            """
        }
        return """
            <?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>Show &amp; Tell</title><link>https://example.com/</link><description>About it</description>
            <itunes:author>Ann Author</itunes:author>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """
    }

    /// A podcast subscribed with its two newest episodes downloaded; runs `body` while the queue runs.
    private func withDownloads(
        _ body: (PodcastHarness, Int64, [EpisodeRecord]) async throws -> Void
    ) async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        harness.feeds.documents.withLock { $0[PodcastHarness.feedURL] = feed() }
        try await harness.whileRunning {
            _ = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(2))
            )
            #expect(try await harness.completed(2))
            let episodes = try await harness.episodes()
            let podcast = try #require(episodes.first).podcastID
            try await body(harness, podcast, episodes)
        }
    }

    private func get(
        _ route: some WebRoute,
        _ path: String,
        method: WebRequest.Method = .get,
        headers: [String: String] = [:],
        base: String = Self.base
    ) async throws -> WebResponse {
        try #require(
            await route.respond(to: WebRequest(method: method, rawPath: path, headers: headers, baseURL: base))
        )
    }

    private func header(_ response: WebResponse, _ name: String) -> String? {
        response.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    private func bytes(_ response: WebResponse) -> [UInt8] {
        switch response.body {
        case .empty: return []
        case .bytes(let bytes): return bytes
        case .file(let descriptor, let offset, let length):
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: Int(length))
            let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, Int(length), off_t(offset)) }
            return Array(buffer.prefix(max(0, read)))
        }
    }

    /// The file a download of `episode` wrote.
    private func downloadedFile(_ harness: PodcastHarness, _ episode: EpisodeRecord) async throws -> String {
        let id = try #require(episode.downloadID)
        return try #require(await harness.queue.infos([id])[id]).file
    }

    private func sha256(_ bytes: [UInt8]) throws -> String {
        let scratch = try TemporaryDirectory(prefix: "singlecast-sha")
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.file("bytes")))
        return try run("/usr/bin/sha256sum", [scratch.file("bytes")]).prefix(64).description
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(executable) \(arguments) exited \(process.terminationStatus)")
        return text
    }

    /// What podcastparser and feedparser read in `document`: per client, each episode's title, guid, enclosure URL,
    /// length and type, one tab-separated line each.
    private func clientsRead(_ document: [UInt8]) throws -> (podcastparser: [String], feedparser: [String]) {
        let scratch = try TemporaryDirectory(prefix: "singlecast-feed")
        let path = scratch.file("feed.xml")
        try Data(document).write(to: URL(fileURLWithPath: path))
        let script = """
            import sys, podcastparser, feedparser
            path = sys.argv[1]
            with open(path, 'rb') as stream:
                parsed = podcastparser.parse('http://127.0.0.1:8372/feed.xml', stream)
            for e in parsed['episodes']:
                enc = e['enclosures'][0]
                print('P\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s' % (e['title'], e['guid'], enc['url'], enc['file_size'],
                    enc['mime_type'], e['total_time']))
            feed = feedparser.parse(path)
            assert not feed.bozo, feed.bozo_exception
            for e in feed.entries:
                enc = e.enclosures[0]
                print('F\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s' % (e.title, e.id, enc.href, enc.length, enc.type,
                    e.itunes_duration))
            """
        let lines = try run("/usr/bin/python3", ["-c", script, path]).split(separator: "\n").map(String.init)
        return (
            lines.filter { $0.hasPrefix("P\t") }.map { String($0.dropFirst(2)) },
            lines.filter { $0.hasPrefix("F\t") }.map { String($0.dropFirst(2)) }
        )
    }

    @Test(
        "podcast clients read the personal feeds with their downloaded episodes",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed")
    )
    func clientsReadTheFeeds() async throws {
        try await withDownloads { harness, podcast, episodes in
            let route = PersonalFeedRoute(subscriptions: harness.subscriptions)
            let downloaded = episodes.filter { $0.downloadID != nil }
            #expect(downloaded.count == 2)
            var expected: [String] = []
            for episode in downloaded {
                let file = try await downloadedFile(harness, episode)
                let name = URL(fileURLWithPath: file).lastPathComponent
                let url = Self.base + "/media/\(episode.id)/" + name.percentEncodedExceptUnreserved()
                let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
                expected.append(
                    "\(episode.title)\t\(episode.guid!)\t\(url)\t\(size)\taudio/mpeg\t\(episode.durationSeconds!)"
                )
            }
            for path in ["/feeds/\(podcast).xml", "/feeds/all.xml"] {
                let response = try await get(route, path)
                #expect(response.status == 200)
                #expect(header(response, "Content-Type") == "application/rss+xml; charset=utf-8")
                #expect(header(response, "Cache-Control") == "no-cache")
                let document = bytes(response)
                #expect(header(response, "ETag") == EntityTag.hashing(document).header)
                let read = try clientsRead(document)
                #expect(read.podcastparser == expected, "\(path): \(String(decoding: document, as: UTF8.self))")
                #expect(read.feedparser == expected)
                // singlecast's own parser reads it too, with the podcast's namespace declared.
                let text = String(decoding: document, as: UTF8.self)
                #expect(text.contains("xmlns:podcast=\"https://podcastindex.org/namespace/1.0\""))
                #expect(text.contains("xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\""))
                let parsed = try FeedParser.parse(Data(document), url: Self.base + path)
                #expect(parsed.episodes.map(\.title) == downloaded.map(\.title))
                // The store keeps show notes as text; in the document they are escaped again.
                #expect(text.contains("<description>Notes of episode 3 &amp; more</description>"))
            }
        }
    }

    @Test func feedsAnswerConditionalRequestsAndFollowTheCatalogue() async throws {
        try await withDownloads { harness, podcast, episodes in
            let route = PersonalFeedRoute(subscriptions: harness.subscriptions)
            let path = "/feeds/\(podcast).xml"
            let first = try await get(route, path)
            let etag = try #require(header(first, "ETag"))
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
            // The same bytes, the same tag.
            #expect(header(try await get(route, path), "ETag") == etag)
            for condition in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
                let response = try await get(route, path, headers: ["if-none-match": condition])
                #expect(response.status == 304, "\(condition)")
                #expect(header(response, "ETag") == etag)
                #expect(bytes(response).isEmpty)
            }
            #expect(try await get(route, path, headers: ["if-none-match": "\"other\""]).status == 200)
            #expect(try await get(route, path, method: .head).status == 200)
            #expect(try await get(route, path, method: .post).status == 405)
            // A deleted episode leaves the feed, and the feed's tag changes.
            let newest = try #require(episodes.first { $0.downloadID != nil })
            _ = try await harness.subscriptions.delete(episodes: [newest.id])
            let after = try await get(route, path, headers: ["if-none-match": etag])
            #expect(after.status == 200)
            #expect(header(after, "ETag") != etag)
            #expect(!String(decoding: bytes(after), as: UTF8.self).contains("/media/\(newest.id)/"))
            // Unknown podcasts and names are 404; other documents under /feeds/ are other routes'.
            for unknown in [
                "/feeds/999.xml", "/feeds/0\(podcast).xml", "/feeds/x.xml", "/feeds/%2e%2e.xml", "/feeds/a/b.xml",
            ] {
                #expect(try await get(route, unknown).status == 404, "\(unknown)")
            }
            #expect(
                await route.respond(to: WebRequest(method: .get, rawPath: "/feeds/\(podcast).svg", baseURL: Self.base))
                    == nil
            )
            #expect(await route.respond(to: WebRequest(method: .get, rawPath: "/media/1/x", baseURL: Self.base)) == nil)
        }
    }

    @Test func concurrentFetchesShareRenderingsPerAddress() async throws {
        try await withDownloads { harness, podcast, _ in
            let route = PersonalFeedRoute(subscriptions: harness.subscriptions)
            let path = "/feeds/\(podcast).xml"
            let bases = [Self.base, "http://[::1]:8372"]
            var expected: [[UInt8]] = []
            for base in bases { expected.append(bytes(try await get(route, path, base: base))) }
            #expect(expected[0] != expected[1])
            try await withThrowingTaskGroup(of: (Int, [UInt8], Int).self) { group in
                for index in 0..<64 {
                    group.addTask {
                        let response = try await get(route, path, base: bases[index % 2])
                        return (index % 2, bytes(response), response.status)
                    }
                }
                for try await (base, document, status) in group {
                    #expect(status == 200)
                    // Each address gets links that start with it, even when renderings are shared.
                    #expect(document == expected[base])
                }
            }
            #expect(route.renderingsRunning == 0)
        }
    }

    @Test func theOPMLListsEveryFeedWithoutCredentials() async throws {
        try await withDownloads { harness, podcast, _ in
            let route = PersonalFeedRoute(subscriptions: harness.subscriptions)
            let response = try await get(route, "/feeds.opml", base: "http://user:secret@192.0.2.1:8372/")
            #expect(response.status == 200)
            #expect(header(response, "Content-Type") == "text/x-opml; charset=utf-8")
            let document = bytes(response)
            #expect(!String(decoding: document, as: UTF8.self).contains("secret"))
            let outlines = try OPML.parse(Data(document))
            #expect(
                outlines.map(\.feedURL) == [
                    "http://192.0.2.1:8372/feeds/\(podcast).xml", "http://192.0.2.1:8372/feeds/all.xml",
                ]
            )
            #expect(outlines.first?.title == "Show & Tell")
            // The list has a validator of its own; its bytes stay the same while the subscriptions do.
            let etag = try #require(header(response, "ETag"))
            let again = try await get(
                route,
                "/feeds.opml",
                headers: ["if-none-match": etag],
                base: "http://192.0.2.1:8372"
            )
            #expect(again.status == 304)
        }
    }

    @Test func mediaIsServedWithRangesAndValidators() async throws {
        try await withDownloads { harness, _, episodes in
            let route = ServedFileRoute.media(subscriptions: harness.subscriptions)
            let episode = try #require(episodes.first { $0.downloadID != nil })
            let file = try await downloadedFile(harness, episode)
            let original = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            let path =
                "/media/\(episode.id)/" + URL(fileURLWithPath: file).lastPathComponent.percentEncodedExceptUnreserved()

            let full = try await get(route, path)
            #expect(full.status == 200)
            #expect(header(full, "Content-Type") == "audio/mpeg")
            #expect(header(full, "Accept-Ranges") == "bytes")
            let lastModified = try #require(header(full, "Last-Modified"))
            let etag = try #require(header(full, "ETag"))
            let served = bytes(full)
            #expect(served == original)
            #expect(try sha256(served) == sha256(original))

            let partial = try await get(route, path, headers: ["range": "bytes=3-9"])
            #expect(partial.status == 206)
            #expect(header(partial, "Content-Range") == "bytes 3-9/\(original.count)")
            #expect(bytes(partial) == Array(original[3...9]))
            let suffix = try await get(route, path, headers: ["range": "bytes=-4", "if-range": etag])
            #expect(suffix.status == 206 && bytes(suffix) == Array(original.suffix(4)))
            #expect(
                try await get(route, path, headers: ["range": "bytes=0-1", "if-range": lastModified]).status == 206
            )
            // A stale validator, several ranges or a malformed one: the whole file.
            for headers in [
                ["range": "bytes=0-1", "if-range": "\"stale\""],
                ["range": "bytes=0-1", "if-range": "Thu, 01 Jan 2026 00:00:00 GMT"],
                ["range": "bytes=0-1,4-5"],
                ["range": "bytes=5-1"],
                ["range": "lines=1-2"],
            ] {
                let response = try await get(route, path, headers: headers)
                #expect(response.status == 200, "\(headers)")
                #expect(try sha256(bytes(response)) == sha256(original))
            }
            let beyond = try await get(route, path, headers: ["range": "bytes=\(original.count)-"])
            #expect(beyond.status == 416)
            #expect(header(beyond, "Content-Range") == "bytes */\(original.count)")
            #expect(bytes(beyond).isEmpty)
            let notModified = try await get(route, path, headers: ["if-none-match": etag])
            #expect(notModified.status == 304 && bytes(notModified).isEmpty)
            // HEAD: the GET's headers, ranges ignored.
            let head = try await get(route, path, method: .head, headers: ["range": "bytes=0-1"])
            #expect(head.status == 200)
            #expect(header(head, "ETag") == etag)
            // The whole file's descriptor, so that libmicrohttpd reports its length and sends none of it.
            guard case .file(_, 0, let length) = head.body else {
                Issue.record("a HEAD did not answer with the file")
                return
            }
            #expect(length == UInt64(original.count))
            _ = bytes(head)
            #expect(try await get(route, path, method: .post).status == 405)
        }
    }

    @Test func onlyListedFilesByTheirOwnNameAreServed() async throws {
        try await withDownloads { harness, _, episodes in
            let route = ServedFileRoute.media(subscriptions: harness.subscriptions)
            let episode = try #require(episodes.first { $0.downloadID != nil })
            let notDownloaded = try #require(episodes.first { $0.downloadID == nil })
            let file = try await downloadedFile(harness, episode)
            let name = URL(fileURLWithPath: file).lastPathComponent
            let encoded = name.percentEncodedExceptUnreserved()
            let id = episode.id
            #expect(try await get(route, "/media/\(id)/\(encoded)").status == 200)
            let attempts = [
                "/media", "/media/", "/media/\(id)", "/media/\(id)/", "/media/\(id)/x.mp3",
                "/media/\(notDownloaded.id)/\(encoded)", "/media/999999/\(encoded)", "/media/0\(id)/\(encoded)",
                "/media/\(id)/\(encoded)/", "/media/\(id)/../\(id)/\(encoded)", "/media/\(id)/..",
                "/media/\(id)/%2e%2e/%2e%2e/etc/passwd", "/media/\(id)/..%2f..%2fetc%2fpasswd",
                "/media/\(id)/%252e%252e%252fetc%252fpasswd", "/media/\(id)/..%5c..%5cetc%5cpasswd",
                "/media/\(id)/..\\..\\etc\\passwd", "/media/\(id)/%2fetc%2fpasswd", "/media/../etc/passwd",
                "/media/\(id)/\(encoded)%00", "/media/\(id)/.%2e/\(encoded)", "/media/\(id)/%C0%AE%C0%AE",
            ]
            for attempt in attempts {
                let response = try await get(route, attempt)
                #expect(response.status == 404, "\(attempt)")
                if case .file = response.body { Issue.record("\(attempt) opened a file") }
            }
            // After `delete`, the file is no longer listed: 404 though the URL was good.
            let other = try #require(episodes.last { $0.downloadID != nil && $0.id != id })
            let otherFile = try await downloadedFile(harness, other)
            let otherPath =
                "/media/\(other.id)/"
                + URL(fileURLWithPath: otherFile).lastPathComponent.percentEncodedExceptUnreserved()
            #expect(try await get(route, otherPath).status == 200)
            _ = try await harness.subscriptions.delete(episodes: [other.id])
            #expect(try await get(route, otherPath).status == 404)
        }
    }

    @Test func symbolicLinksAreNeverFollowed() async throws {
        try await withDownloads { harness, _, episodes in
            let route = ServedFileRoute.media(subscriptions: harness.subscriptions)
            let episode = try #require(episodes.first { $0.downloadID != nil })
            let file = try await downloadedFile(harness, episode)
            let path =
                "/media/\(episode.id)/" + URL(fileURLWithPath: file).lastPathComponent.percentEncodedExceptUnreserved()
            let manager = FileManager.default
            let outside = harness.home.file("outside.mp3")
            try Data("secret outside download_dir".utf8).write(to: URL(fileURLWithPath: outside))

            // A link planted in the file's place, pointing out of download_dir.
            try manager.moveItem(atPath: file, toPath: file + ".real")
            try manager.createSymbolicLink(atPath: file, withDestinationPath: outside)
            #expect(try await get(route, path).status == 404)
            // Or at another file inside it.
            try manager.removeItem(atPath: file)
            try manager.createSymbolicLink(atPath: file, withDestinationPath: file + ".real")
            #expect(try await get(route, path).status == 404)
            try manager.removeItem(atPath: file)
            try manager.moveItem(atPath: file + ".real", toPath: file)
            #expect(try await get(route, path).status == 200)

            // A link on the way: the podcast's folder replaced by a link to a copy of it outside download_dir.
            let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
            let moved = harness.home.file("moved-folder")
            try manager.moveItem(atPath: folder, toPath: moved)
            try manager.createSymbolicLink(atPath: folder, withDestinationPath: moved)
            #expect(manager.fileExists(atPath: file))
            #expect(try await get(route, path).status == 404)
        }
    }

    @Test func artworkIsServedFromTheCache() async throws {
        try await withDownloads { harness, podcast, _ in
            let route = ServedFileRoute.artwork(subscriptions: harness.subscriptions)
            #expect(try await get(route, "/artwork/\(podcast)").status == 404)
            try FileManager.default.createDirectory(
                atPath: harness.home.file("artwork"),
                withIntermediateDirectories: true
            )
            let image = harness.home.file("artwork/\(podcast).png")
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
            try Data(png).write(to: URL(fileURLWithPath: image))
            #expect(
                await harness.subscriptions.storeArtwork(.init(path: image, etag: nil, lastModified: nil), of: podcast)
            )
            let response = try await get(route, "/artwork/\(podcast)")
            #expect(response.status == 200)
            #expect(header(response, "Content-Type") == "image/png")
            #expect(bytes(response) == png)
            #expect(try await get(route, "/artwork/\(podcast)/x").status == 404)
            #expect(try await get(route, "/artwork/999").status == 404)
            // The feed points at it.
            let feed = try await get(PersonalFeedRoute(subscriptions: harness.subscriptions), "/feeds/\(podcast).xml")
            #expect(
                String(decoding: bytes(feed), as: UTF8.self).contains(
                    "<itunes:image href=\"\(Self.base)/artwork/\(podcast)\"/>"
                )
            )
        }
    }
}
