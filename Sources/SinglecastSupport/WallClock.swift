import FoundationEssentials

/// The one wall clock: milliseconds since 1970.
///
/// Every part that stores, compares or shows a wall time takes it as an injected `() -> Int64` whose default is
/// this, so tests move time by hand, and the daemon's records, events and log lines read one clock in one unit.
package enum WallClock {
    package static let milliseconds: @Sendable () -> Int64 = { Int64(Date.now.timeIntervalSince1970 * 1000) }

    /// The time now as the wire writes it (``UTCTimestamp``).
    package static func timestamp() -> String { UTCTimestamp.string(milliseconds: milliseconds()) }
}
