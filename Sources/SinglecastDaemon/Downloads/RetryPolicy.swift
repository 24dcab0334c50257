import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// What to do after a transfer ended without a complete file.
package enum FailureDecision: Equatable, Sendable {
    /// Try again at this time (Unix milliseconds).
    case retry(at: Int64)
    /// Give up; the download is failed until the user retries it.
    case fail
    /// Hold the download until the user resumes it (e.g. the disk is full).
    case pause(reason: String)
}

/// Exponential backoff with jitter, capped, honoring `Retry-After`.
package struct RetryPolicy: Sendable, Hashable {
    package var baseDelay: Duration = .seconds(2)
    package var maximumDelay: Duration = .seconds(600)
    /// Attempts before a download is marked failed.
    package var maximumAttempts = 10

    package init() {}

    /// The delay before attempt `attempts + 1`: base · 2^(attempts-1), capped, then a random 50–100 %
    /// of it so that many downloads failing together do not retry together.
    package func backoff(afterAttempts attempts: Int, random: Double) -> Duration {
        let exponent = Double(max(0, attempts - 1))
        let base = Double(baseDelay.components.seconds) + Double(baseDelay.components.attoseconds) / 1e18
        let cap = Double(maximumDelay.components.seconds)
        let delay = min(cap, base * pow(2, min(exponent, 30)))
        let milliseconds = delay * (0.5 + 0.5 * min(max(random, 0), 1)) * 1000
        return .milliseconds(OutsideNumber.clamped(milliseconds, to: 0...Int64.max))
    }

    /// The longest wait a `Retry-After` can ask for: a day.
    package static let longestRetryAfter: Int64 = 86_400_000

    /// Parses `Retry-After`: delta-seconds or an HTTP-date, as Unix milliseconds held to at most a day from now;
    /// `nil` when absent or unreadable.
    package static func retryAfter(_ header: String?, nowMilliseconds: Int64) -> Int64? {
        guard let header = header?.trimmingWhitespace(), !header.isEmpty else { return nil }
        let latest = nowMilliseconds.saturatingAdd(longestRetryAfter)
        if header.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // More digits than an Int64 holds ask for longer than a day all the same.
            guard let seconds = OutsideNumber.decimal(header) else { return latest }
            return min(nowMilliseconds.saturatingAdd(seconds.saturatingMultiply(1000)), latest)
        }
        // The three HTTP-date forms (IMF-fixdate, RFC 850, asctime) are RFC 822 dates as feeds write them; the
        // date is converted through the checked gate before it is clamped (FeedDate bounds its years too).
        guard let date = FeedDate.parseRFC822(header),
            let at = OutsideNumber.milliseconds(fromSeconds: date.timeIntervalSince1970)
        else { return nil }
        return min(max(at, nowMilliseconds), latest)
    }

    /// What follows from a failed attempt: the only place that chooses between retrying, failing and pausing.
    ///
    /// The backoff is the floor of every later attempt: a `Retry-After` may only ask for longer (`Retry-After: 0`
    /// or a date in the past spent ten attempts in 70 ms), and starting over at once is done for the first
    /// attempt only (a server whose every resume is unusable spent ten attempts in 40 ms).
    ///
    /// - Parameters:
    ///   - failure: Why the attempt failed; a transfer stopped by pause, cancel or shutdown is no failure.
    ///   - attempts: Attempts made so far, this one included.
    ///   - now: Unix milliseconds.
    ///   - random: 0…1, for the backoff's jitter.
    package func decide(_ failure: DownloadFailure, attempts: Int, now: Int64, random: Double) -> FailureDecision {
        enum Retry {
            case never
            case backoff(retryAfter: String?)
            /// Nothing is wrong with the server; the bytes kept were: start over at once.
            case immediately
        }
        if failure.isDiskFull { return .pause(reason: "disk_full") }
        if case .transfer(let error) = failure, error.code == .noSpace { return .pause(reason: "no_space") }
        let retry: Retry
        switch failure {
        case .transfer(let error):
            // Which transfer errors are worth another attempt is the engine's knowledge (TransferError.RetryClass).
            switch error.code.retryClass {
            case .notAFailure: preconditionFailure("a stopped transfer is concluded, not decided on")
            case .never: retry = .never
            case .immediately: retry = .immediately
            case .afterBackoff, .afterUserAction: retry = .backoff(retryAfter: nil)
            }
        case .httpStatus(let status, _, let retryAfter):
            retry = Self.isRetryable(httpStatus: status) ? .backoff(retryAfter: retryAfter) : .never
        case .lengthMismatch:
            retry = .backoff(retryAfter: nil)
        case .rangeNotSatisfiable:
            retry = .immediately
        case .notMedia:
            // The server answers the URL with a page, not the episode: asking again at once gets the same page.
            retry = .never
        case .file(let operation, _, _):
            switch operation {
            case .open, .rename, .remove:
                // Fails the same way next time (permissions, a directory in the way), or left bytes that cannot
                // be trusted: the user has to look.
                retry = .never
            case .truncate, .sync:
                // The disk's passing trouble, and the bytes are gone: start over later.
                retry = .backoff(retryAfter: nil)
            }
        }
        switch retry {
        case .never:
            return .fail
        case _ where attempts >= maximumAttempts:
            return .fail
        case .immediately where attempts <= 1:
            return .retry(at: now)
        case .immediately:
            // The attempt that started over failed the same way: the next one waits as after any other failure,
            // counting from the attempt that started over.
            return .retry(at: now.saturatingAdd(milliseconds(backoff(afterAttempts: attempts - 1, random: random))))
        case .backoff(let header):
            let floor = now.saturatingAdd(milliseconds(backoff(afterAttempts: attempts, random: random)))
            return .retry(at: max(floor, Self.retryAfter(header, nowMilliseconds: now) ?? floor))
        }
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds.saturatingMultiply(1000)
            .saturatingAdd(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Whether an HTTP status is worth retrying: what ``HTTPStatus/isTransient(_:)`` says.
    package static func isRetryable(httpStatus status: Int) -> Bool { HTTPStatus.isTransient(status) }
}

/// How many transfers may run at once, in all and per host: the limits ``DownloadQueueStateMachine/startDue(_:now:)``
/// applies to the due downloads its table offers in queue order.
package struct QueueScheduler: Sendable, Hashable {
    package var maximumConcurrent = 3
    package var maximumPerHost = 2

    package init() {}

    /// Whether another transfer may start while `running` run.
    package func admits(running: Int) -> Bool { running < maximumConcurrent }

    /// Whether another transfer may start on a host where `running` run.
    package func admits(onHost running: Int) -> Bool { running < maximumPerHost }
}
