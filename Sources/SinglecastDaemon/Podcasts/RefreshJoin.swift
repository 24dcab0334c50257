/// Who runs a podcast's refresh and who waits for it: the first to ask runs it, everyone asking while it runs waits
/// for its answer, and a stop (unsubscribe, shutdown) is signalled once to the one running.
///
/// Pure: the refresher keeps one and acts on its answers; `Stop` is the signal it fires, `Waiter` whatever it resumes.
struct RefreshJoin<Stop, Waiter> {
    private struct Running {
        let stop: Stop
        var stopAsked = false
        var waiters: [Waiter] = []
    }

    private var running: [Int64: Running] = [:]

    /// What a caller asking for a refresh does.
    enum Start {
        /// Run it, stopping when `stop` fires.
        case run
        /// Wait for the answer of the one running (``wait(for:_:)``).
        case join
    }

    /// A refresh of `id` is asked for; `stop` is the signal its run would listen to.
    mutating func start(_ id: Int64, stop: Stop) -> Start {
        if running[id] != nil { return .join }
        running[id] = Running(stop: stop)
        return .run
    }

    /// Adds a waiter for the running refresh of `id`; `false` when none runs (the caller answers at once).
    mutating func wait(for id: Int64, _ waiter: Waiter) -> Bool {
        guard running[id] != nil else { return false }
        running[id]?.waiters.append(waiter)
        return true
    }

    /// Asks the refresh of `id` to stop: the signal to fire, the first time only.
    mutating func stop(_ id: Int64) -> Stop? {
        guard let current = running[id], !current.stopAsked else { return nil }
        running[id]?.stopAsked = true
        return current.stop
    }

    /// Asks every running refresh to stop.
    mutating func stopAll() -> [Stop] { running.keys.sorted().compactMap { stop($0) } }

    /// The refresh of `id` ended: the waiters to hand its answer to.
    mutating func finish(_ id: Int64) -> [Waiter] { running.removeValue(forKey: id)?.waiters ?? [] }

    func isRunning(_ id: Int64) -> Bool { running[id] != nil }
    var isIdle: Bool { running.isEmpty }
    func waiters(of id: Int64) -> Int { running[id]?.waiters.count ?? 0 }
}
