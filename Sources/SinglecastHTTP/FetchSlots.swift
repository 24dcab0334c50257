/// Who may fetch now: at most ``limit`` fetches at once, and at most ``perHostLimit`` of them to one host; the others
/// wait in arrival order.
///
/// A waiter whose host is full does not hold up waiters for other hosts. Pure, so the rules are tested without I/O;
/// ``FetchLimiter`` drives it.
package struct FetchSlots: Sendable {
    /// The most fetches running at once.
    package let limit: Int
    /// The most fetches running at once to one host.
    package let perHostLimit: Int
    package private(set) var running = 0
    private var runningByHost: [String: Int] = [:]
    private var waiting: [(id: Int, host: String)] = []

    package init(limit: Int, perHostLimit: Int) {
        self.limit = max(1, limit)
        self.perHostLimit = max(1, min(perHostLimit, limit))
    }

    /// Fetches running to `host`.
    package func running(to host: String) -> Int { runningByHost[host, default: 0] }

    /// How many wait.
    package var waitingCount: Int { waiting.count }

    /// Asks for a slot for fetch `id` to `host`.
    ///
    /// - Returns: `true` when it may start now (it holds a slot until ``release(host:)``); `false` when it waits
    ///   until a ``release(host:)`` names it.
    package mutating func acquire(id: Int, host: String) -> Bool {
        // Behind any earlier waiter for the same host; a waiter for another host is only waiting for its own host.
        if !waiting.contains(where: { $0.host == host }) && hasRoom(for: host) {
            take(host)
            return true
        }
        waiting.append((id, host))
        return false
    }

    /// Gives back the slot of a finished fetch to `host`.
    ///
    /// - Returns: The waiting fetches that now hold a slot and may start, in arrival order.
    package mutating func release(host: String) -> [Int] {
        precondition(running(to: host) > 0, "released a fetch slot for \(host) that was not held")
        running -= 1
        runningByHost[host, default: 0] -= 1
        if runningByHost[host] == 0 { runningByHost[host] = nil }
        var started: [Int] = []
        var index = 0
        while index < waiting.count && running < limit {
            let waiter = waiting[index]
            if hasRoom(for: waiter.host) {
                take(waiter.host)
                started.append(waiter.id)
                waiting.remove(at: index)
            } else {
                index += 1
            }
        }
        return started
    }

    /// Forgets a waiting fetch (its task was cancelled).
    ///
    /// - Returns: Whether it was waiting; `false` means it already holds a slot, which it must release.
    package mutating func cancel(id: Int) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return false }
        waiting.remove(at: index)
        return true
    }

    private func hasRoom(for host: String) -> Bool {
        running < limit && running(to: host) < perHostLimit
    }

    private mutating func take(_ host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }
}
