import CPosix

#if canImport(Glibc)
import Glibc
#endif

/// Notices the wall clock jumping: set by hand or by an NTP step, or moved on by a resume from suspend.
///
/// Refreshes, retention, sidecar retries, download retries and download windows fall due at wall-clock times, but a
/// sleep runs on a clock that does not jump. Rather than wake every minute to look at the wall clock, the daemon
/// keeps a `timerfd` on `CLOCK_REALTIME` armed far in the future with `TFD_TIMER_CANCEL_ON_SET`: the kernel cancels
/// it, and makes it readable, whenever that clock is set (a resume counts), and the services are told to look again.
final class WallClockWatch {
    private let fd: Int32
    private let reactor: Reactor

    /// `nil`, with `errno` set, when the kernel gives no such timer.
    init?(reactor: Reactor) {
        fd = cposix_wall_clock_timer()
        guard fd >= 0 else { return nil }
        self.reactor = reactor
    }

    deinit {
        reactor.deregister(fd)
        close(fd)
    }

    /// Calls `changed` after each jump of the wall clock, until the task is cancelled or the reactor stops.
    func run(changed: () async -> Void) async {
        while (try? await reactor.wait(for: .readable, on: fd)) != nil {
            var expirations: UInt64 = 0
            // > If the associated clock is subsequently reset discontinuously, then read(2) on the file
            // > descriptor fails with the error ECANCELED.
            guard read(fd, &expirations, MemoryLayout<UInt64>.size) < 0, errno == ECANCELED else { continue }
            guard cposix_rearm_wall_clock_timer(fd) == 0 else { return }
            await changed()
        }
    }
}

@available(*, unavailable)
extension WallClockWatch: Sendable {}
