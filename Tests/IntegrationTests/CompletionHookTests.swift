import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `on_complete` programs: a few at a time however many downloads complete, and at most once each, also when the
/// daemon dies between a completion and its program.
@Suite struct CompletionHookTests {
    private func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func aBurstOfCompletionsRunsItsHooksAFewAtATime() throws {
        let site = try NginxServer()
        let urls = try (0..<12).map {
            try site.serve(TestContent.mp3(count: 1000, filler: UInt8($0)), as: "h\($0).mp3")
        }
        let daemon = DaemonProcess()
        let running = daemon.root.file("running")
        let log = daemon.root.file("hooks.log")
        try FileManager.default.createDirectory(atPath: running, withIntermediateDirectories: true)
        // Each run marks itself running, writes how many are running, lingers, then unmarks itself.
        let hook = daemon.root.file("hook.sh")
        try """
        #!/bin/sh
        touch \(running)/$$
        ls \(running) | wc -l >> \(log)
        sleep 0.3
        rm -f \(running)/$$
        """.write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        try daemon.writeConfig("on_complete = \(hook)\nmax_concurrent = 8\nmax_per_host = 8\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let list = urls.map { "\"\($0)\"" }.joined(separator: ",")
        _ = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":[\#(list)],"directory":"\#(daemon.root.file("dl"))"}"#
        )
        #expect(try eventually(60) { lines(log).count == 12 }, "hooks ran \(lines(log).count) times, not 12")
        let most = lines(log).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.max() ?? 0
        #expect(most <= 2, "\(most) hooks ran at once")
        #expect(daemon.stop() == 0)
    }

    /// A hook that files or tags an episode gets what it needs of it: the podcast's and the episode's title, ids,
    /// guid and date.
    @Test func aHookOfAnEpisodesDownloadKnowsTheEpisode() throws {
        let site = try NginxServer()
        let media = try site.serve(TestContent.mp3(count: 1000, filler: 7), as: "ep.mp3")
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Hook Radio: ü</title><link>https://example.com/</link>
            <description>d</description>
            <item><title>Low tide &amp; more</title><guid isPermaLink="false">guid-7</guid>
            <pubDate>21 Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(media)" type="audio/mpeg" length="1000"/></item>
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        let log = daemon.root.file("hook.log")
        let hook = daemon.root.file("hook.sh")
        try """
        #!/bin/sh
        printf '%s\\n' "$SINGLECAST_PODCAST" "$SINGLECAST_PODCAST_ID" "$SINGLECAST_EPISODE" "$SINGLECAST_EPISODE_ID" \\
            "$SINGLECAST_EPISODE_GUID" "$SINGLECAST_EPISODE_DATE" > \(log).tmp && mv \(log).tmp \(log)
        """.write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        try daemon.writeConfig("on_complete = \(hook)\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:1"}"#
        )
        #expect(try client.finished(subscribed.queued).allSatisfy { $0.state == .completed })
        #expect(eventually(20) { lines(log).count == 6 }, "\(daemon.log)")
        let episode = try client.result(
            "episodes",
            as: EpisodesResult.self,
            params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
        ).episodes[0]
        #expect(
            lines(log) == [
                "Hook Radio: ü", "\(subscribed.podcast.id)", "Low tide & more", "\(episode.id)", "guid-7",
                "2026-11-21T10:00:00Z",
            ]
        )
        #expect(daemon.stop() == 0)
    }

    @Test func aHookAStopInterruptedRunsOnceAfterTheRestart() throws {
        let site = try NginxServer()
        let url = try site.serve(TestContent.mp3(count: 1000, filler: 9), as: "once.mp3")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let id = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(url)"],"directory":"\#(daemon.root.file("dl"))"}"#
        ).downloads[0].id
        #expect(
            try eventually(60) {
                try client.result("show", as: DownloadInfo.self, params: #"{"id":\#(id)}"#).state == .completed
            }
        )
        #expect(daemon.stop() == 0)
        // What a kill -9 between the completion's commit and the program's start leaves: the hook still pending.
        let database = daemon.stateDirectory + "/singlecast.sqlite3"
        let seeded = try spawnAndWait(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('INSERT INTO pending_hooks VALUES (?)',"
                    + " (int(sys.argv[2]),)); c.commit()",
                database, String(id),
            ],
            output: daemon.root.file("seed.log")
        )
        #expect(seeded == 0, "\((try? String(contentsOfFile: daemon.root.file("seed.log"), encoding: .utf8)) ?? "")")

        let log = daemon.root.file("hooks.log")
        let hook = daemon.root.file("hook.sh")
        try "#!/bin/sh\nprintf '%s %s\\n' \"$SINGLECAST_ID\" \"$1\" >> \(log)\n".write(
            toFile: hook,
            atomically: true,
            encoding: .utf8
        )
        chmod(hook, 0o755)
        try daemon.writeConfig("on_complete = \(hook)\n")
        for _ in 0..<2 {
            let again = DaemonProcess(root: daemon.root)
            try again.startAndWaitUntilReady()
            _ = eventually(5) { !lines(log).isEmpty }
            usleep(300_000)
            #expect(again.stop() == 0)
        }
        #expect(lines(log) == ["\(id) \(daemon.root.file("dl/once.mp3"))"], "the hook ran \(lines(log).count) times")
    }

    /// The daemon ignores SIGTERM, SIGINT, SIGHUP (handled through Dispatch) and SIGPIPE; a hook must start with every
    /// signal at its default and none blocked, or `systemctl stop` waits out its timeout and a pipeline in a hook
    /// never ends on SIGPIPE.
    @Test func aHookStartsWithDefaultSignalDispositions() throws {
        let site = try NginxServer()
        let url = try site.serve(TestContent.mp3(count: 1000, filler: 3), as: "signals.mp3")
        let daemon = DaemonProcess()
        let log = daemon.root.file("signals.log")
        let hook = daemon.root.file("hook.sh")
        // grep inherits the dispositions the shell got, and reads its own.
        try "#!/bin/sh\ngrep -E '^Sig(Ign|Blk):' /proc/self/status > \(log).tmp && mv \(log).tmp \(log)\n".write(
            toFile: hook,
            atomically: true,
            encoding: .utf8
        )
        chmod(hook, 0o755)
        try daemon.writeConfig("on_complete = \(hook)\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        _ = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(url)"],"directory":"\#(daemon.root.file("dl"))"}"#
        )
        #expect(eventually(60) { !lines(log).isEmpty }, "the hook did not run")
        // Signals 1 to 31; glibc's posix_spawn keeps its two internal real-time signals (32, 33) ignored in every
        // child it starts, whatever is asked.
        let masks = lines(log).map { line in
            UInt64(line.split(separator: "\t").last ?? "", radix: 16).map { $0 & 0x7fff_ffff }
        }
        #expect(lines(log).map { $0.prefix(7) } == ["SigBlk:", "SigIgn:"])
        #expect(masks == [0, 0], "\(lines(log))")
        #expect(daemon.stop() == 0)
    }
}
