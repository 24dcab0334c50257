import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Servers that lie about ranges, sizes and validators, against the real daemon: it stays up, `downloads` and `show`
/// answer, every file is whole or absent, and a restart is quiet.
@Suite struct LyingServerTests {
    /// Quick retries, few attempts: a lie is told again at every attempt.
    private static let configuration = "max_attempts = 4\nretry_base_delay = 10ms\nretry_max_delay = 50ms\n"

    private func enqueue(_ client: LineClient, _ url: String, into directory: String) throws -> Int64 {
        let params = EnqueueParams(urls: [url], directory: directory)
        let json = String(decoding: try WireCoding.encoder().encode(params), as: UTF8.self)
        return try client.result("enqueue", as: EnqueueResult.self, params: json).downloads[0].id
    }

    /// Polls `show` (and `downloads`, which builds every row) until the download completed or failed; `check` sees
    /// every state on the way.
    private func settle(
        _ client: LineClient,
        _ id: Int64,
        timeout: Double = 60,
        check: (DownloadInfo) -> Void = { _ in }
    ) throws -> DownloadInfo {
        let deadline = Date.now.addingTimeInterval(timeout)
        while true {
            let info = try client.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
            _ = try client.result("downloads", as: DownloadsResult.self)
            check(info)
            if info.state == .completed || info.state == .failed { return info }
            guard Date.now < deadline else { throw HarnessError("download \(id) stuck: \(info)") }
            usleep(20_000)
        }
    }

    /// Stops the daemon, starts another on the same state and checks that it comes up, answers and stays up.
    private func restartQuietly(_ daemon: DaemonProcess) throws -> DaemonProcess {
        #expect(daemon.stop() == 0, "the daemon exits cleanly; its log:\n\(daemon.log)")
        let next = DaemonProcess(root: daemon.root)
        try next.writeConfig(Self.configuration)
        try next.startAndWaitUntilReady()
        let client = try LineClient(path: next.socketPath)
        for _ in 0..<5 {
            _ = try client.result("downloads", as: DownloadsResult.self)
            usleep(100_000)
        }
        #expect(next.process.isRunning, "the restarted daemon stays up; its log:\n\(next.log)")
        return next
    }

    /// A regular file at `path`, whole, or nothing there at all (a partial file aside).
    private func wholeOrAbsent(_ path: String, _ expected: Data) {
        guard let contents = FileManager.default.contents(atPath: path) else { return }
        #expect(contents == expected, "\(path) holds \(contents.count) bytes that are not the file")
    }

    // MARK: Item 10: lying Content-Range

