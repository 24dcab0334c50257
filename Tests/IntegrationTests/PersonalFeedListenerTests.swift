import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// Personal feeds end to end: a real singlecastd downloads an episode and its transcript from nginx, and curl and
/// podcastparser, as a phone's podcast app would, read the feed and fetch the file over the HTTP listener.
@Suite struct PersonalFeedListenerTests {
    @Test func aPodcastAppReadsTheFeedAndFetchesTheEpisodeWithRangesOverTheListener() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            var bytes = TestContent.mp3(count: 3 << 20, filler: 0)
            for index in stride(from: 4096, to: bytes.count, by: 997) {
                bytes[index] = UInt8(truncatingIfNeeded: index)
            }
            let episode = try site.serve(bytes, as: "low-water.mp3")
            let transcript = "WEBVTT\n\n00:00.000 --> 00:01.000\nLow water.\n"
            let captions = try site.serve(Data(transcript.utf8), as: "low-water.en.vtt")
            let feed = try site.serve(
                Data(
                    """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
                    <title>Tides</title><link>https://example.com/</link>
                    <item><title>Low water</title><guid isPermaLink="false">low-1</guid>
                    <pubDate>Thu, 03 Dec 2026 10:00:00 GMT</pubDate>
                    <podcast:transcript url="\(captions)" type="text/vtt" language="en" rel="captions"/>
                    <enclosure url="\(episode)" type="audio/mpeg" length="\(bytes.count)"/></item>
                    </channel></rss>
                    """.utf8
                ),
                as: "feed.xml"
            )
            let port = try freeLoopbackPort()
            let daemon = DaemonProcess()
            try daemon.writeConfig("http_listen = 127.0.0.1:\(port)\n")
            try daemon.startAndWaitUntilReady()
            defer { _ = daemon.stop() }
            let client = try LineClient(path: daemon.socketPath)
            let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#)
                .podcast
            let listed = try client.result(
                "episodes",
                as: EpisodesResult.self,
                params: #"{"podcast":"\#(podcast.id)"}"#
            ).episodes
            let queued = try client.result(
                "enqueue",
                as: EnqueueResult.self,
                params: #"{"episodes":[\#(try #require(listed.first).id)]}"#
            )
            #expect(try client.finished(queued.downloads.map(\.id)).map(\.state) == [.completed])
            let secret = try client.result("http_password", as: HTTPPasswordResult.self)
            let user = "\(secret.user):\(secret.password)"
            let base = "http://127.0.0.1:\(port)"
            let scratch = daemon.root.file("phone")
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)

            func curl(_ arguments: [String]) throws -> (status: Int, body: String) {
                let run = try runProgram("/usr/bin/curl", ["-s", "-g", "-u", user, "-w", "\n%{http_code}"] + arguments)
                let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
                return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
            }

            // The transcript is saved after the episode; the feed names it once it is.
            var document = ""
            let listsTranscript = try eventually(30) {
                document = try curl(["\(base)/feeds/\(podcast.id).xml"]).body
                return document.contains("<podcast:transcript")
            }
            #expect(listsTranscript, "the feed never listed the transcript: \(document)")

            // podcastparser reads the feed as a podcast app does.
            let feedFile = scratch + "/feed.xml"
            try document.write(toFile: feedFile, atomically: true, encoding: .utf8)
            let parsed = try runProgram(
                "/usr/bin/python3",
                [
                    "-c",
                    "import json, sys, podcastparser; f = podcastparser.parse(sys.argv[1], open(sys.argv[1], 'rb')); "
                        + "print(json.dumps([[e['title'], e['enclosures'][0]['url']] for e in f['episodes']]))",
                    feedFile,
                ]
            )
            #expect(parsed.status == 0, "podcastparser: \(parsed.stderr)")
            let items = try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String]]
            let media = try #require(items?.first?.last)
            #expect(items?.first?.first == "Low water")
            #expect(media.hasPrefix("\(base)/media/"), "\(media)")

            // The whole file, byte for byte.
            let whole = scratch + "/whole.mp3"
            #expect(try curl(["-o", whole, media]).status == 200)
            let same = (try? Data(contentsOf: URL(fileURLWithPath: whole))) == bytes
            #expect(same, "the served file differs from the published one")
            // A range, and a range with a stale validator (the whole file, as RFC 9110 says).
            let part = scratch + "/part"
            #expect(try curl(["-o", part, "-r", "1000-1999", media]).status == 206)
            let rangeMatches = (try? Data(contentsOf: URL(fileURLWithPath: part))) == bytes.subdata(in: 1000..<2000)
            #expect(rangeMatches, "the range's bytes differ")
            #expect(try curl(["-o", part, "-r", "0-9", "-H", #"If-Range: "stale""#, media]).status == 200)
            #expect((try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) == bytes.count)
            // Past the end, and without credentials.
            #expect(try curl(["-o", "/dev/null", "-r", "\(bytes.count + 10)-", media]).status == 416)
            let anonymous = try runProgram("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", media])
            #expect(anonymous.stdout == "401")

            // The transcript, served from beside the episode.
            let transcriptURL = try #require(
                document.firstMatch(of: /<podcast:transcript url="([^"]+)"/).map { String($0.output.1) }
            )
            #expect(try curl([transcriptURL]).body == transcript)
        }
    }
}
