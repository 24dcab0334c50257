/// Failed logins per client address: a token bucket each, so a guesser gets a few tries and then one every
/// ``refillInterval``, while a user who mistyped once is not held up.
///
/// A value type with the time passed in, so its rule is tested without clocks; the listener keeps one under a lock.
package struct LoginThrottle: Sendable {
    /// Failures allowed in a burst.
    package var capacity: Int
    /// Milliseconds for one more failure to be allowed.
    package var refillInterval: Int64
    /// Addresses remembered at most; the table cannot grow without bound under a scan from many addresses.
    package var maximumAddresses: Int

    private struct Bucket: Sendable {
        /// Failures still allowed, as of `updatedAt`.
        var tokens: Double
        var updatedAt: Int64
    }

    private var buckets: [String: Bucket] = [:]

    package init(capacity: Int = 5, refillInterval: Int64 = 12_000, maximumAddresses: Int = 4096) {
        self.capacity = capacity
        self.refillInterval = refillInterval
        self.maximumAddresses = maximumAddresses
    }

    /// Addresses currently remembered.
    package var trackedAddresses: Int { buckets.count }

    /// Milliseconds until `address` may try again, or `nil` when it may try now.
    package func retryAfter(_ address: String, now: Int64) -> Int64? {
        guard let bucket = buckets[address] else { return nil }
        let tokens = refilled(bucket, now: now)
        guard tokens < 1 else { return nil }
        return max(1, Int64(((1 - tokens) * Double(refillInterval)).rounded(.up)))
    }

    /// Counts a failed login from `address`.
    package mutating func recordFailure(_ address: String, now: Int64) {
        let tokens = buckets[address].map { refilled($0, now: now) } ?? Double(capacity)
        buckets[address] = Bucket(tokens: max(0, tokens - 1), updatedAt: now)
        if buckets.count > maximumAddresses { forgetFull(now: now) }
    }

    /// A successful login: the address's past mistakes are forgiven.
    package mutating func recordSuccess(_ address: String) {
        buckets.removeValue(forKey: address)
    }

    private func refilled(_ bucket: Bucket, now: Int64) -> Double {
        let elapsed = Double(max(0, now - bucket.updatedAt))
        return min(Double(capacity), bucket.tokens + elapsed / Double(refillInterval))
    }

    /// Drops the addresses whose bucket has refilled (they would start afresh anyway), then, if the table is still
    /// over its size, those that failed longest ago.
    private mutating func forgetFull(now: Int64) {
        buckets = buckets.filter { refilled($0.value, now: now) < Double(capacity) }
        guard buckets.count > maximumAddresses else { return }
        let oldest = buckets.sorted { $0.value.updatedAt < $1.value.updatedAt }.prefix(buckets.count - maximumAddresses)
        for (address, _) in oldest { buckets.removeValue(forKey: address) }
    }
}
