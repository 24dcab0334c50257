import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Numbers a stranger writes (a feed's dates and durations, a server's `Retry-After`, a rule's duration), against
/// the real daemon. Each of them used to trap it, and because the same input came back after a restart (the next
/// refresh, the retry, the stored rule), a trap was a crash loop under systemd.
@Suite struct HostileNumberTests {
    private func error(_ client: LineClient, _ method: String, _ params: String?) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) succeeded unexpectedly: \(value)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }

    private static func feed(title: String, pubDate: String, duration: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>\(title)</title>
            <item><title>\(title) one</title><guid isPermaLink="false">\(title)-1</guid>
            <pubDate>\(pubDate)</pubDate><itunes:duration>\(duration)</itunes:duration>
            <enclosure url="http://127.0.0.1:9/\(title).mp3" type="audio/mpeg" length="4096"/></item>
            </channel></rss>
            """.utf8
        )
    }

    /// Polls `podcasts` until `done` holds for every podcast.
    private func podcasts(
        _ client: LineClient,
        timeout: Double = 60,
        until done: ([PodcastInfo]) -> Bool
    ) throws -> [PodcastInfo] {
        let deadline = Date.now.addingTimeInterval(timeout)
        while true {
            let all = try client.result("podcasts", as: PodcastsResult.self).podcasts
            if done(all) { return all }
            guard Date.now < deadline else { throw HarnessError("podcasts did not get there: \(all)") }
            usleep(100_000)
        }
    }

    private func download(
        _ client: LineClient,
        _ id: Int64,
        timeout: Double = 60,
        until done: (DownloadInfo) -> Bool
    ) throws -> DownloadInfo {
        let deadline = Date.now.addingTimeInterval(timeout)
        while true {
            let info = try client.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
            if done(info) { return info }
            guard Date.now < deadline else { throw HarnessError("download \(id) did not get there: \(info)") }
            usleep(50_000)
        }
    }

    private func enqueue(_ client: LineClient, _ url: String, into directory: String) throws -> Int64 {
        let params = EnqueueParams(urls: [url], directory: directory)
        let json = String(decoding: try WireCoding.encoder().encode(params), as: UTF8.self)
        let result = try client.result("enqueue", as: EnqueueResult.self, params: json)
        guard let id = result.downloads.first?.id else { throw HarnessError("nothing enqueued") }
        return id
    }

    /// An `itunes:duration` of 2.6 million `999999999h` (26 MB) and a pubDate of year 300000000 trapped the
    /// daemon on subscribe and on every scheduled refresh after a restart. Now such an episode has no duration or
    /// no date, the daemon stays up, and every podcast still refreshes.
    @Test func aFeedsHostileDateAndDurationAreNoDateAndNoDuration() throws {
        let site = try NginxServer()
        let bomb = String(repeating: "999999999h", count: 2_600_000)
        let durationURL = try site.serve(
            Self.feed(title: "Duration", pubDate: "Mon, 02 Nov 2026 10:00:00 GMT", duration: bomb),
            as: "duration.xml"
        )
        let dateURL = try site.serve(
            Self.feed(title: "Date", pubDate: "Mon, 01 Jan 300000000 00:00:00 GMT", duration: "12:34"),
            as: "date.xml"
        )
        let goodURL = try site.serve(
            Self.feed(title: "Good", pubDate: "Mon, 02 Nov 2026 10:00:00 GMT", duration: "12:34"),
            as: "good.xml"
        )
        let daemon = DaemonProcess()
        try daemon.writeConfig("refresh_interval = 1s\n")
        try daemon.startAndWaitUntilReady()
        var client = try LineClient(path: daemon.socketPath, timeout: 60)
        var episodes: [String: EpisodeInfo] = [:]
        for url in [durationURL, dateURL, goodURL] {
            let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(url)"}"#)
            let listed = try client.result(
                "episodes",
                as: EpisodesResult.self,
                params: #"{"podcast":"\#(podcast.podcast.id)"}"#
            )
            #expect(listed.episodes.count == 1)
            episodes[podcast.podcast.title] = listed.episodes.first
        }
        #expect(episodes["Duration"]?.durationSeconds == nil)
        #expect(episodes["Duration"]?.published != nil)
        #expect(episodes["Date"]?.published == nil)
        #expect(episodes["Date"]?.durationSeconds == 754)
        #expect(episodes["Good"]?.published != nil && episodes["Good"]?.durationSeconds == 754)
        let refreshed = try client.result("refresh", as: RefreshResult.self)
        #expect(refreshed.refreshed.count == 3)
        #expect(daemon.stop() == 0, "\(daemon.log.suffix(2000))")

        // After a restart the scheduled refreshes of both run, and the daemon is still there.
        let restarted = DaemonProcess(root: daemon.root)
        try restarted.startAndWaitUntilReady()
        client = try LineClient(path: restarted.socketPath, timeout: 60)
        let before = try client.result("podcasts", as: PodcastsResult.self).podcasts
        let after = try podcasts(client) { now in
            now.count == 3
                && now.allSatisfy { podcast in
                    podcast.refreshedAt != before.first { $0.id == podcast.id }?.refreshedAt
                }
        }
        #expect(after.allSatisfy { $0.lastError == nil }, "\(after)")
        #expect(restarted.process.isRunning)
        #expect(restarted.stop() == 0, "\(restarted.log.suffix(2000))")
    }

    /// A 503 whose `Retry-After` is an HTTP-date of year 300000000 trapped the queue, and the retry after a restart
    /// trapped it again. Now the header is ignored and the download backs off as without it.
    @Test func aRetryAfterFarBeyondAnyDateIsIgnored() throws {
        let server = try FaultServer()
        let date = "Mon, 01 Jan 300000000 00:00:00 GMT".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_attempts = 3\n")
        try daemon.startAndWaitUntilReady()
        var client = try LineClient(path: daemon.socketPath)
        let id = try enqueue(client, server.url("/status/503?retry_after=\(date)"), into: daemon.root.file("dl"))
        let first = try download(client, id) { $0.attempts >= 1 && $0.state == .queued }
        #expect(first.lastError?.httpStatus == 503)
        #expect(daemon.stop() == 0, "\(daemon.log.suffix(2000))")

        let restarted = DaemonProcess(root: daemon.root)
        try restarted.startAndWaitUntilReady()
        client = try LineClient(path: restarted.socketPath)
        let failed = try download(client, id) { $0.state == .failed }
        #expect(failed.attempts == 3)
        #expect(restarted.stop() == 0, "\(restarted.log.suffix(2000))")
    }

    /// `Retry-After: 0` gave ten attempts in 70 ms: the backoff is the floor (1 s, then 2 s at the least jitter).
    @Test func aRetryAfterOfZeroStillBacksOff() throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.writeConfig("max_attempts = 3\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let started = Date.now
        let id = try enqueue(client, server.url("/status/503?retry_after=0"), into: daemon.root.file("dl"))
        let failed = try download(client, id) { $0.state == .failed }
        #expect(failed.attempts == 3)
        #expect(
            Date.now.timeIntervalSince(started) >= 3,
            "three attempts within \(Date.now.timeIntervalSince(started)) s"
        )
        #expect(daemon.stop() == 0)
    }

    /// `1e300d` trapped the daemon even in a `rules` dry run, and `106751980000d` was stored and overflowed at every
    /// start; in the configuration file they crashed instead of exiting 78 with the file and line.
    @Test func hugeRuleDurationsAreRefusedClearly() throws {
        let site = try NginxServer()
        let url = try site.serve(
            Self.feed(title: "Plain", pubDate: "Mon, 02 Nov 2026 10:00:00 GMT", duration: "12:34"),
            as: "plain.xml"
        )
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let id = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(url)"}"#).podcast.id
        let dryRun = try error(client, "rules", #"{"podcast":"\#(id)","changes":{"max_age":"1e300d"}}"#)
        #expect(dryRun.data?.reason == "invalid_params")
        #expect(
            dryRun.message.contains("max_age must be at most 36500d (100 years); got '1e300d'"),
            "\(dryRun.message)"
        )
        let set = try error(client, "set", #"{"podcast":"\#(id)","rules":{"delete_older_than":"106751980000d"}}"#)
        #expect(set.data?.reason == "invalid_params")
        #expect(
            set.message.contains("delete_older_than must be at most 36500d (100 years); got '106751980000d'"),
            "\(set.message)"
        )
        // The client says the same, and fails.
        let command = try runProgram(
            Binaries.client.path,
            ["set", "\(id)", "--max-age", "1e300d", "--socket", daemon.socketPath]
        )
        #expect(command.status != 0)
        #expect(command.stderr.contains("max_age must be at most 36500d (100 years)"), "\(command.stderr)")
        let stored = try client.result("rules", as: RulesResult.self, params: #"{"podcast":"\#(id)"}"#)
        #expect(stored.rules.isEmpty, "nothing was stored: \(stored.rules)")
        #expect(daemon.stop() == 0)

        let configured = DaemonProcess()
        try configured.writeConfig("log_level = info\ndelete_older_than = 106751980000d\n")
        try configured.start()
        #expect(configured.waitForExit() == 78)
        #expect(
            configured.log.contains(
                "\(configured.configPath):2: delete_older_than must be at most 36500d (100 years); got '106751980000d'"
            ),
            "\(configured.log)"
        )
        let trapping = DaemonProcess()
        try trapping.writeConfig("max_age = 1e300d\n")
        try trapping.start()
        #expect(trapping.waitForExit() == 78)
        #expect(trapping.log.contains("\(trapping.configPath):1: max_age must be at most 36500d"), "\(trapping.log)")
    }
}
