import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `use_trash = true` with a Trash that cannot take a file: retention leaves the file, its download and the
/// episode's link, logs why, and `rules` shows the deletion as one that could not be made.
@Suite struct TrashRefusalTests {
    @Test func aPlayedFileTheTrashRefusesStaysAndRulesSayWhy() throws {
        let site = try NginxServer()
        _ = try site.serve(TestContent.mp3(count: 4096, filler: 5), as: "media-a.mp3")
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Kept Radio</title><link>https://example.com/</link>
            <description>d</description>
            <item><title>One</title><guid isPermaLink="false">a</guid>
            <pubDate>21 Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(site.url("/media-a.mp3"))" type="audio/mpeg" length="4096"/></item>
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        // The home trash, on the episodes' file system, is spoilt: its `files` is a plain file.
        try FileManager.default.createDirectory(
            atPath: daemon.root.file("data/Trash/info"),
            withIntermediateDirectories: true
        )
        try Data("x".utf8).write(to: URL(fileURLWithPath: daemon.root.file("data/Trash/files")))
        try daemon.writeConfig("delete_played_after = 1s\nuse_trash = true\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:1"}"#
        )
        let finished = try client.finished(subscribed.queued)
        #expect(finished.allSatisfy { $0.state == .completed })
        let podcast = subscribed.podcast.id
        let episode = try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast)"}"#)
            .episodes[0]
        let file = try #require(episode.file)

        _ = try client.result("played", as: EpisodeMarkResult.self, params: #"{"episodes":[\#(episode.id)]}"#)
        #expect(try eventually { daemon.log.contains("could not delete \(file)") }, "\(daemon.log)")
        #expect(FileManager.default.fileExists(atPath: file), "the listener asked for the Trash: the file stays")
        let after = try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast)"}"#)
            .episodes[0]
        #expect(after.downloadID == episode.downloadID && after.file == file)
        let rules = try client.result("rules", as: RulesResult.self, params: #"{"podcast":"\#(podcast)"}"#)
        let reason = rules.delete.first { $0.id == episode.id }?.reason ?? ""
        #expect(reason.contains("played more than 1s ago; could not be deleted: "), "\(rules.delete)")
        #expect(reason.contains("Trash"), "\(reason)")
        #expect(daemon.stop() == 0)
    }
}