    @Test func aContentRangeEndingAtInt64MaxCrashesNothing() throws {
        let server = try FaultServer()
        let site = try NginxServer()
        let lie = server.url("/huge-range/5000")
        let feed = try site.serve(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
                <channel><title>Lying artwork</title><itunes:image href="\(lie)"/>
                <item><title>One</title><guid>1</guid></item></channel></rss>
                """.utf8
            ),
            as: "feed.xml"
        )
        var daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let directory = daemon.root.file("episodes")

        // An artwork fetch, a subscription and a download meet the same lie, in that order: each took the daemon
        // down on its own.
        _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#)
        _ = try client.result("refresh", as: RefreshResult.self)
        usleep(500_000)  // the new subscription's artwork is fetched in the background
        #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.first?.artworkPath == nil)
        let refused = try client.call("subscribe", params: #"{"url":"\#(lie)"}"#)
        guard case .error(_, let error) = refused else {
            Issue.record("subscribing to a lying server succeeded: \(refused)")
            return
        }
        #expect(error.message.contains("Content-Range"), "\(error.message)")
        let id = try enqueue(client, lie, into: directory)

        let info = try settle(client, id)
        #expect(info.state == .failed, "\(info)")
        #expect(info.lastError?.code == "range_mismatch", "\(String(describing: info.lastError))")
        #expect(!FileManager.default.fileExists(atPath: info.file))
        #expect(daemon.process.isRunning, "its log:\n\(daemon.log)")

        daemon = try restartQuietly(daemon)
        #expect(daemon.stop() == 0)
    }

    @Test(arguments: ["-9223372036854775808", "-1", "99999999999999999999"])
    func aLyingTotalOn416IsNeverStoredAsTheSize(total: String) throws {
        let server = try FaultServer()
        var daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        // The first answer breaks off at byte 4000; every resume gets the 416 with the lying total.
        let id = try enqueue(client, server.url("/unsatisfiable/10000/4000/\(total)"), into: daemon.root.file("e"))

        var totals: Set<Int64> = []
        let info = try settle(client, id) { info in
            if let total = info.bytesTotal { totals.insert(total) }
        }
        #expect(totals.allSatisfy { $0 == 10000 }, "sizes shown: \(totals)")
        #expect(info.state == .failed, "\(info)")
        #expect(!FileManager.default.fileExists(atPath: info.file))
        #expect(daemon.process.isRunning, "its log:\n\(daemon.log)")

        daemon = try restartQuietly(daemon)
        let client2 = try LineClient(path: daemon.socketPath)
        let again = try client2.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
        #expect(again.bytesTotal == nil || again.bytesTotal == 10000, "\(again)")
        #expect(daemon.stop() == 0)
    }

    // MARK: Item 11: two versions of a file

    /// How version B answers the resume of version A.
    struct Swap: Sendable, CustomTestStringConvertible {
        var mode: String
        var sizeA: Int
        var sizeB: Int64
        var after: Int
        var testDescription: String { "\(mode) \(sizeA)→\(sizeB) after \(after)" }
    }

    /// Version A breaks off; the resume is answered from version B, whatever `If-Range` said. The file must be
    /// version B from byte 0, never A's head with B's tail.
    @Test(arguments: [
        Swap(mode: "etag", sizeA: 20000, sizeB: 20000, after: 8000),  // a 206 with another ETag
        Swap(mode: "lastmod", sizeA: 20000, sizeB: 20000, after: 8000),  // a 206 with another Last-Modified
        Swap(mode: "etag", sizeA: 1000, sizeB: 500, after: 500),  // a 416 "bytes */500" with another ETag
        Swap(mode: "none", sizeA: 1000, sizeB: 500, after: 500),  // a 416 "bytes */500" where 1000 was known
    ])
    func aResumeAnsweredFromAnotherVersionStartsOver(swap: Swap) throws {
        let (mode, sizeA, sizeB, after) = (swap.mode, swap.sizeA, swap.sizeB, swap.after)
        let server = try FaultServer()
        var daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let url = server.url("/swap/\(mode)/\(sizeA)/\(sizeB)/\(after)/\(UUID().uuidString)")
        let id = try enqueue(client, url, into: daemon.root.file("e"))

        let info = try settle(client, id)
        let versionB = TestContent.data(size: sizeB, seed: 1)
        #expect(info.state == .completed, "\(info)")
        #expect(sameBytes(FileManager.default.contents(atPath: info.file), versionB), "the file is version B, whole")
        wholeOrAbsent(info.file, versionB)
        #expect(daemon.process.isRunning)

        daemon = try restartQuietly(daemon)
        wholeOrAbsent(info.file, versionB)
        #expect(daemon.stop() == 0)
    }

    // MARK: Item 12: a bare CR in a validator

    @Test(arguments: ["etag", "last-modified"])
    func aValidatorWithABareCRIsRefusedAndTheDownloadGoesOn(field: String) throws {
        let server = try FaultServer()
        var daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        // The first answer carries the CR and breaks off at 8000; from then on the server behaves.
        let url = server.url("/cr-validator/\(field)/20000/8000/\(UUID().uuidString)")
        let id = try enqueue(client, url, into: daemon.root.file("e"))

        let info = try settle(client, id)
        #expect(info.state == .completed, "\(info)")
        #expect(sameBytes(FileManager.default.contents(atPath: info.file), TestContent.data(size: 20000)))

        daemon = try restartQuietly(daemon)
        #expect(daemon.stop() == 0)
    }

    @Test func aFeedValidatorWithABareCRDoesNotWedgeTheSubscription() throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let url = server.url("/cr-feed/\(UUID().uuidString)")
        let subscribed = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(url)"}"#)

        for _ in 0..<2 {
            let refreshed = try client.result(
                "refresh",
                as: RefreshResult.self,
                params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
            )
            let entry = try #require(refreshed.refreshed.first)
            #expect(entry.error == nil, "\(entry)")
            #expect(entry.podcast.lastError == nil, "\(entry.podcast)")
        }
        #expect(daemon.stop() == 0)
    }

    // MARK: Item 13: Content-Length read as libcurl reads it

    /// Two `Content-Length` fields (libcurl takes the last) or one beside chunked coding (libcurl ignores it): the
    /// body libcurl delivers is the whole file, not a "length mismatch" ten times over.
    @Test(arguments: ["/two-lengths/30000/500", "/chunked-length/30000/5"])
    func aLengthReadAsLibcurlReadsItCompletes(path: String) throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)

        let info = try settle(client, try enqueue(client, server.url(path), into: daemon.root.file("e")))
        #expect(info.state == .completed, "\(info)")
        #expect(info.attempts == 1)
        #expect(sameBytes(FileManager.default.contents(atPath: info.file), TestContent.data(size: 30000)))
        #expect(daemon.stop() == 0)
    }

    // MARK: Item 15: credentials from a redirect

    /// A redirect to `http://user:secret@…` must not leave the password in a stored or shown URL.
    @Test func credentialsARedirectAddsAreNeitherStoredNorShown() throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.writeConfig(Self.configuration)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        func withCredentials(_ path: String) -> String {
            let target = "http://user:s3cret@127.0.0.1:\(server.port)\(path)"
            return target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        }

        let feed = server.url("/moved-to?url=\(withCredentials("/gzip-feed"))")
        let subscribed = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feed)"}"#)
        #expect(!subscribed.podcast.feedURL.contains("s3cret"), "\(subscribed.podcast.feedURL)")
        let exported = try client.result("export", as: ExportResult.self)
        #expect(!exported.opml.contains("s3cret"), "\(exported.opml)")

        let id = try enqueue(
            client,
            server.url("/redirect-to?url=\(withCredentials("/file/1000"))"),
            into: daemon.root.file("e")
        )
        let info = try settle(client, id)
        #expect(info.state == .completed, "\(info)")
        #expect(info.finalURL?.contains("s3cret") == false, "\(String(describing: info.finalURL))")
        #expect(daemon.stop() == 0)
    }
}
