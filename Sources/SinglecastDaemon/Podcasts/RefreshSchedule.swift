import SinglecastStore
import SinglecastSupport

/// When podcasts refresh: each one's interval (its own, else the configured one) jittered by ±10 % so that many
/// feeds added at once do not refresh at once ever after, which are due now, and when the refresher wakes next.
///
/// Pure: the time and the jitter are handed in, so the schedule is tested with a hand-set clock.
struct RefreshSchedule: Sendable, Hashable {
    /// The configured interval (`refresh_interval`), in milliseconds.
    var interval: Int64
    /// The refresher sleeps at least this long, so a podcast due again at once cannot spin the loop. It sleeps until
    /// the next podcast is due however far away that is: a wall clock that jumps meanwhile wakes it
    /// (``WallClockWatch``).
    static let shortestSleep: Int64 = 1000

    init(interval: Duration) {
        self.interval = interval.components.seconds.saturatingMultiply(1000)
    }

    /// The podcast's interval before jitter.
    func interval(of podcast: PodcastRecord) -> Int64 { podcast.refreshInterval ?? interval }

    /// When a podcast refreshed at `last` refreshes next.
    ///
    /// - Parameter jitter: From 0 to 1 (uniform in the daemon); 0.5 is the interval itself, 0 and 1 are 10 % less and
    ///   more.
    func nextRefresh(of podcast: PodcastRecord, after last: Int64, jitter: Double) -> Int64 {
        let base = Double(interval(of: podcast))
        let jittered = OutsideNumber.clamped(base * (0.9 + 0.2 * min(max(jitter, 0), 1)), to: 0...Int64.max)
        return last.saturatingAdd(jittered)
    }

    /// After `set` changed a podcast's interval: counted from its last refresh, not from the old due time.
    func rescheduled(_ podcast: PodcastRecord, now: Int64, jitter: Double) -> Int64 {
        nextRefresh(of: podcast, after: podcast.succeededAt ?? podcast.refreshedAt ?? now, jitter: jitter)
    }

    /// The podcasts due at `now`, the longest overdue first (a gone one, HTTP 410, is due a day after its 410).
    static func due(_ podcasts: some Sequence<PodcastRecord>, now: Int64) -> [Int64] {
        podcasts.filter { ($0.nextRefreshAt ?? 0) <= now }
            .sorted { ($0.nextRefreshAt ?? 0, $0.id) < ($1.nextRefreshAt ?? 0, $1.id) }
            .map(\.id)
    }

    /// When the next podcast falls due, if any will.
    static func nextDue(_ podcasts: some Sequence<PodcastRecord>) -> Int64? {
        podcasts.compactMap(\.nextRefreshAt).min()
    }

    /// When the refresher wakes, for work due at `due` (the next refresh, or retention's next deletion); `nil`, with
    /// nothing due, is never.
    static func wake(now: Int64, due: Int64?) -> Int64? {
        guard let due else { return nil }
        return now.saturatingAdd(max(shortestSleep, due.saturatingSubtract(now)))
    }
}
