import Synchronization

/// Answers many concurrent requests for the same thing with few computations: 200 podcast apps polling one personal
/// feed at once make a handful of catalogue reads and renders, not 200, and none gets an answer older than its
/// request (``RequestCoalescerStateMachine``).
package final class RequestCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private enum Turn: Sendable {
        case answered(Value)
        case compute
    }

    private struct State {
        var machine = RequestCoalescerStateMachine<Key, Int>()
        var nextWaiter = 0
        var parked: [Int: CheckedContinuation<Turn, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Computations running now.
    package var running: Int { state.withLock { $0.machine.running } }

    /// `compute`'s value, computed by this caller or by another that started after this one arrived.
    package func value(for key: Key, compute: @Sendable () async -> Value) async -> Value {
        var waiter = 0
        // Arriving and parking happen under one lock, so a finish always finds the continuation it names.
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let computeNow = state.withLock { state in
                waiter = state.nextWaiter
                state.nextWaiter &+= 1
                guard state.machine.arrive(waiter, for: key) == .wait else { return true }
                state.parked[waiter] = continuation
                return false
            }
            if computeNow { continuation.resume(returning: .compute) }
        }
        if case .answered(let value) = turn { return value }
        let value = await compute()
        let resumes = state.withLock { state in
            let finish = state.machine.finish(key)
            var resumes = finish.answer.filter { $0 != waiter }.compactMap { other in
                state.parked.removeValue(forKey: other).map { ($0, Turn.answered(value)) }
            }
            if let next = finish.handOver, let continuation = state.parked.removeValue(forKey: next) {
                resumes.append((continuation, .compute))
            }
            return resumes
        }
        for (continuation, turn) in resumes { continuation.resume(returning: turn) }
        return value
    }
}
