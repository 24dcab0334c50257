import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Big feeds refreshed at once share the feed memory budget: they take turns instead of taking the machine's memory.
@Suite struct FeedMemoryTests {
    /// A feed of `items` items with about 2 KB of notes each: many bytes a parse holds on to, few rows to store.
    private static func feed(_ name: String, items: Int, extra: Int = 0) -> Data {
        let notes = String(repeating: "Notes on this episode, with links and credits. ", count: 40)
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>\(name)</title><link>https://example.com/</link>
            <description>A generated feed.</description>

            """
        for number in stride(from: items + extra, to: 0, by: -1) {
            text += "<item><title>Episode \(number)</title><guid>\(name)-\(number)</guid>"
            text += "<enclosure url=\"https://cdn.example.com/\(name)-\(number).mp3\" type=\"audio/mpeg\"/>"
            text += "<description>\(number): \(notes)</description></item>\n"
        }
        text += "</channel></rss>\n"
        return Data(text.utf8)
    }

    /// A field of /proc/<pid>/status, in bytes (`VmRSS`, `VmHWM`).
    private static func memory(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw HarnessError("no \(field) in /proc status") }
        return kilobytes * 1024
    }

    /// Refreshes `selector` (every podcast when `nil`) and returns the result and the daemon's peak RSS above what it
    /// held when the refresh began (writing 5 to clear_refs resets VmHWM to the current RSS).
    private static func refresh(
        _ client: LineClient,
        _ pid: Int32,
        _ selector: String?
    ) throws -> (RefreshResult, peak: Int) {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        let baseline = try memory(pid, "VmRSS")
        let refreshed = try client.result(
            "refresh",
            as: RefreshResult.self,
            params: selector.map { #"{"podcast":"\#($0)"}"# }
        )
        return (refreshed, try memory(pid, "VmHWM") - baseline)
    }

    /// Four 20 MB feeds refreshed at once within a 128 MiB budget: each document reserves five times its size, so
    /// they take turns (each reserves before it fetches, its size known from the subscription), all four refresh,
    /// and the daemon's peak above its start stays within the budget.
    @Test func fourBigFeedsRefreshedAtOnceTakeTurnsWithinTheBudget() throws {
        let site = try NginxServer()
        let names = ["a", "b", "c", "d"]
        let items = 10_000  // about 20 MB each
        for name in names { try site.serve(Self.feed(name, items: items), as: "\(name).xml") }
        let budget = 128 << 20
        let daemon = DaemonProcess()
        try daemon.writeConfig("feed_memory_budget = 128M\n")
        try daemon.startAndWaitUntilReady()
        let pid = daemon.process.processIdentifier
        let client = try LineClient(path: daemon.socketPath, timeout: 300)
        for name in names {
            let url = site.url("/\(name).xml")
            let subscribed = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(url)"}"#)
            #expect(subscribed.podcast.episodes == items)
        }
        // Each change adds an episode, so a refresh fetches, parses and stores the whole document again.
        var documentBytes = 0
        for name in names {
            let changed = Self.feed(name, items: items, extra: 1)
            documentBytes = max(documentBytes, changed.count)
            try site.serve(changed, as: "\(name).xml")
        }

        let (four, together) = try Self.refresh(client, pid, nil)

        #expect(four.refreshed.count == 4)
        #expect(four.refreshed.allSatisfy { $0.outcome == "updated" && $0.newEpisodes == 1 }, "\(four)")
        #expect(together < budget, "four at once peaked \(together >> 20) MiB above their start")
        print("four \(documentBytes >> 20) MiB feeds at once peaked \(together >> 20) MiB above their start")
        #expect(daemon.stop() == 0)
    }
}
