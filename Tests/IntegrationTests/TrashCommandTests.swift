import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// `singlecastctl trash`, `trash restore` and `trash empty` end to end: the real daemon and client, episodes served
/// by nginx, a real Trash directory read back with trash-cli.
@Suite struct TrashCommandTests {
    private static let hasTrashCLI = FileManager.default.isExecutableFile(atPath: "/usr/bin/trash-list")

    private static func feed(site: NginxServer) -> Data {
        let items = [("b", "Second Talk", 22), ("a", "First Talk", 21)].map { guid, title, day in
            """
            <item><title>\(title)</title><guid isPermaLink="false">\(guid)</guid>
            <pubDate>\(day) Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(site.url("/media-\(guid).mp3"))" type="audio/mpeg" length="4096"/></item>
            """
        }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Trash Radio</title><link>https://example.com/</link>
            <description>d</description>\(items.joined(separator: "\n"))</channel></rss>
            """.utf8
        )
    }

    private func ctl(
        _ daemon: DaemonProcess,
        _ arguments: [String]
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProgram(Binaries.client.path, arguments + ["--socket", daemon.socketPath])
    }

    @Test(.enabled(if: hasTrashCLI, "trash-cli is not installed"))
    func aDeletedEpisodeIsListedRestoredAsDownloadedAndPinnedThenEmptied() throws {
        let site = try NginxServer()
        var media: [String: Data] = [:]
        for guid in ["a", "b"] {
            media[guid] = TestContent.mp3(count: 4096, filler: Character(guid).asciiValue ?? 0)
            _ = try site.serve(media[guid] ?? Data(), as: "media-\(guid).mp3")
        }
        let feedURL = try site.serve(Self.feed(site: site), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:2"}"#
        )
        _ = try client.finished(subscribed.queued)
        let podcast = subscribed.podcast.id
        let episodes = try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast)"}"#)
        let first = try #require(episodes.episodes.first { $0.guid == "a" })
        let file = try #require(first.file)

        // `delete` says where the file went.
        let deleted = try client.result("delete", as: DeleteResult.self, params: #"{"episodes":[\#(first.id)]}"#)
        let trashedTo = try #require(deleted.trashedTo?[file])
        #expect(trashedTo.hasPrefix(daemon.root.file("data/Trash/files/")))
        let said = try ctl(daemon, ["delete", String(try #require(episodes.episodes.first { $0.guid == "b" }).id)])
        #expect(said.stdout.hasPrefix("Moved "), "\(said.stdout)")
        #expect(said.stdout.contains(" to the Trash: " + daemon.root.file("data/Trash/files/")), "\(said.stdout)")

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = daemon.root.file("data")
        #expect(try runProgram("/usr/bin/trash-list", [], environment: environment).stdout.contains(" \(file)\n"))

        let listed = try client.result("trash", as: TrashResult.self)
        #expect(listed.files.count == 2)
        let entry = try #require(listed.files.first { $0.original == file })
        #expect(entry.file == trashedTo)
        #expect(entry.episode == first.id)
        #expect(entry.episodeTitle == "First Talk")
        #expect(entry.podcastTitle == "Trash Radio")
        #expect(entry.size == 4096)
        #expect(listed.totalBytes == 8192)
        let table = try ctl(daemon, ["trash"])
        #expect(table.status == 0)
        #expect(table.stdout.contains(entry.id) && table.stdout.contains("Trash Radio"), "\(table.stdout)")
        // A long original path is cut to the column's width ('--json' has it whole).
        #expect(table.stdout.contains("\(first.id) First Talk "), "\(table.stdout)")
        #expect(table.stdout.hasSuffix("2 file(s), 8.2 kB in the Trash.\n"), "\(table.stdout)")

        // Something at the old place now: the file stays in the Trash, and the client ends with 1.
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: file))
        let taken = try ctl(daemon, ["trash", "restore", entry.id])
        #expect(taken.status == 1)
        #expect(taken.stdout == "Kept \(entry.id) in the Trash: something is at \(file) now; move it away first.\n")
        try FileManager.default.removeItem(atPath: file)

        let restored = try ctl(daemon, ["trash", "restore", entry.id])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.hasPrefix("Restored \(file): episode \(first.id) is downloaded again as download "))
        #expect(restored.stdout.contains("pinned so that retention keeps it"), "\(restored.stdout)")
        #expect(sameBytes(FileManager.default.contents(atPath: file), media["a"]))
        let after = try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(podcast)"}"#)
        let back = try #require(after.episodes.first { $0.id == first.id })
        #expect(back.downloadState == .completed)
        #expect(back.file == file)
        #expect(back.pinned == true)
        #expect(back.skipped == nil)
        #expect(try client.result("trash", as: TrashResult.self).files.count == 1)
        #expect(!(try runProgram("/usr/bin/trash-list", [], environment: environment).stdout.contains(" \(file)\n")))

        let unknown = try ctl(daemon, ["trash", "restore", "ffffffff"])
        #expect(unknown.status != 0)
        #expect(
            unknown.stderr.contains("nothing singlecast put in the Trash has the id 'ffffffff'"),
            "\(unknown.stderr)"
        )

        // Emptying: nothing is old enough for --older-than 1h; then everything of singlecast's goes, and only that.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: daemon.root.file("data/Trash/files/mine.mp3")))
        let young = try ctl(daemon, ["trash", "empty", "--older-than", "1h"])
        #expect(young.stdout == "Nothing of singlecast's to empty from the Trash.\n")
        let emptied = try ctl(daemon, ["trash", "empty"])
        #expect(emptied.status == 0)
        #expect(emptied.stdout == "Emptied 1 file(s) (4.1 kB) from the Trash.\n")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: daemon.root.file("data/Trash/files")) == ["mine.mp3"]
        )
        #expect(try ctl(daemon, ["trash"]).stdout == "singlecast has nothing in the Trash.\n")
        #expect(daemon.stop() == 0)
    }
}
