import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real singlecastctl binary against the real singlecastd.
@Suite struct ClientAgainstDaemonTests {
    private func ctl(
        _ daemon: DaemonProcess,
        _ arguments: [String]
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        // The client finds the daemon through the same XDG_RUNTIME_DIR, with no --socket.
        try runProgram(Binaries.client.path, arguments, environment: daemon.environment)
    }

    @Test func statusPingVersionAndJSON() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()

        let human = try ctl(daemon, ["status"])
        #expect(human.status == 0)
        #expect(human.stdout.contains("singlecastd \(SinglecastVersion.current) (protocol \(ProtocolVersion.current))"))
        #expect(human.stdout.contains(daemon.socketPath))
        #expect(human.stdout.contains("not present, embedded defaults"))

        let json = try ctl(daemon, ["status", "--json"])
        #expect(json.status == 0)
        let status = try JSONDecoder().decode(StatusResult.self, from: Data(json.stdout.utf8))
        #expect(status.pid == daemon.process.processIdentifier)

        let ping = try ctl(daemon, ["ping"])
        #expect(ping.status == 0)
        #expect(ping.stdout.hasPrefix("pong ("))

        let version = try ctl(daemon, ["--json", "version"])
        #expect(version.status == 0)
        #expect(version.stdout.contains(#""libcurl":"#))
        #expect(daemon.stop() == 0)
    }

    @Test func notRunningIsOneClearLineAndExit69() throws {
        let daemon = DaemonProcess()
        let result = try ctl(daemon, ["status"])
        #expect(result.status == 69)
        #expect(
            result.stderr
                == "Error: singlecastd is not running (no socket at \(daemon.socketPath)). Start it with 'systemctl --user start singlecastd' or run 'singlecastd'.\n"
        )
    }

    @Test func watchPrintsEventsUntilTheDaemonStops() throws {
        let watched = try watchThroughReloadAndStop(["watch", "--json"])
        #expect(watched.status == 0, "stderr: \(watched.stderr)")
        #expect(watched.lines.count == 2)
        #expect(watched.lines.first?.contains(#""method":"daemon.reloaded""#) == true)
        #expect(watched.lines.last?.contains(#""method":"daemon.stopping""#) == true)
    }

    /// A watcher of one topic still hears why its stream ends, and nothing else of the daemon's topic.
    @Test func watchOfOneTopicEndsWithDaemonStopping() throws {
        let watched = try watchThroughReloadAndStop(["watch", "--topic", "downloads", "--json"])
        #expect(watched.status == 0, "stderr: \(watched.stderr)")
        #expect(watched.stderr.isEmpty)
        #expect(watched.lines.count == 1)
        #expect(watched.lines.first?.contains(#""method":"daemon.stopping""#) == true)
    }

    /// Runs `singlecastctl arguments` against a daemon that reloads its configuration (`daemon.reloaded`) and then
    /// stops; returns what the client printed and its exit status.
    private func watchThroughReloadAndStop(
        _ arguments: [String]
    ) throws -> (lines: [Substring], stderr: String, status: Int32) {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let watch = Process()
        watch.executableURL = Binaries.client
        watch.arguments = arguments
        watch.environment = daemon.environment
        let output = Pipe()
        let errors = Pipe()
        watch.standardOutput = output
        watch.standardError = errors
        try watch.run()
        // Wait until the daemon counts the watcher, so the events below cannot race its subscription.
        let client = try LineClient(path: daemon.socketPath)
        let deadline = Date.now.addingTimeInterval(20)
        while try client.result("status", as: StatusResult.self).connections.watchers < 1 && Date.now < deadline {
            usleep(20_000)
        }
        try daemon.writeConfig("log_level = debug\n")
        daemon.signal(SIGHUP)
        _ = daemon.notify.receive(until: "READY=1")
        daemon.signal(SIGTERM)
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n")
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watch.waitUntilExit()
        #expect(daemon.waitForExit() == 0)
        return (lines, stderr, watch.terminationStatus)
    }

    /// The client reads the local zone through the C library, so `TZ` decides the day an episode shows: 23:30 UTC
    /// is already the next day in Kolkata (UTC+5:30).
    @Test func episodeDatesFollowTZ() throws {
        let site = try NginxServer()
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Zones</title><link>https://example.com/</link>
            <item><title>Late show</title><guid>late</guid><pubDate>Sat, 28 Nov 2026 23:30:00 GMT</pubDate>
            <enclosure url="\(site.url("/late.mp3"))" type="audio/mpeg" length="4096"/></item>
            </channel></rss>
            """
        let feedURL = try site.serve(Data(feed.utf8), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feedURL)"}"#)
        for (zone, day) in [("Asia/Kolkata", "2026-11-29"), ("UTC", "2026-11-28")] {
            var environment = daemon.environment
            environment["TZ"] = zone
            let run = try runProgram(
                Binaries.client.path,
                ["episodes", String(subscribed.podcast.id)],
                environment: environment
            )
            #expect(run.status == 0)
            #expect(run.stdout.contains("  \(day)  "), "TZ=\(zone): \(run.stdout)")
        }
        #expect(daemon.stop() == 0)
    }
}
