import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a hostile publisher or server can send, against the real daemon: entity bombs, external entities, bytes
/// that are not a feed, names and URLs built to escape the download directory, redirects to `file:`, and servers
/// that never stop sending headers or body.
@Suite struct HostileContentTests {
    private func error(_ client: LineClient, _ method: String, _ params: String?) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) succeeded unexpectedly: \(value)")
        case .notification: throw HarnessError("unexpected notification")
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

    @Test func documentsThatAreNoFeedsAreRefusedClearly() throws {
        let site = try NginxServer()
        let laughs = (1...9).map { level in
            "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }
        _ = try site.serve(
            Data(
                """
                <?xml version="1.0"?>
                <!DOCTYPE rss [<!ENTITY lol0 "lol">\(laughs.joined())]>
                <rss version="2.0"><channel><title>&lol9;</title></channel></rss>
                """.utf8
            ),
            as: "laughs.xml"
        )
        _ = try site.serve(
            Data(
                """
                <?xml version="1.0"?>
                <!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>
                <rss version="2.0"><channel><title>&x;</title></channel></rss>
                """.utf8
            ),
            as: "external.xml"
        )
        _ = try site.serve(Data("<!doctype html><html><body><p>Welcome</p></body></html>".utf8), as: "page.html")
        _ = try site.serve(Data(#"{"title":"not a feed","items":[1,2,3]}"#.utf8), as: "feed.json")
        _ = try site.serve(Data(repeating: UInt8(ascii: "A"), count: 100 << 20), as: "huge.txt")
        var invalidUTF8 = Data(#"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Bad "#.utf8)
        invalidUTF8 += Data([0xFF, 0xFE, 0xC3, 0x28, 0xED, 0xA0, 0x80])
        invalidUTF8 += Data("</title><item><title>One</title><guid>1</guid></item></channel></rss>".utf8)
        _ = try site.serve(invalidUTF8, as: "invalid-utf8.xml")

        let daemon = DaemonProcess()
        try daemon.writeConfig("max_feed_size = 1M\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let baseline = try memory(daemon, "VmRSS")

        for (name, reason, fragment) in [
            ("laughs.xml", "feed_invalid", "declares entities"),
            ("external.xml", "feed_invalid", "declares entities"),
            ("page.html", "feed_invalid", "cannot be read"),
            ("feed.json", "feed_invalid", "cannot be read"),
            ("huge.txt", "feed_unreachable", "more than the 1048576-byte maximum"),
        ] {
            let refused = try error(client, "subscribe", #"{"url":"\#(site.url("/\(name)"))"}"#)
            #expect(refused.reason == reason, "\(name): \(refused.message)")
            #expect(refused.message.contains(fragment), "\(name): \(refused.message)")
        }
        // Invalid UTF-8 is not a reason to refuse a feed: the bad bytes become U+FFFD.
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(site.url("/invalid-utf8.xml"))"}"#
        )
        #expect(subscribed.podcast.title.hasPrefix("Bad \u{FFFD}"))
        #expect(subscribed.podcast.episodes == 1)
        #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.count == 1)
        // The 100 MB body was cut off at max_feed_size, never held in memory.
        #expect(try memory(daemon, "VmHWM") - baseline < 64 << 20)
        #expect(daemon.stop() == 0)
    }

    @Test func feedsCannotPlaceFilesOutsideTheDownloadDirectory() throws {
        let site = try NginxServer()
        try FileManager.default.createDirectory(atPath: site.documentRoot + "/m", withIntermediateDirectories: true)
        for name in ["a", "b", "c", "d", "e"] {
            _ = try site.serve(TestContent.mp3(count: 1000, filler: 0x61), as: "m/\(name).mp3")
        }
        let long = String(repeating: "L", count: 4096)
        let items: [(title: String, enclosure: String)] = [
            ("../../.bashrc", site.url("/m/a.mp3")),
            ("/etc/passwd", site.url("/m/b.mp3")),
            (long, site.url("/m/c.mp3")),
            ("nul\u{0}byte/../..", site.url("/m/d.mp3")),
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
        let downloads = try client.finished(subscribed.queued, timeout: 30)
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

    @Test func hostileServersFailClearlyWithBoundedMemory() throws {
        let faults = try FaultServer()
        let daemon = DaemonProcess()
        // Attempts to spare: each of these fails at once, since another attempt would get the same answer.
        try daemon.writeConfig("max_download_size = 1M\nmax_feed_size = 64K\nmax_attempts = 5\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let baseline = try memory(daemon, "VmRSS")
        let urls = [
            faults.url("/endless-body"), faults.url("/endless-headers"),
            faults.url("/redirect-to?url=file:///etc/passwd"),
        ]
        let directory = daemon.root.file("dl")
        let queued = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: String(
                decoding: try WireCoding.encoder().encode(EnqueueParams(urls: urls, directory: directory)),
                as: UTF8.self
            )
        )
        let outcome = Dictionary(
            uniqueKeysWithValues: try client.finished(queued.downloads.map(\.id), timeout: 30).map { ($0.url, $0) }
        )
        let body = try #require(outcome[urls[0]])
        #expect(body.state == .failed && body.lastError?.code == "too_large", "\(body)")
        #expect(body.lastError?.message.contains("1048576-byte maximum") == true)
        #expect(body.bytesDone <= 1 << 20)
        let headers = try #require(outcome[urls[1]])
        #expect(headers.state == .failed && headers.lastError?.code == "headers_too_large", "\(headers)")
        #expect(headers.lastError?.message.contains("headers without end") == true, "\(headers)")
        let redirect = try #require(outcome[urls[2]])
        #expect(redirect.state == .failed && redirect.lastError?.code == "scheme_not_allowed", "\(redirect)")
        #expect([body, headers, redirect].allSatisfy { $0.attempts == 1 }, "\([body, headers, redirect])")

        for (url, fragment) in [
            (urls[0], "65536-byte maximum"), (urls[1], "headers"), (urls[2], "redirected to file:///etc/passwd"),
        ] {
            let refused = try error(client, "subscribe", #"{"url":"\#(url)"}"#)
            #expect(refused.reason == "feed_unreachable")
            #expect(refused.message.contains(fragment), "\(refused.message)")
        }
        #expect(try memory(daemon, "VmHWM") - baseline < 64 << 20)
        #expect(daemon.stop() == 0)
        #expect(walk(directory).allSatisfy { $0.hasSuffix(".part") })
    }

    /// The default socket directory is the daemon's own: a wider mode left by someone else is narrowed to 0700.
    /// A directory the user chose is only checked: one others may write to is refused, one they may read is kept.
    @Test func socketDirectoryModesAreEnforcedOrRefusedAtStart() throws {
        let daemon = DaemonProcess()
        let directory = daemon.root.file("run/singlecast")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        try daemon.startAndWaitUntilReady()
        var info = stat()
        #expect(stat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(daemon.log.contains("socket directory \(directory) had mode 755; changed to 700"))
        #expect(try LineClient(path: daemon.socketPath).result("ping", as: PingResult.self).pong)
        #expect(daemon.stop() == 0)

        let shared = daemon.root.file("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(shared, 0o777)
        let refused = DaemonProcess(root: daemon.root)
        try refused.writeConfig("socket_path = \(shared)/control.sock\n")
        try refused.start()
        #expect(refused.waitForExit() != 0)
        #expect(refused.log.contains("'\(shared)' is writable by other users (mode 777)"))
        #expect(!FileManager.default.fileExists(atPath: shared + "/control.sock"))

        chmod(shared, 0o755)
        let kept = DaemonProcess(root: daemon.root)
        try kept.startAndWaitUntilReady()
        #expect(stat(shared, &info) == 0 && info.st_mode & 0o777 == 0o755)
        #expect(try LineClient(path: shared + "/control.sock").result("ping", as: PingResult.self).pong)
        #expect(kept.stop() == 0)
    }
}
