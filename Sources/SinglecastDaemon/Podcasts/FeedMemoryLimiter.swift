import CPosix
import Synchronization

/// Bounds the memory feed documents and their parses hold at once, across every refresh and subscription, so that a
/// few large or hostile feeds refreshed together cannot take the machine's memory (measured before: four 99 MB feeds
/// at once peaked at 1.44 GB).
///
/// A refresh reserves its document's estimated cost before it parses it, waits (cancellably, in arrival order:
/// ``FeedMemoryBudget`` holds the rules) while others hold the budget, and gives the reservation back when the
/// ``Reservation`` is released. Use one limiter for all refreshes.
final class FeedMemoryLimiter: Sendable {
    private struct State {
        var budget: FeedMemoryBudget
        var nextID = 0
        /// Reservations waiting; resumed with `true` when granted, `false` when cancelled.
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Reservations that asked (so cancellation can tell "not yet asked" from "already granted").
        var asked: Set<Int> = []
        /// Reservations cancelled before they asked.
        var cancelledEarly: Set<Int> = []
        /// The size of each feed's last document, by feed URL, and whether the store has it.
        var documentSizes: [String: (bytes: Int, stored: Bool)] = [:]
    }

    /// Bytes granted to one refresh, given back when it is released (the last copy of what holds it is gone).
    final class Reservation: Sendable {
        private let limiter: FeedMemoryLimiter
        fileprivate let id: Int
        /// `nil` once it holds nothing: it grew, gave its bytes back to wait first in line, and was cancelled.
        private let held: Mutex<Int64?>

        fileprivate init(bytes: Int64, limiter: FeedMemoryLimiter, id: Int) {
            self.limiter = limiter
            self.id = id
            held = Mutex(bytes)
        }

        /// The bytes reserved.
        var bytes: Int64 { held.withLock { $0 ?? 0 } }

        fileprivate func set(_ bytes: Int64?) { held.withLock { $0 = bytes } }

        deinit {
            if let bytes = held.withLock({ $0 }) { limiter.release(id: id, bytes: bytes) }
        }
    }

    private let state: Mutex<State>

    /// - Parameter limit: The bytes that may be reserved at once (a single reservation may be bigger: it then runs
    ///   alone).
    init(limit: Int64) {
        state = Mutex(State(budget: FeedMemoryBudget(limit: limit)))
    }

    /// The size of the last document fetched from `url`, if one was: what its next refresh reserves before it
    /// fetches; `stored` tells whether the store has it too.
    func lastDocumentSize(of url: String) -> (bytes: Int, stored: Bool)? {
        state.withLock { $0.documentSizes[url] }
    }

    /// Records the size of a document fetched from `url`, and whether the store has it.
    func remember(documentSize: Int, of url: String, stored: Bool) {
        state.withLock { $0.documentSizes[url] = (documentSize, stored) }
    }

    /// The bytes reserved now.
    var held: Int64 { state.withLock { $0.budget.held } }

    /// Reserves `bytes` within `limit` once the reservations before it leave room.
    ///
    /// - Parameter limit: The budget as configured now; a reload's budget applies from the next reservation on
    ///   (what is held stays held).
    /// - Returns: The reservation, or `nil` when the task was cancelled while it waited.
    func reserve(_ bytes: Int64, within limit: Int64) async -> Reservation? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let granted = await wait(id) { budget in
            let others = budget.setLimit(limit)
            return (budget.reserve(id: id, bytes: bytes), others)
        }
        return granted ? Reservation(bytes: max(0, bytes), limiter: self, id: id) : nil
    }

    /// Makes `reservation` hold `bytes`, for a document bigger than the size it was reserved for: at once when that
    /// fits (``FeedMemoryBudget/resize(id:bytes:)`` holds the rules), else first in line, so that the feeds waiting
    /// behind it do not start while its document waits.
    ///
    /// - Returns: `false` when the task was cancelled while it waited (the reservation may then hold nothing).
    func grow(_ reservation: Reservation, to bytes: Int64, within limit: Int64) async -> Bool {
        let id = reservation.id
        let granted = await wait(id) { budget in
            let others = budget.setLimit(limit)
            let resized = budget.resize(id: id, bytes: bytes)
            return (resized.resized, others + resized.granted)
        }
        reservation.set(state.withLock { $0.budget.bytesHeld(by: id) })
        return granted
    }

    /// Asks the budget with `ask` (which returns whether reservation `id` is granted now, and the waiting ones it
    /// granted) and waits, cancellably, until `id` is granted.
    private func wait(_ id: Int, _ ask: (inout FeedMemoryBudget) -> (Bool, [Int])) async -> Bool {
        defer { state.withLock { _ = $0.asked.remove(id) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let (now, others): (Bool?, [CheckedContinuation<Bool, Never>]) = state.withLock { state in
                    state.asked.insert(id)
                    if state.cancelledEarly.remove(id) != nil { return (false, []) }
                    let (granted, others) = ask(&state.budget)
                    let resumed = others.compactMap { state.waiters.removeValue(forKey: $0) }
                    if granted { return (true, resumed) }
                    state.waiters[id] = continuation
                    return (nil, resumed)
                }
                for other in others { other.resume(returning: true) }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let resumed: [(CheckedContinuation<Bool, Never>, Bool)] = state.withLock { state in
                if let waiter = state.waiters.removeValue(forKey: id) {
                    let granted = state.budget.cancel(id: id) ?? []
                    return [(waiter, false)]
                        + granted.compactMap { state.waiters.removeValue(forKey: $0) }.map { ($0, true) }
                }
                if !state.asked.contains(id) { state.cancelledEarly.insert(id) }
                return []  // already granted: the caller gets its reservation and releases it
            }
            for (waiter, granted) in resumed { waiter.resume(returning: granted) }
        }
    }

    /// A reservation at least this big gives the memory its parse freed back to the system before the next one starts.
    static let trimmedAbove: Int64 = 8 << 20

    private func release(id: Int, bytes: Int64) {
        let granted = state.withLock { state in
            state.budget.release(id: id).compactMap { state.waiters.removeValue(forKey: $0) }
        }
        // glibc keeps what a parse freed in the arena of the thread that parsed, and the next turn may parse on
        // another thread: without a trim between turns, feeds taking turns still added up.
        if bytes >= Self.trimmedAbove { _ = cposix_trim_heap() }
        for waiter in granted { waiter.resume(returning: true) }
    }
}
