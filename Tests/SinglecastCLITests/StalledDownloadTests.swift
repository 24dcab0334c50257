import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// A download that stops receiving bytes: the daemon's speed decays towards 0 and its ETA towards infinity.
/// No number the daemon sends may crash the client, and such a download reads as stalled.
@Suite struct StalledDownloadTests {
    typealias Fixtures = DownloadFixtures

    /// What the daemon reported ~30 s into a stall.
    static var decayed: DownloadInfo {
        var download = Fixtures.active
        download.speed = 1.39e-15
        download.etaSeconds = 3.75e21
        return download
    }

    static var stalledThirtySeconds: DownloadInfo {
        var download = decayed
        download.stalledSince = "2026-11-29T11:59:30Z"
        return download
    }

    @Test(
        arguments: [
            .infinity, -.infinity, .nan, 3.75e21, 1e300, -1e300, 9.3e18, Double(Int64.max), -5,
            .greatestFiniteMagnitude, .leastNonzeroMagnitude,
        ] as [Double]
    )
    func noDurationOrRateCrashes(_ value: Double) {
        let duration = Formatting.duration(seconds: value)
        #expect(!duration.isEmpty)
        #expect(!Formatting.rate(value).isEmpty)
        var download = Fixtures.active
        download.speed = value
        download.etaSeconds = value
        let text =
            DownloadsCommand.render([download], now: Fixtures.now) + ShowCommand.render(download, now: Fixtures.now)
            + ProgressRenderer.liveLine(download, now: Fixtures.now)
        #expect(!text.isEmpty)
    }

    @Test func hugeDurationsAreCappedNotWrapped() {
        // 3.75e21 seconds is far beyond Int64; it must still read as a long time, never as a negative one.
        let text = Formatting.duration(seconds: 3.75e21)
        #expect(text.hasSuffix("h"))
        #expect(!text.contains("-"))
    }

    @Test func speedsBelowOneBytePerSecondReadAsZero() {
        #expect(Formatting.rate(0.4) == "0 B/s")
        #expect(Formatting.rate(0.99) == "0 B/s")
        #expect(Formatting.rate(1.39e-15) == "0 B/s")
        #expect(Formatting.rate(1) == "1 B/s")
    }

