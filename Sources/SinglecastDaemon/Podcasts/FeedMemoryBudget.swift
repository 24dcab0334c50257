/// Who may hold a feed document and its parse now: reservations of estimated bytes within a budget, granted in
/// arrival order.
///
/// A reservation is granted when nothing waits before it and it fits in what the others leave of the budget, or when
/// nothing else is held: a document bigger than the whole budget then runs alone, and nothing starts beside it. No
/// reservation overtakes an earlier one, so a big one is never starved by a stream of small ones (the small ones
/// behind it wait too). Pure, so the rules are tested without I/O; ``FeedMemoryLimiter`` drives it.
struct FeedMemoryBudget: Sendable {
    /// The bytes that may be held at once.
    private(set) var limit: Int64
    /// The bytes the granted reservations hold.
    private(set) var held: Int64 = 0
    private var holding: [Int: Int64] = [:]
    private var waiting: [(id: Int, bytes: Int64)] = []

    init(limit: Int64) {
        self.limit = max(1, limit)
    }

    /// How many reservations are granted.
    var holders: Int { holding.count }

    /// How many wait.
    var waitingCount: Int { waiting.count }

    /// Asks for `bytes` for reservation `id`.
    ///
    /// - Returns: `true` when it is granted now (it holds the bytes until ``release(id:)``); `false` when it waits
    ///   until a ``release(id:)``, ``cancel(id:)`` or ``setLimit(_:)`` names it.
    mutating func reserve(id: Int, bytes: Int64) -> Bool {
        precondition(holding[id] == nil && !waiting.contains { $0.id == id }, "reservation \(id) asked twice")
        let bytes = max(0, bytes)
        if waiting.isEmpty && fits(bytes) {
            take(id, bytes)
            return true
        }
        waiting.append((id, bytes))
        return false
    }

    /// Gives back the bytes of a granted reservation.
    ///
    /// - Returns: The waiting reservations now granted, in arrival order.
    mutating func release(id: Int) -> [Int] {
        guard let bytes = holding.removeValue(forKey: id) else {
            preconditionFailure("released reservation \(id), which holds nothing")
        }
        held -= bytes
        return grant()
    }

    /// Changes what granted reservation `id` holds to `bytes`: its document turned out bigger (or smaller) than the
    /// size it reserved for before fetching.
    ///
    /// A smaller or fitting size, or any size when it is the only holder, is taken at once. Otherwise it gives back
    /// what it holds and waits *first* in line for `bytes`: the others waiting stay behind it, so nothing starts
    /// while its document waits, and it waits only for the holders running now, never for a reservation that
    /// waits itself (two that grew cannot wait for each other).
    ///
    /// - Returns: `resized`: whether it holds `bytes` now (else it waits until a ``release(id:)`` or
    ///   ``setLimit(_:)`` names it); `granted`: the waiting reservations a smaller size lets in.
    mutating func resize(id: Int, bytes: Int64) -> (resized: Bool, granted: [Int]) {
        guard let old = holding[id] else { preconditionFailure("resized reservation \(id), which holds nothing") }
        let bytes = max(0, bytes)
        if bytes <= old || holding.count == 1 || bytes - old <= limit - held {
            holding[id] = bytes
            held += bytes - old
            return (true, grant())
        }
        holding[id] = nil
        held -= old
        waiting.insert((id, bytes), at: 0)
        return (false, [])
    }

    /// The bytes reservation `id` holds; `nil` when it holds nothing (it waits, or was never granted).
    func bytesHeld(by id: Int) -> Int64? { holding[id] }

    /// Forgets a waiting reservation (its task was cancelled).
    ///
    /// - Returns: `nil` when it was not waiting (it holds its bytes, and must release them); else the reservations
    ///   that waited behind it and are granted now that it is gone.
    mutating func cancel(id: Int) -> [Int]? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        waiting.remove(at: index)
        return grant()
    }

    /// Changes the budget (a reload); what is held stays held.
    ///
    /// - Returns: The waiting reservations a larger budget grants now.
    mutating func setLimit(_ newLimit: Int64) -> [Int] {
        limit = max(1, newLimit)
        return grant()
    }

    private func fits(_ bytes: Int64) -> Bool {
        holding.isEmpty || bytes <= limit - held
    }

    private mutating func take(_ id: Int, _ bytes: Int64) {
        holding[id] = bytes
        held += bytes
    }

    /// Grants waiting reservations from the front for as long as they fit.
    private mutating func grant() -> [Int] {
        var granted: [Int] = []
        while let first = waiting.first, fits(first.bytes) {
            waiting.removeFirst()
            take(first.id, first.bytes)
            granted.append(first.id)
        }
        return granted
    }
}
