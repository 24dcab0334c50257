import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `watch`'s renderer fed with scripted events and times.
@Suite struct ProgressRendererTests {
    typealias Fixtures = DownloadFixtures

    static let t0 = Fixtures.now
    static let up1 = "\u{1B}[1A"
    static let up2 = "\u{1B}[2A"
    static let clearLine = "\u{1B}[2K"
    static let clearBelow = "\u{1B}[J"

    static let line12 = "12  [########------------] 44%  12.4 MB / 27.6 MB  1.3 MB/s  ETA 3m 12s  episode-12.mp3"
    static let line12Later = "12  [###################-] 97%  27.0 MB / 27.6 MB  1.3 MB/s  ETA 2s  episode-12.mp3"
    static let line13 = "13  5.0 MB  524.3 kB/s  live-stream.mp3"

    static var active12Later: DownloadInfo {
        var download = Fixtures.active
        download.bytesDone = 27_000_000
        download.etaSeconds = 2
        return download
    }

    @Test func terminalRedrawsTheLiveAreaInPlace() {
        var renderer = ProgressRenderer(mode: .terminal, columns: 200)
        var completed = Fixtures.active
        completed.state = .completed
        completed.bytesDone = 27_600_000
        var failed = Fixtures.activeUnknownSize
        failed.state = .failed
        failed.lastError = DownloadErrorInfo(code: "network", message: "Connection reset by peer")
        let steps: [(String, String)] = [
            (
                renderer.event("download.added", Fixtures.queued, now: Self.t0),
                Self.clearLine + "8  added episode-8.mp3  https://feeds.example.com/show/8.mp3\n"
            ),
            // Starting shows a live line and no line above it.
            (renderer.event("download.started", Fixtures.active, now: Self.t0), Self.clearLine + Self.line12 + "\n"),
            (
                renderer.event("download.progress", Fixtures.activeUnknownSize, now: Self.t0 + 0.25),
                Self.up1 + Self.clearLine + Self.line12 + "\n" + Self.clearLine + Self.line13 + "\n"
            ),
            (
                renderer.event("download.progress", Self.active12Later, now: Self.t0 + 0.5),
                Self.up2 + Self.clearLine + Self.line12Later + "\n" + Self.clearLine + Self.line13 + "\n"
            ),
            // Other lines go above the live area, which is drawn again below them.
            (
                renderer.message("2026-11-29T12:00:01Z daemon.reloaded  ok\n"),
                Self.up2 + Self.clearLine + "2026-11-29T12:00:01Z daemon.reloaded  ok\n" + Self.clearLine
                    + Self.line12Later + "\n" + Self.clearLine + Self.line13 + "\n"
            ),
            (
                renderer.event("download.completed", completed, now: Self.t0 + 1),
                Self.up2 + Self.clearLine + "12  completed /home/me/Podcasts/episode-12.mp3  27.6 MB\n"
                    + Self.clearLine + Self.line13 + "\n"
            ),
            (
                renderer.event("download.failed", failed, now: Self.t0 + 2),
                Self.up1 + Self.clearLine + "13  failed live-stream.mp3  Connection reset by peer (network)\n"
            ),
        ]
        for (index, step) in steps.enumerated() {
            #expect(step.0 == step.1, "step \(index)")
        }
        #expect(renderer.live.isEmpty)
    }

    @Test func terminalClearsWhatIsLeftWhenTheAreaShrinks() {
        var renderer = ProgressRenderer(mode: .terminal)
        _ = renderer.event("download.progress", Fixtures.active, now: Self.t0)
        _ = renderer.event("download.progress", Fixtures.activeUnknownSize, now: Self.t0)
        var paused = Fixtures.active
        paused.state = .paused
        // A progress event that finds the download no longer active draws nothing above and shrinks the area.
        #expect(
            renderer.event("download.progress", paused, now: Self.t0 + 1)
                == Self.up2 + Self.clearLine + Self.line13 + "\n" + Self.clearBelow
        )
        #expect(renderer.live.map(\.id) == [13])
    }

    @Test func terminalCutsLiveLinesToTheWidth() {
        var renderer = ProgressRenderer(mode: .terminal, columns: 30)
        #expect(
            renderer.event("download.started", Fixtures.active, now: Self.t0)
                == Self.clearLine + String(Self.line12.prefix(29)) + "\n"
        )
        // Lines above the area may wrap: the redraw does not count them.
        renderer.columns = 10
        #expect(
            renderer.message("a long daemon line\n") == Self.up1 + Self.clearLine + "a long daemon line\n"
                + Self.clearLine + "12  [####\n"
        )
    }

    @Test func plainPrintsEveryEventAndProgressEveryFiveSeconds() {
        var renderer = ProgressRenderer(mode: .plain)
        var at72 = Fixtures.active
        at72.bytesDone = 20_000_000
        var completed = Fixtures.active
        completed.state = .completed
        var resumed = Fixtures.paused
        resumed.state = .queued
        var removed = Fixtures.paused
        removed.state = .queued
        let steps: [(String, Date, DownloadInfo, String)] = [
            (
                "download.added", Self.t0, Fixtures.queued,
                "8  added episode-8.mp3  https://feeds.example.com/show/8.mp3\n"
            ),
            ("download.started", Self.t0, Fixtures.active, "12  started episode-12.mp3  27.6 MB\n"),
            ("download.progress", Self.t0 + 0.25, Fixtures.active, "12  progress 44%  1.3 MB/s\n"),
            ("download.progress", Self.t0 + 1, Fixtures.active, ""),
            ("download.progress", Self.t0 + 5.2, at72, ""),
            ("download.progress", Self.t0 + 5.25, at72, "12  progress 72%  1.3 MB/s\n"),
            ("download.progress", Self.t0 + 5.3, Fixtures.activeUnknownSize, "13  progress 5.0 MB  524.3 kB/s\n"),
            ("download.paused", Self.t0 + 6, Fixtures.diskFull, "9  paused episode-9.mp3 (disk full)\n"),
            ("download.resumed", Self.t0 + 6, resumed, "10  resumed episode-10.mp3\n"),
            (
                "download.retrying", Self.t0 + 7, Fixtures.retrying,
                "7  retrying episode-7.mp3  attempt 2 failed: Connection reset by peer (network); next try in 35s\n"
            ),
            ("download.completed", Self.t0 + 8, completed, "12  completed /home/me/Podcasts/episode-12.mp3  27.6 MB\n"),
            (
                "download.failed", Self.t0 + 9, Fixtures.failed,
                "3  failed episode-3.mp3  Not Found (http_status, HTTP 404)\n"
            ),
            ("download.removed", Self.t0 + 10, removed, "10  removed episode-10.mp3\n"),
            ("download.verified", Self.t0 + 11, Fixtures.completed, "1  verified episode-1.mp3  completed\n"),
            // Active again after it finished: its first progress prints at once.
            ("download.progress", Self.t0 + 12, Fixtures.active, "12  progress 44%  1.3 MB/s\n"),
        ]
        for (method, now, download, expected) in steps {
            #expect(renderer.event(method, download, now: now) == expected, "\(method) at \(now)")
        }
        #expect(renderer.message("2026-11-29T12:00:01Z daemon.stopping\n") == "2026-11-29T12:00:01Z daemon.stopping\n")
    }
}