    @Test func aDecayedSpeedWithoutStalledSinceReadsAsStalledWithoutETA() {
        let table = DownloadsCommand.render([Self.decayed], now: Fixtures.now)
        #expect(
            table == """
                ID  STATE   PROGRESS  SIZE               SPEED    ETA  NAME
                12  active  44%       12.4 MB / 27.6 MB  stalled  -    episode-12.mp3

                """
        )
        let show = ShowCommand.render(Self.decayed, now: Fixtures.now)
        #expect(show.contains("Speed        stalled\n"))
        #expect(!show.contains("ETA"))
        #expect(
            ProgressRenderer.liveLine(Self.decayed, now: Fixtures.now)
                == "12  [########------------] 44%  12.4 MB / 27.6 MB  stalled  episode-12.mp3"
        )
    }

    @Test func stalledSinceShowsHowLongInPlaceOfSpeedAndETA() {
        let table = DownloadsCommand.render([Self.stalledThirtySeconds], now: Fixtures.now)
        #expect(
            table == """
                ID  STATE   PROGRESS  SIZE               SPEED        ETA  NAME
                12  active  44%       12.4 MB / 27.6 MB  stalled 30s  -    episode-12.mp3

                """
        )
        let show = ShowCommand.render(Self.stalledThirtySeconds, now: Fixtures.now)
        #expect(show.contains("Speed        stalled 30s\n"))
        #expect(!show.contains("ETA"))
        #expect(
            ProgressRenderer.liveLine(Self.stalledThirtySeconds, now: Fixtures.now)
                == "12  [########------------] 44%  12.4 MB / 27.6 MB  stalled 30s  episode-12.mp3"
        )
        // The daemon may report a stall even while its speed average has not decayed yet.
        var stalledAtSpeed = Fixtures.active
        stalledAtSpeed.stalledSince = "2026-11-29T11:58:55Z"
        #expect(DownloadText.speed(stalledAtSpeed, now: Fixtures.now) == "stalled 1m 5s")
        #expect(DownloadText.eta(stalledAtSpeed, now: Fixtures.now) == nil)
    }

    @Test func stalledSinceIsAnOptionalSnakeCaseField() throws {
        let line = String(decoding: try WireCoding.encoder().encode(Self.stalledThirtySeconds), as: UTF8.self)
        #expect(line.contains(#""stalled_since":"2026-11-29T11:59:30Z""#))
        let decoded = try JSONDecoder().decode(DownloadInfo.self, from: Data(line.utf8))
        #expect(decoded == Self.stalledThirtySeconds)
        let withoutField = try WireCoding.encoder().encode(Fixtures.active)
        #expect(!String(decoding: withoutField, as: UTF8.self).contains("stalled_since"))
        #expect(try JSONDecoder().decode(DownloadInfo.self, from: withoutField).stalledSince == nil)
    }

    @Test func downloadsAndShowSurviveTheDecayedNumbersFromTheDaemon() async throws {
        for arguments in [["downloads"], ["show", "12"]] {
            let run = try await withTemporaryDirectory { directory in
                let result: any Encodable =
                    arguments[0] == "show" ? Self.decayed : DownloadsResult(downloads: [Self.decayed])
                let server = try TestServer(directory: directory, behavior: .reply([Fixtures.resultLine(result)]))
                return await runCLI(arguments + ["--socket", server.path])
            }
            #expect(run.status == 0)
            #expect(run.stderr == "")
            #expect(run.stdout.contains("stalled"))
        }
    }

    // MARK: watch

    @Test func terminalLineShowsStalledWhenProgressEventsStop() {
        var renderer = ProgressRenderer(mode: .terminal, columns: 200)
        let t0 = Fixtures.now
        let live = ProgressRendererTests.line12
        #expect(renderer.event("download.progress", Fixtures.active, now: t0) == "\u{1B}[2K" + live + "\n")
        // Quiet for less than the limit: nothing changes, so nothing is drawn.
        #expect(renderer.tick(now: t0 + 4) == "")
        let stalled = "12  [########------------] 44%  12.4 MB / 27.6 MB  stalled  episode-12.mp3"
        #expect(renderer.tick(now: t0 + 5.5) == "\u{1B}[1A\u{1B}[2K" + stalled + "\n")
        #expect(renderer.tick(now: t0 + 6.5) == "")
        // A new progress event brings the rate back.
        #expect(
            renderer.event("download.progress", Fixtures.active, now: t0 + 7) == "\u{1B}[1A\u{1B}[2K" + live + "\n"
        )
    }

    @Test func terminalStalledSinceCountsUpWhileQuiet() {
        var renderer = ProgressRenderer(mode: .terminal, columns: 200)
        let t0 = Fixtures.now
        _ = renderer.event("download.progress", Self.stalledThirtySeconds, now: t0)
        #expect(renderer.tick(now: t0 + 0.2) == "")
        #expect(
            renderer.tick(now: t0 + 1)
                == "\u{1B}[1A\u{1B}[2K12  [########------------] 44%  12.4 MB / 27.6 MB  stalled 31s  episode-12.mp3\n"
        )
    }

    @Test func plainModeReportsAStallOnce() {
        var renderer = ProgressRenderer(mode: .plain)
        let t0 = Fixtures.now
        #expect(renderer.event("download.progress", Fixtures.active, now: t0) == "12  progress 44%  1.3 MB/s\n")
        #expect(renderer.tick(now: t0 + 4) == "")
        #expect(renderer.tick(now: t0 + 6) == "12  stalled episode-12.mp3\n")
        #expect(renderer.tick(now: t0 + 60) == "")
        var completed = Fixtures.active
        completed.state = .completed
        _ = renderer.event("download.completed", completed, now: t0 + 61)
        #expect(renderer.tick(now: t0 + 100) == "")
    }

    @Test func watchPrintsAStallWhenProgressEventsStop() async throws {
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(
                directory: directory,
                behavior: .pausing(
                    before: [
                        #"{"jsonrpc":"2.0","id":1,"result":{"topics":["downloads"]}}"#,
                        Fixtures.eventLine(.progress, Fixtures.active),
                    ],
                    seconds: ProgressRenderer.quietLimit + 2,
                    after: [#"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#]
                )
            )
            return await runCLI(["watch", "--socket", server.path])
        }
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                12  progress 44%  1.3 MB/s
                12  stalled episode-12.mp3
                \(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping

                """
        )
    }
}
