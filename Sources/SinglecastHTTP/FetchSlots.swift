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
    /// The waiters of each host in arrival order, each with its place in the arrival order of all of them.
    ///
    /// Kept by host, not in one line: a release looks at the first waiter of each host rather than every waiter. In
    /// one line, each release of a refresh of 1,000 feeds on one host walked past the ~1,000 waiting behind a full
    /// host, hashing its name for each: 4 % of the refresh's CPU.
    private var waiting: [String: HostQueue] = [:]
    private var arrivals = 0
    package private(set) var waitingCount = 0

    /// One host's waiters, first in line at `head`.
    private struct HostQueue: Sendable {
        var entries: [(arrival: Int, id: Int)] = []
        var head = 0

        var first: (arrival: Int, id: Int)? { head < entries.count ? entries[head] : nil }
        var isEmpty: Bool { head == entries.count }

        mutating func removeFirst() {
            head += 1
            // Compacted once half of it is behind the head, so a long line costs no more than its length in all.
            if head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }

        mutating func remove(id: Int) -> Bool {
            guard let index = entries[head...].firstIndex(where: { $0.id == id }) else { return false }
            entries.remove(at: index)
            return true
        }
    }

    package init(limit: Int, perHostLimit: Int) {
        self.limit = max(1, limit)
        self.perHostLimit = max(1, min(perHostLimit, limit))
    }

    /// Fetches running to `host`.
    package func running(to host: String) -> Int { runningByHost[host, default: 0] }

    /// Asks for a slot for fetch `id` to `host`.
    ///
    /// - Returns: `true` when it may start now (it holds a slot until ``release(host:)``); `false` when it waits
    ///   until a ``release(host:)`` names it.
    package mutating func acquire(id: Int, host: String) -> Bool {
        // Behind any earlier waiter for the same host; a waiter for another host is only waiting for its own host.
        if waiting[host] == nil && hasRoom(for: host) {
            take(host)
            return true
        }
        waiting[host, default: HostQueue()].entries.append((arrivals, id))
        arrivals += 1
        waitingCount += 1
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
        // The earliest waiter of a host with room, again and again: the order one line in arrival order gave.
        while running < limit {
            var next: (host: String, arrival: Int, id: Int)?
            for (waitingHost, queue) in waiting where hasRoom(for: waitingHost) {
                if let first = queue.first, first.arrival < next?.arrival ?? .max {
                    next = (waitingHost, first.arrival, first.id)
                }
            }
            guard let next else { break }
            take(next.host)
            started.append(next.id)
            dequeueFirst(of: next.host)
        }
        return started
    }

    /// Forgets a waiting fetch (its task was cancelled).
    ///
    /// - Returns: Whether it was waiting; `false` means it already holds a slot, which it must release.
    package mutating func cancel(id: Int) -> Bool {
        guard let host = waiting.first(where: { $0.value.entries[$0.value.head...].contains { $0.id == id } })?.key,
            waiting[host]!.remove(id: id)
        else { return false }
        waitingCount -= 1
        if waiting[host]!.isEmpty { waiting[host] = nil }
        return true
    }

    private mutating func dequeueFirst(of host: String) {
        waiting[host]!.removeFirst()
        waitingCount -= 1
        if waiting[host]!.isEmpty { waiting[host] = nil }
    }

    private func hasRoom(for host: String) -> Bool {
        running < limit && running(to: host) < perHostLimit
    }

    private mutating func take(_ host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }
}
