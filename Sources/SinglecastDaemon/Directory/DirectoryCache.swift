/// Directory answers kept for ``timeToLive``, so repeating a search does not ask the directory again.
///
/// Pure: the caller passes the time. At most ``capacity`` entries are kept; the oldest goes first.
package struct DirectoryCache<Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        var value: Value
        var expires: ContinuousClock.Instant
        var sequence: UInt64
    }

    /// How long an answer stays; zero keeps nothing.
    package var timeToLive: Duration
    package let capacity: Int
    private var entries: [String: Entry] = [:]
    private var sequence: UInt64 = 0

    package init(timeToLive: Duration, capacity: Int = 256) {
        precondition(capacity > 0, "a cache holds at least one entry")
        self.timeToLive = timeToLive
        self.capacity = capacity
    }

    /// Entries held, fresh or not.
    package var count: Int { entries.count }

    /// The answer stored under `key`, unless it has expired.
    package func value(for key: String, at now: ContinuousClock.Instant) -> Value? {
        guard let entry = entries[key], now < entry.expires else { return nil }
        return entry.value
    }

    /// Keeps `value` under `key` until ``timeToLive`` has passed.
    package mutating func store(_ value: Value, for key: String, at now: ContinuousClock.Instant) {
        guard timeToLive > .zero else { return }
        entries = entries.filter { now < $0.value.expires }
        if entries[key] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.sequence < $1.value.sequence })?.key
        {
            entries[oldest] = nil
        }
        sequence += 1
        entries[key] = Entry(value: value, expires: now + timeToLive, sequence: sequence)
    }

    package mutating func removeAll() { entries.removeAll() }
}
