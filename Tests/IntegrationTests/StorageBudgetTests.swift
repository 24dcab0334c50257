import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `max_storage` with the Trash on, against a real daemon and nginx: what the listener asked for is never the room
/// made for another file, what goes for the budget is deleted rather than moved to the Trash (which frees nothing),
/// and what singlecast put in the Trash counts and is emptied before any episode is deleted.
@Suite struct StorageBudgetTests {
    private func trashFiles(_ daemon: DaemonProcess) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: daemon.root.file("data/Trash/files"))) ?? []).sorted()
    }

    @Test func theBudgetKeepsWhatWasAskedForAndEmptiesItsOwnTrashFirst() throws {
        let site = try NginxServer()
        for name in ["a", "b", "c", "plain"] {
            _ = try site.serve(TestContent.mp3(count: 400 << 10, filler: UInt8(name.utf8.first!)), as: "\(name).mp3")
        }
        func item(_ name: String, day: Int) -> String {
            """
            <item><title>Episode \(name)</title><guid isPermaLink="false">\(name)</guid>
            <pubDate>\(day) Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(site.url("/\(name).mp3"))" type="audio/mpeg" length="409600"/></item>
            """
        }
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Budget Radio</title><link>https://example.com/</link>
            <description>d</description>\(item("c", day: 23))\(item("b", day: 22))\(item("a", day: 21))
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_storage = 1M\nuse_trash = true\ndelete_played_after = 1s\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:2"}"#
        )
        #expect(try client.finished(subscribed.queued).allSatisfy { $0.state == .completed })
        let podcast = subscribed.podcast.id
        func episodes() throws -> [String: EpisodeInfo] {
            let listed = try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast)"}"#)
            return Dictionary(uniqueKeysWithValues: listed.episodes.map { (String($0.title.suffix(1)), $0) })
        }
        let b = try #require(episodes()["b"]?.file)

        // The listener asks for the oldest episode: 1200K against 1M. It stays; b, the oldest the rules fetched,
        // goes for good, and latest:2 does not reach back for it.
        let a = try #require(episodes()["a"])
        let asked = try client.result("enqueue", as: EnqueueResult.self, params: #"{"urls":[],"episodes":[\#(a.id)]}"#)
        #expect(try client.finished(asked.downloads.map(\.id)).allSatisfy { $0.state == .completed })
        let aFile = try #require(try episodes()["a"]?.file)
        #expect(try eventually { !FileManager.default.fileExists(atPath: b) }, "\(daemon.log)")
        #expect(FileManager.default.fileExists(atPath: aFile), "what the listener asked for is never evicted")
        #expect(trashFiles(daemon).isEmpty, "a file deleted for the budget does not go to the Trash")

        // c, played, goes to the Trash by its rule: 800K with a, within the budget, so it stays there.
        let c = try #require(try episodes()["c"])
        _ = try client.result("played", as: EpisodeMarkResult.self, params: #"{"episodes":[\#(c.id)]}"#)
        #expect(try eventually { trashFiles(daemon).count == 1 }, "\(daemon.log)")
        usleep(300_000)
        #expect(trashFiles(daemon).count == 1)

        // A plain download takes 400K more: singlecast empties its own file from the Trash, and deletes no episode.
        let plain = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(site.url("/plain.mp3"))"]}"#
        )
        #expect(try client.finished(plain.downloads.map(\.id)).allSatisfy { $0.state == .completed })
        #expect(try eventually { trashFiles(daemon).isEmpty }, "\(daemon.log)")
        #expect(FileManager.default.fileExists(atPath: aFile))
        #expect(try eventually { daemon.log.contains("emptied") }, "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }
}
