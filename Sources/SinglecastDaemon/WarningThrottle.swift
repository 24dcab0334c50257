/// Lets one warning of a kind through per interval and counts the ones it holds back, so that a client that
/// retries in a loop cannot flood the log (a connect-and-close loop once wrote 7,545 refusals in seconds).
struct WarningThrottle: Sendable {
    let interval: Duration
    private var lastLogged: ContinuousClock.Instant?
    private var heldBack = 0

    init(interval: Duration = .seconds(10)) { self.interval = interval }

    /// Decides about one warning that is due at `now`.
    ///
    /// - Returns: `nil` to hold this warning back, or the number of warnings held back since the last one that
    ///   was let through, for the message to mention.
    mutating func letThrough(at now: ContinuousClock.Instant = .now) -> Int? {
        if let lastLogged, now - lastLogged < interval {
            heldBack += 1
            return nil
        }
        defer {
            lastLogged = now
            heldBack = 0
        }
        return heldBack
    }
}
