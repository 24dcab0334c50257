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
        /// Turns given to waiters that had not parked yet.
        var early: [Int: Turn] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Computations running now.
    package var running: Int { state.withLock { $0.machine.running } }

    /// `compute`'s value, computed by this caller or by another that started after this one arrived.
    package func value(for key: Key, compute: @Sendable () async -> Value) async -> Value {
        let (waiter, action) = state.withLock { state in
            defer { state.nextWaiter &+= 1 }
            return (state.nextWaiter, state.machine.arrive(state.nextWaiter, for: key))
        }
        if action == .wait {
            let turn = await withCheckedContinuation { continuation in
                // The continuation is parked before anyone can look for it: a finish that already named this
                // waiter finds it here, since both happen under the lock.
                let early = state.withLock { state -> Turn? in
                    if let turn = state.early.removeValue(forKey: waiter) { return turn }
                    state.parked[waiter] = continuation
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
            if case .answered(let value) = turn { return value }
        }
        let value = await compute()
        let resumes = state.withLock { state -> [(CheckedContinuation<Turn, Never>?, Int, Turn)] in
            let finish = state.machine.finish(key)
            var resumes: [(CheckedContinuation<Turn, Never>?, Int, Turn)] = []
            for other in finish.answer where other != waiter {
                resumes.append((state.parked.removeValue(forKey: other), other, .answered(value)))
            }
            if let next = finish.handOver {
                resumes.append((state.parked.removeValue(forKey: next), next, .compute))
            }
            // A waiter named before it parked its continuation finds its turn when it does.
            for (continuation, other, turn) in resumes where continuation == nil { state.early[other] = turn }
            return resumes
        }
        for (continuation, _, turn) in resumes { continuation?.resume(returning: turn) }
        return value
    }
}
