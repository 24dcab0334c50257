import SinglecastSupport

/// Tells the download queue whether it is inside a configured download window, waking only when that changes.
///
/// One sleeping child at a time, for the next window opening or closing (``DownloadWindows/nextChange(after:in:)``),
/// so an idle daemon spends nothing on it; without windows it never wakes. A reload hands it new windows. Each wake
/// asks the wall clock and the zone again, so a clock or time zone that moved meanwhile only means one more sleep.
package actor DownloadWindowService: Service {
    private let queue: DownloadQueue
    private let zone: LocalTimeZone
    /// Unix milliseconds; injected so that tests can move time by hand.
    private let now: @Sendable () -> Int64
    private var windows: DownloadWindows
    private var wake = WakeSchedule()
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation

    package init(
        queue: DownloadQueue,
        windows: DownloadWindows,
        zone: LocalTimeZone = .system,
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds
    ) {
        self.queue = queue
        self.windows = windows
        self.zone = zone
        self.now = now
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Tells the queue where the windows stand now; the daemon calls it once before READY, so that no download
    /// starts outside a window.
    ///
    /// - Returns: When to look again (Unix milliseconds), if ever.
    @discardableResult
    package func apply() async -> Int64? {
        let seconds = now() / 1000
        let outside = !windows.isOpen(at: seconds, in: zone)
        let next = windows.nextChange(after: seconds, in: zone).map { $0 * 1000 }
        await queue.setWindow(windows, outside: outside, nextChange: next)
        return next
    }

    /// New windows from a reload; applied at once.
    package func update(_ windows: DownloadWindows) {
        self.windows = windows
        wakeup.yield()
    }

    /// The wall clock jumped (``WallClockWatch``): the windows are looked at again.
    package nonisolated func wallClockMoved() { wakeup.yield() }

    package nonisolated func shutdown() { wakeup.finish() }

    package func run() async {
        wakeup.yield()
        await withDiscardingTaskGroup { group in
            for await _ in wakeups {
                guard let next = await apply(), wake.request(next) else { continue }
                group.addTask { await self.sleepUntil(next) }
            }
            group.cancelAll()
        }
    }

    private func sleepUntil(_ at: Int64) async {
        // A few milliseconds late rather than early: woken before the boundary, it would find nothing changed and
        // sleep again for what is left.
        guard (try? await Task.sleep(for: .milliseconds(max(0, at - now()) + 5))) != nil else { return }
        wake.woke(at)
        wakeup.yield()
    }
}
