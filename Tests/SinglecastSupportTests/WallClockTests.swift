import Foundation
import Testing

@testable import SinglecastSupport

/// The daemon read the wall clock in four places, in seconds and in milliseconds, and wrote times for its log, its
/// events and its status with Foundation's format style; all of it reads `WallClock` and writes `UTCTimestamp` now.
@Suite struct WallClockTests {
    @Test func millisecondsAreFoundationsTimeSince1970() {
        let before = Int64(Date.now.timeIntervalSince1970 * 1000)
        let now = WallClock.milliseconds()
        let after = Int64(Date.now.timeIntervalSince1970 * 1000)
        #expect(before <= now && now <= after)
    }

    /// What `Date.now.formatted(.iso8601)` wrote at the same moment (the second is cut, not rounded, in both).
    @Test func theTimestampIsTheFormatStylesText() {
        let before = Date.now
        let stamp = WallClock.timestamp()
        let after = Date.now
        #expect([before.formatted(.iso8601), after.formatted(.iso8601)].contains(stamp), "\(stamp)")
    }
}
