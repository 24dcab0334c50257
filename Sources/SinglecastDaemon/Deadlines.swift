import SinglecastHTTP

/// The pending wake-up of a service loop that sleeps until its next deadline (a retry time, a refresh due).
///
/// Shared by the download queue and the feed refresher: each asks for a time whenever it looks at its work, and
/// only a time earlier than the pending one needs a new sleeping child; a later one is picked up when that child
/// wakes the loop. Pure, so the rule is tested without sleeping.
struct WakeSchedule: Sendable, Hashable {
    /// Unix milliseconds of the pending wake-up, if one is pending.
    private(set) var pending: Int64?

    /// Records a wish to wake at `time`.
    ///
    /// - Returns: Whether a sleeper for `time` must be started (no wake-up was pending, or it was later).
    mutating func request(_ time: Int64) -> Bool {
        guard pending.map({ time < $0 }) ?? true else { return false }
        pending = time
        return true
    }

    /// A sleeper for `time` woke; it was the pending one unless an earlier wish replaced it.
    mutating func woke(_ time: Int64) {
        if pending == time { pending = nil }
    }
}

/// Runs `operation`, cancelling it once `limit` has passed: a server that trickles bytes just fast enough for the
/// low-speed limit must not hold a refresh, a directory search or the daemon's shutdown for ever.
///
/// - Returns: What `operation` returned, or `nil` when the time ran out first.
func withDeadline<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}

/// A fetch that cannot fail but by a ``TransferError``, under a deadline: `nil` when the time ran out.
func fetchWithin(
    _ limit: Duration,
    _ fetch: @escaping @Sendable (FetchRequest) async throws(TransferError) -> FetchResult,
    _ request: FetchRequest
) async -> Result<FetchResult, TransferError>? {
    await withDeadline(limit) {
        do throws(TransferError) {
            return .success(try await fetch(request))
        } catch {
            return .failure(error)
        }
    }
}
