import FoundationEssentials
import SinglecastSupport

/// A request rate: at most ``count`` requests per ``interval``.
package struct RateLimit: Hashable, Sendable, CustomStringConvertible {
    package var count: Int
    package var interval: Duration

    package init(count: Int, interval: Duration) {
        precondition(count > 0 && interval > .zero, "a rate limit needs a positive count and interval")
        self.count = count
        self.interval = interval
    }

    /// Parses `20/min` (also `20/m`, `20/minute`), `5/s`, `300/h`, or a bare `20`, which means per minute.
    package init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let count = Int(parts[0].trimmingWhitespace()), count > 0 else {
            return nil
        }
        let unit = parts.count == 2 ? parts[1].trimmingWhitespace() : "min"
        switch unit {
        case "s", "sec", "second": self.init(count: count, interval: .seconds(1))
        case "m", "min", "minute": self.init(count: count, interval: .seconds(60))
        case "h", "hour": self.init(count: count, interval: .seconds(3600))
        default: return nil
        }
    }

    /// `20 requests a minute`, `300 requests an hour`.
    package var description: String {
        let unit =
            switch interval {
            case .seconds(1): "second"
            case .seconds(60): "minute"
            case .seconds(3600): "hour"
            default: "\(interval)"
            }
        return "\(count) request\(count == 1 ? "" : "s") \(unit == "hour" ? "an" : "a") \(unit)"
    }

    /// Seconds for one request's worth of refill.
    fileprivate var secondsPerRequest: Double { interval.seconds / Double(count) }
}

/// A token bucket: up to ``RateLimit/count`` requests at once, then one more each time a
/// ``RateLimit/interval``/``RateLimit/count`` has passed.
///
/// Pure: the caller passes the time, so tests run on a clock they move by hand.
package struct TokenBucket: Sendable, Hashable {
    /// Whether a request may go out now.
    package enum Decision: Sendable, Hashable {
        case allowed
        /// No token left; the next one is there after `retryAfter`.
        case denied(retryAfter: Duration)
    }

    package let limit: RateLimit
    private var tokens: Double
    private var updated: ContinuousClock.Instant?

    /// A full bucket.
    package init(limit: RateLimit) {
        self.limit = limit
        tokens = Double(limit.count)
    }

    /// Takes a token if there is one.
    package mutating func take(at now: ContinuousClock.Instant) -> Decision {
        if let updated, now > updated {
            tokens = min(Double(limit.count), tokens + (now - updated).seconds / limit.secondsPerRequest)
        }
        updated = max(updated ?? now, now)
        if tokens >= 1 {
            tokens -= 1
            return .allowed
        }
        return .denied(retryAfter: .milliseconds(Int64(((1 - tokens) * limit.secondsPerRequest * 1000).rounded(.up))))
    }
}

extension Duration {
    /// The duration in seconds, with fractions.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
