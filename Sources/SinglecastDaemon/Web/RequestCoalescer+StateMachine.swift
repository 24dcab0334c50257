/// Who computes a coalesced answer and who waits for it, per key (see ``RequestCoalescer``).
///
/// A caller that arrives while a computation runs joins the *next* one, never the running one: the running one may
/// have read its state before the caller's request came, and an answer must not be older than its request.
struct RequestCoalescerStateMachine<Key: Hashable, Waiter: Hashable> {
    private struct Slot {
        /// The callers the running computation answers; the first of them runs it.
        var answered: [Waiter]
        /// Callers that came while it ran: the next computation is theirs.
        var next: [Waiter]
    }

    enum ArrivalAction: Equatable {
        /// Nothing runs for this key: the caller computes the answer.
        case compute
        /// The caller waits: for a value, or for its turn to compute (``FinishAction/handOver``).
        case wait
    }

    struct FinishAction: Equatable {
        /// The callers the finished computation answers, the one that ran it first.
        var answer: [Waiter]
        /// The caller that computes next, for everyone who came during this computation; `nil` when none did.
        var handOver: Waiter?
    }

    private var slots: [Key: Slot] = [:]

    /// Keys with a computation running: for tests and leaks.
    var running: Int { slots.count }

    mutating func arrive(_ waiter: Waiter, for key: Key) -> ArrivalAction {
        guard var slot = slots[key] else {
            slots[key] = Slot(answered: [waiter], next: [])
            return .compute
        }
        slot.next.append(waiter)
        slots[key] = slot
        return .wait
    }

    /// The computation for `key` ended. The first caller of the next round (if any) computes again.
    mutating func finish(_ key: Key) -> FinishAction {
        guard let slot = slots[key] else {
            preconditionFailure("a coalesced computation finished for a key with none running")
        }
        guard let first = slot.next.first else {
            slots[key] = nil
            return FinishAction(answer: slot.answered, handOver: nil)
        }
        slots[key] = Slot(answered: slot.next, next: [])
        return FinishAction(answer: slot.answered, handOver: first)
    }
}
