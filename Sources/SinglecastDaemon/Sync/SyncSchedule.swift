import SinglecastSupport

/// When the next automatic sync runs: the one owner of the retry rule.
///
/// After a success, `sync_interval` moved by up to a tenth either way. After a transient failure (unreachable,
/// 5xx, a malformed answer), ``RetryPolicy``'s doubling backoff from 30 s, never beyond the interval. After a 401 or
/// a configuration problem, nothing: asking again with the same password only fills the server's log (and may lock
/// the account), so the schedule waits for a reload with a changed password, or for `singlecastctl sync`.
package struct SyncSchedule: Sendable, Hashable {
    package let interval: Duration
    private let retry: RetryPolicy
    package private(set) var consecutiveFailures = 0
    /// Set after a failure retrying cannot mend.
    package private(set) var blocked = false
    /// Unix milliseconds of the next automatic sync, once one ran.
    package private(set) var nextAttempt: Int64?
    private var delay: Duration?

    package init(interval: Duration) {
        self.interval = interval
        var retry = RetryPolicy()
        retry.baseDelay = .seconds(30)
        retry.maximumDelay = interval
        self.retry = retry
        delay = interval
    }

    package mutating func succeeded(at now: Int64, random: Double) {
        consecutiveFailures = 0
        blocked = false
        set(firstDelay(random: random), now: now)
    }

    /// 0.9 to 1.1 times the interval, so that daemons started together do not ask together for ever.
    package func firstDelay(random: Double) -> Duration {
        let seconds = Self.seconds(interval) * (0.9 + 0.2 * min(max(random, 0), 1))
        return .milliseconds(OutsideNumber.clamped(seconds * 1000, to: 1000...Int64.max))
    }

    package mutating func failed(_ error: SyncError, at now: Int64, random: Double) {
        consecutiveFailures += 1
        if error.isTransient {
            set(retry.backoff(afterAttempts: consecutiveFailures, random: random), now: now)
        } else {
            blocked = true
            delay = nil
            nextAttempt = nil
        }
    }

    /// A reload changed the password: the next automatic sync may try it.
    package mutating func credentialsChanged() {
        guard blocked else { return }
        blocked = false
        delay = .seconds(1)
    }

    /// The wait before the next automatic sync; `nil` while ``blocked``.
    package var nextDelay: Duration? { blocked ? nil : delay }

    private mutating func set(_ wait: Duration, now: Int64) {
        delay = wait
        nextAttempt = now.saturatingAdd(Int64(Self.seconds(wait) * 1000))
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
