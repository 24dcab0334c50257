import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The services sleep until their next wall-clock time without looking at the clock every minute: a jump of the wall
/// clock wakes them instead.
@Suite struct WallClockWatchTests {
    /// Setting the clock takes CAP_SYS_TIME (root, outside a container that drops it); elsewhere the test is skipped.
    /// It sets the clock to the time it reads: a jump of a few microseconds at most, enough for the kernel.
    static let maySetTheClock: Bool = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return clock_settime(CLOCK_REALTIME, &now) == 0
    }()

    @Test(.enabled(if: maySetTheClock), .timeLimit(.minutes(1)))
    func aSetOfTheWallClockIsReportedAndNothingElseIs() async throws {
        let reactor = try Reactor()
        reactor.start()
        defer { Task { await reactor.stop() } }
        let jumps = Atomic<Int>(0)
        let watching = Task {
            guard let watch = WallClockWatch(reactor: reactor) else {
                Issue.record("no wall clock timer: \(String(cString: strerror(errno)))")
                return
            }
            await watch.run { jumps.add(1, ordering: .relaxed) }
        }
        defer { watching.cancel() }
        // Nothing happens while the clock runs on.
        try await Task.sleep(for: .milliseconds(300))
        #expect(jumps.load(ordering: .relaxed) == 0)
        for expected in 1...2 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            #expect(clock_settime(CLOCK_REALTIME, &now) == 0)
            let deadline = ContinuousClock.now + .seconds(10)
            while jumps.load(ordering: .relaxed) < expected, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(jumps.load(ordering: .relaxed) == expected, "the watch is armed again after each jump")
        }
    }
}
