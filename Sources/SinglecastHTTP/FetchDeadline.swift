/// The time a whole fetch may take, from the moment it asks for a slot to its last redirect hop: a server that
/// trickles bytes just fast enough for the low-speed limit must not hold a refresh for ever.
///
/// Carried by the request instead of raced by a sleeping task: each hop hands libcurl what is left as its total
/// timeout (`CURLOPT_TIMEOUT_MS`), so a refresh of 1,000 feeds arms no timer of its own per feed (a task group and a
/// `Task.sleep` per feed were a fifth of the refresh's CPU on the cooperative pool, docs/ARCHITECTURE.md, Refreshing
/// many feeds). A fetch waiting for a slot is not woken by it: the fetches holding the slots of its host asked
/// before it, so their deadlines end their transfers first, and the hop then finds its own time gone. Pure.
package struct FetchDeadline: Sendable, Hashable {
    /// When the fetch must be over.
    package let instant: ContinuousClock.Instant
    /// The time it was given, for the message.
    package let limit: Duration

    /// A deadline `limit` after `start`.
    package init(_ limit: Duration, from start: ContinuousClock.Instant = .now) {
        self.limit = limit
        instant = start.advanced(by: limit)
    }

    /// What is left at `now`, in whole milliseconds rounded up (libcurl's unit; rounding down could end a hop just
    /// before the deadline, which would then look like another timeout); `nil` once nothing is left.
    package func remainingMilliseconds(at now: ContinuousClock.Instant) -> Int? {
        guard now < instant else { return nil }
        let left = now.duration(to: instant).components
        let milliseconds = left.seconds * 1000 + (left.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: max(1, milliseconds))
    }

    /// Whether the deadline has passed at `now`.
    package func hasPassed(at now: ContinuousClock.Instant) -> Bool { now >= instant }

    /// Whether a libcurl timeout that ended a hop at `now` is this deadline's. libcurl's total timeout, set to what
    /// was left, should end at or after the deadline, but CI once saw it reported before the deadline by our clock
    /// (libcurl counts from its own start of the transfer, in whole milliseconds), and the fetch then failed as a
    /// connect timeout. A timeout within ``timeoutSlack`` of the deadline is the deadline's: the fetch would have run
    /// out of time that much later anyway, while libcurl's own timeouts (connect, low speed) are seconds long.
    package func accountsForTimeout(at now: ContinuousClock.Instant) -> Bool {
        hasPassed(at: now.advanced(by: Self.timeoutSlack))
    }

    package static let timeoutSlack = Duration.milliseconds(50)

    /// The failure of a fetch of `url` that ran out of time.
    package func failure(_ url: String) -> TransferError {
        TransferError(
            code: .timeout,
            message: "\(redactedURL(url)) did not finish within \(limit.components.seconds) s"
        )
    }
}
