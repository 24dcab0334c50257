import Foundation
import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport
import Testing

/// What the client shows of the download gate: downloads it paused, `status`, `enqueue --now`.
@Suite struct DownloadGateOutputTests {
    /// UTC+01:00, so that the window opening at 00:00 UTC reads 01:00.
    let zone = LocalTimeZone.fixed(secondsFromUTC: 3600)

    private func held(_ reason: String, resumesAt: String? = nil) -> DownloadInfo {
        var download = DownloadFixtures.download(4, .paused, file: "ep4.mp3", done: 1000, total: 4000)
        download.pauseReason = reason
        download.resumesAt = resumesAt
        return download
    }

    @Test func aDownloadTheGatePausedSaysWhatItWaitsFor() {
        let now = DownloadFixtures.now
        #expect(
            DownloadText.state(held("outside_window", resumesAt: "2026-11-30T00:00:00Z"), now: now, zone: zone)
                == "paused (waiting for window 01:00)"
        )
        #expect(DownloadText.state(held("outside_window"), now: now, zone: zone) == "paused (outside window)")
        #expect(DownloadText.state(held("metered"), now: now, zone: zone) == "paused (metered network)")
        #expect(DownloadText.state(held("disk_full"), now: now, zone: zone) == "paused (disk full)")
    }

    @Test func statusShowsTheGate() {
        let open = DownloadGateInfo(
            closedBecause: nil,
            windows: ["01:00-06:00"],
            nextWindowChange: "2026-11-30T05:00:00Z",
            metered: false
        )
        #expect(
            StatusCommand.gateSummary(open, zone: zone)
                == "open until 06:00 (windows 01:00-06:00); --now downloads always run"
        )
        let outside = DownloadGateInfo(
            closedBecause: "outside_window",
            windows: ["01:00-06:00", "22:00-23:00"],
            nextWindowChange: "2026-11-30T00:00:00Z",
            metered: true
        )
        #expect(
            StatusCommand.gateSummary(outside, zone: zone)
                == "closed until 01:00: outside the download windows (01:00-06:00, 22:00-23:00); "
                + "the network is metered; --now downloads always run"
        )
        let metered = DownloadGateInfo(closedBecause: "metered", windows: [], nextWindowChange: nil, metered: true)
        #expect(StatusCommand.gateSummary(metered) == "closed: the network is metered; --now downloads always run")
        let always = DownloadGateInfo(closedBecause: nil, windows: [], nextWindowChange: nil, metered: nil)
        #expect(StatusCommand.gateSummary(always) == "open; --now downloads always run")
    }

    @Test func enqueueSaysWhenTheGateHoldsANewDownload() {
        let result = EnqueueResult(downloads: [
            .init(
                id: 1,
                url: "https://a/1.mp3",
                existing: false,
                file: "/p/1.mp3",
                state: .paused,
                pauseReason: "outside_window"
            ),
            .init(
                id: 2,
                url: "https://a/2.mp3",
                existing: true,
                file: "/p/2.mp3",
                state: .paused,
                pauseReason: "metered"
            ),
            .init(id: 3, url: "https://a/3.mp3", existing: false, file: "/p/3.mp3", state: .queued),
        ])
        #expect(
            EnqueueCommand.render(result) == """
                Queued 1  https://a/1.mp3  → /p/1.mp3  (waiting for the download window)
                Already queued 2  https://a/2.mp3  waiting: the network is metered
                Queued 3  https://a/3.mp3  → /p/3.mp3

                """
        )
    }

    private func command<T: CLICommand>(_ arguments: [String], as type: T.Type) throws -> T? {
        guard case .run(let path, let parsed) = CommandParser.parse(arguments, root: CLI.root) else { return nil }
        return try path[path.count - 1].init(parsed) as? T
    }

    @Test func nowIsSentOnlyWhenAsked() throws {
        #expect(try command(["enqueue", "https://a/1.mp3", "--now"], as: EnqueueCommand.self)?.now == true)
        #expect(try command(["enqueue", "1"], as: EnqueueCommand.self)?.now == false)
        let latest = try command(["download", "3", "--latest", "1", "--now"], as: DownloadLatestCommand.self)
        #expect(latest?.params.now == true)
        #expect(try command(["download", "3", "--latest", "1"], as: DownloadLatestCommand.self)?.params.now == nil)
    }

    @Test func resumeSaysWhenTheGateKeepsDownloadsPaused() throws {
        #expect(try command(["resume", "4", "--now"], as: ResumeCommand.self)?.selection.now == true)
        #expect(try command(["resume", "4"], as: ResumeCommand.self)?.selection.now == nil)
        let result = ChangedResult(changed: [3, 4], held: [4], gate: "outside_window")
        #expect(
            ResumeCommand.render(result) == """
                Resumed 3.
                Not started: 4 wait for the download gate: outside the download windows (download_window).
                Start them anyway with 'singlecastctl resume --now 4', or change the setting in the configuration.

                """
        )
        #expect(
            ResumeCommand.render(ChangedResult(changed: [4], held: [4], gate: "metered")).contains(
                "the network is metered (metered = pause)"
            )
        )
        // Paused for another reason than the gate: not the gate's doing.
        #expect(ResumeCommand.render(ChangedResult(changed: [3, 4])) == "Resumed 3, 4.\n")
    }
}
