import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a hostile publisher can send, against the real daemon: names and URLs built to escape the download
/// directory.
@Suite struct HostileContentTests {
    private func error(_ client: LineClient, _ method: String, _ params: String?) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) succeeded unexpectedly: \(value)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }

    /// Polls `downloads` until every one of `ids` has completed or failed.
    private func settled(_ client: LineClient, _ ids: [Int64], timeout: Double = 30) throws -> [DownloadInfo] {
        let deadline = Date.now.addingTimeInterval(timeout)
        while true {
            let mine = try client.result("downloads", as: DownloadsResult.self).downloads.filter { ids.contains($0.id) }
            if mine.count == ids.count, mine.allSatisfy({ $0.state == .completed || $0.state == .failed }) {
                return mine
            }
            guard Date.now < deadline else { throw HarnessError("downloads \(ids) did not settle: \(mine)") }
            usleep(50_000)
        }
    }

    /// A field of /proc/<pid>/status, in bytes (`VmRSS`, `VmHWM`).
    private func memory(_ daemon: DaemonProcess, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw HarnessError("no \(field) in /proc status") }
        return kilobytes * 1024
    }

    /// Every regular file and directory below `root`, relative to it.
    private func walk(_ root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? []
    }

    @Test func feedsCannotPlaceFilesOutsideTheDownloadDirectory() throws {
        let site = try NginxServer()
        try FileManager.default.createDirectory(atPath: site.documentRoot + "/m", withIntermediateDirectories: true)
        for name in ["a", "b", "c", "d", "e"] {
            _ = try site.serve(Data(repeating: 0x61, count: 1000), as: "m/\(name).mp3")
        }
        let long = String(repeating: "L", count: 4096)
        let items: [(title: String, enclosure: String)] = [
            ("../../.bashrc", site.url("/m/a.mp3")),
            ("/etc/passwd", site.url("/m/b.mp3")),
            (long, site.url("/m/c.mp3")),
            ("nul\u{1}byte/../..", site.url("/m/d.mp3")),
            ("..", site.url("/m/%2e%2e%2f%2e%2e%2f.bashrc")),
            ("dots", site.url("/../../../.bashrc")),
            ("absolute", "/m/e.mp3"),
            ("file", "file:///etc/passwd"),
            ("ftp", "ftp://127.0.0.1:9/x.mp3"),
            ("script", "javascript:alert(1)"),
        ]
        let feed = items.enumerated().map { index, item in
            """
            <item><title>\(item.title)</title><guid>g\(index)</guid>
            <pubDate>\(String(format: "%02d", 28 - index)) Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(item.enclosure)" type="audio/mpeg"/></item>
            """
        }
        let feedURL = try site.serve(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0"><channel><title>../../../../tmp</title>
                \(feed.joined(separator: "\n"))
                </channel></rss>
                """.utf8
            ),
            as: "feed.xml"
        )
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_attempts = 1\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let downloadDirectory = daemon.root.file("data/singlecast/episodes")

        // Episodes whose enclosure is not http(s) are skipped; they no longer make the whole subscription fail.
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:20"}"#
        )
        #expect(subscribed.podcast.episodes == items.count)
        #expect(subscribed.queued.count == 7)
        let downloads = try settled(client, subscribed.queued)
        #expect(downloads.filter { $0.state == .completed }.count == 5, "\(downloads)")
        for download in downloads {
            #expect(download.file.hasPrefix(downloadDirectory + "/"), "\(download.file)")
            #expect(!download.file.dropFirst(downloadDirectory.count).contains("/."), "\(download.file)")
        }

        let episodes = try client.result(
            "episodes",
            as: EpisodesResult.self,
            params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
        ).episodes
        let script = try #require(episodes.first { $0.title == "script" })
        let refused = try error(client, "enqueue", #"{"episodes":[\#(script.id)]}"#)
        #expect(refused.reason == "no_enclosure")
        #expect(refused.message.contains("'javascript:alert(1)' is not an http or https URL"))
        let mixed = try error(client, "download", #"{"podcast":"\#(subscribed.podcast.id)","latest":20}"#)
        #expect(mixed.reason == "no_enclosure")
        #expect(try client.result("downloads", as: DownloadsResult.self).downloads.count == 7)
        #expect(daemon.stop() == 0)

        // Every file the daemon made is in the download directory or its own state, config, runtime or cache.
        let allowed = ["data/singlecast/episodes", "state", "config", "run", "home/.cache/singlecast"]
        for path in walk(daemon.root.path) where !path.hasPrefix("notify-") && !path.hasPrefix("daemon-") {
            let inside = allowed.contains { path == $0 || path.hasPrefix($0 + "/") || $0.hasPrefix(path + "/") }
            #expect(inside || ["data", "home"].contains(path), "\(path) is outside the allowed places")
            #expect(!(path as NSString).lastPathComponent.hasPrefix(".bashrc"), "\(path)")
        }
        let saved = walk(downloadDirectory).filter { $0.hasSuffix(".mp3") }
        #expect(saved.count == 5, "\(saved)")
        #expect(saved.allSatisfy { $0.split(separator: "/").allSatisfy { $0.utf8.count <= 255 } })
    }
}
