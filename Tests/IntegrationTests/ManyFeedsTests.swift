import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hundreds of feeds on one host: a refresh of them all keeps to the per-host limit and fails none.
@Suite struct ManyFeedsTests {
    /// Established TCP connections to `port` on loopback, from /proc/net/tcp (both directions are listed; the
    /// server's side has `port` as its local port).
    private static func connections(to port: Int) -> Int {
        guard let table = kernelTable("/proc/net/tcp") else { return 0 }
        let local = String(format: ":%04X", port)
        return table.split(separator: "\n").dropFirst().count { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(local) && fields[3] == "01"
        }
    }

    @Test func aRefreshOfThreeHundredFeedsOnOneHostFailsNoneAndKeepsToTheHostLimit() throws {
        let site = try NginxServer()
        var outlines: [String] = []
        for number in 0..<300 {
            let feed = try site.serve(
                Data(
                    """
                    <rss version="2.0"><channel><title>Feed \(number)</title>
                    <item><title>E</title><guid>\(number)-1</guid></item></channel></rss>
                    """.utf8
                ),
                as: "feed-\(number).xml"
            )
            outlines.append(#"<outline type="rss" text="Feed \#(number)" xmlUrl="\#(feed)"/>"#)
        }
        let opml = #"<?xml version="1.0"?><opml version="2.0"><body>\#(outlines.joined())</body></opml>"#
        let daemon = DaemonProcess()
        try daemon.writeConfig("refresh_per_host = 4\nrefresh_concurrent = 16\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let opmlJSON = String(decoding: try JSONEncoder().encode(opml), as: UTF8.self)
        let imported = try client.result("import", as: ImportResult.self, params: #"{"opml":\#(opmlJSON)}"#)
        #expect(imported.feeds.count == 300)
        #expect(imported.feeds.allSatisfy { $0.outcome == "subscribed" })

        // Count nginx's connections while the refresh runs.
        let most = Mutex<Int>(0)
        let done = Mutex<Bool>(false)
        let sampler = Thread {
            while !done.withLock({ $0 }) {
                let now = Self.connections(to: site.port)
                most.withLock { $0 = max($0, now) }
                usleep(5_000)
            }
        }
        sampler.start()
        let refreshed = try client.result("refresh", as: RefreshResult.self)
        done.withLock { $0 = true }
        #expect(refreshed.refreshed.count == 300)
        let failed = refreshed.refreshed.filter { $0.outcome == "failed" }
        #expect(failed.isEmpty, "\(failed.count) failed: \(failed.prefix(3).map { $0.error ?? "" })")
        #expect(most.withLock { $0 } > 0, "the sampler saw no connection at all, so it measured nothing")
        // Four fetches at a time on one host (FetchSlotsTests pin the count itself). libcurl keeps the connections
        // it opened in its cache (CURLMOPT_MAXCONNECTS is not set), so sockets to the host outnumber fetches: seen up
        // to 19 here once the whole socket table was read. What this bounds is that they stay far below the 300 feeds.
        #expect(most.withLock { $0 } <= 32, "\(most.withLock { $0 }) connections to one host at once")
        #expect(daemon.stop() == 0)
    }
}
