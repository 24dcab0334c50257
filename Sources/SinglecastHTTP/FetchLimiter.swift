import FoundationEssentials
import Synchronization

/// What fetches a small resource into memory: ``HTTPEngine`` in the daemon; a test may hand out scripted answers, as
/// the download queue's tests do with a `TransferEngine`.
package protocol SmallBodyFetching: Sendable {
    func fetch(_ request: FetchRequest) async throws(TransferError) -> FetchResult
}

extension HTTPEngine: SmallBodyFetching {}

/// Caps concurrent fetches, in total and per host, so that refreshing a thousand feeds on one host does not open
/// hundreds of connections to it (measured before: 749 established, 615 of 1,004 fetches failed as stalled).
///
/// A fetch waits for a slot (``FetchSlots`` holds the rules; on an ``HTTPEngine``, inside the engine, which starts it
/// on the thread that frees one) and then runs on the given engine. Connections are shared because every fetch runs
/// on the engine's one multi handle: its connection cache keeps a finished fetch's connection open for the next
/// fetch to the same host, and its DNS cache saves the lookups. So with a per-host limit of four, a refresh of one
/// host's feeds keeps using about four connections. A fetch's slot goes to the next one on the engine's thread, as
/// soon as its last transfer ends (``FetchRequest/lastTransferEnded``). Use one limiter for all refreshes.
package final class FetchLimiter: Sendable {
    private struct State {
        var slots: FetchSlots
        var nextID = 0
        /// Fetches waiting for a slot, each started by ``Waiter/start()`` when it gets one.
        var waiters: [Int: Waiter] = [:]
        /// Tasks that asked for a slot (so cancellation can tell "not yet asked" from "already running").
        var asked: Set<Int> = []
        /// Tasks cancelled before they asked.
        var cancelledEarly: Set<Int> = []
    }

    /// What a slot starts: a task waiting for it, or a transfer the engine holds until it is admitted.
    private enum Waiter {
        case task(CheckedContinuation<Bool, Never>)
        case transfer(@Sendable () -> Void)

        func start() {
            switch self {
            case .task(let continuation): continuation.resume(returning: true)
            case .transfer(let start): start()
            }
        }
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - limit: The most fetches running at once.
    ///   - perHostLimit: The most fetches running at once to one host (at most `limit`).
    package init(limit: Int, perHostLimit: Int) {
        state = Mutex(State(slots: FetchSlots(limit: limit, perHostLimit: perHostLimit)))
    }

    /// Fetches `request` on `engine` once a slot for its host is free.
    ///
    /// On an ``HTTPEngine`` the fetch waits in the engine, which starts its first transfer on the thread that freed
    /// the slot (``FetchAdmission``); the slot goes back on the engine's thread when the last transfer ends
    /// (``FetchRequest/lastTransferEnded``). From one 304 to the next request on a connection, nothing then waits for
    /// the cooperative pool: with 4 fetches per host, that wait (twice, the finished fetch's task and the next one's)
    /// was what an all-304 refresh of 1,000 feeds on one host was bound by. Another engine (a test's) gets the slot
    /// first, in its task.
    ///
    /// - Throws: ``TransferError``: what ``HTTPEngine/fetch(_:)`` throws, and ``TransferError/Code/cancelled``
    ///   when the task is cancelled while it waits.
    package func fetch(
        _ request: FetchRequest,
        on engine: any SmallBodyFetching
    ) async throws(TransferError) -> FetchResult {
        let host = Self.host(of: request.url)
        let slot = Slot { [self] in release(host: host) }
        // Given back when the last transfer ends, or here, whichever is first (a refused transfer, a redirect that
        // cannot be followed, a cancellation while it waited).
        defer { slot.release() }
        var handed = request
        handed.lastTransferEnded = slot.release
        if let engine = engine as? HTTPEngine {
            handed.admission = FetchAdmission(limiter: self, host: host, ticket: newTicket(), slot: slot)
            return try await engine.fetch(handed)
        }
        guard await acquire(host: host) else {
            throw .cancelled(request.url, reason: Self.cancelledInLine)
        }
        _ = slot.hold()
        return try await engine.fetch(handed)
    }

    /// Why a fetch cancelled while it waited for its slot ended, in the engine or here.
    static let cancelledInLine = "the fetch was cancelled while it waited for a connection"

    /// The host a URL counts against: its host name as ``URLText/host(of:)`` reads it (the whole URL when it has none).
    static func host(of url: String) -> String { URLText.host(of: url) ?? url }

    private func newTicket() -> Int {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Asks for a slot for `ticket`: `true` when it is granted now; else `start` runs once it is, on the thread that
    /// gives a slot back.
    fileprivate func admit(_ ticket: Int, host: String, start: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            if state.slots.acquire(id: ticket, host: host) { return true }
            state.waiters[ticket] = .transfer(start)
            return false
        }
    }

    /// Takes `ticket` out of line if it still waits; one granted already holds a slot, which its fetch gives back.
    fileprivate func withdraw(_ ticket: Int) {
        state.withLock { state in
            if state.waiters.removeValue(forKey: ticket) != nil { _ = state.slots.cancel(id: ticket) }
        }
    }

    /// Waits for a slot; `false` when the task was cancelled first.
    private func acquire(host: String) async -> Bool {
        let id = newTicket()
        defer { state.withLock { _ = $0.asked.remove(id) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now: Bool? = state.withLock { state in
                    state.asked.insert(id)
                    if state.cancelledEarly.remove(id) != nil { return false }
                    if state.slots.acquire(id: id, host: host) { return true }
                    state.waiters[id] = .task(continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
                if case .task(let waiter)? = state.waiters[id] {
                    state.waiters[id] = nil
                    _ = state.slots.cancel(id: id)
                    return waiter
                }
                if !state.asked.contains(id) { state.cancelledEarly.insert(id) }
                return nil  // already holds a slot: the fetch itself notices the cancellation
            }
            waiter?.resume(returning: false)
        }
    }

    private func release(host: String) {
        let started = state.withLock { state in
            state.slots.release(host: host).compactMap { state.waiters.removeValue(forKey: $0) }
        }
        for waiter in started { waiter.start() }
    }

    /// The slot of one fetch: held once granted, given back once.
    fileprivate final class Slot: Sendable {
        /// 0: not granted yet; 1: held; 2: the fetch is over (a slot granted after that goes back at once).
        private let state = Atomic(0)
        private let giveBack: @Sendable () -> Void

        init(_ giveBack: @escaping @Sendable () -> Void) { self.giveBack = giveBack }

        /// The slot was granted: `true` when the fetch still wants it, else it goes back at once.
        func hold() -> Bool {
            if state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged {
                return true
            }
            giveBack()
            return false
        }

        /// The fetch is over, or its last transfer is: the slot goes back if it is held, the first time only.
        @Sendable func release() {
            if state.exchange(2, ordering: .acquiringAndReleasing) == 1 { giveBack() }
        }
    }
}

/// A fetch's place in its limiter's line, carried by its first transfer (``TransferRequest/admission``): the engine
/// keeps the transfer until the limiter grants the slot, then starts it on the thread that freed it.
struct FetchAdmission: Sendable {
    fileprivate let limiter: FetchLimiter
    fileprivate let host: String
    fileprivate let ticket: Int
    fileprivate let slot: FetchLimiter.Slot

    /// Asks for the slot: `true` when it is granted now (start the transfer); else `start` runs once it is. A slot
    /// granted to a fetch already over goes back at once, and nothing starts.
    func request(start: @escaping @Sendable () -> Void) -> Bool {
        let slot = slot
        let now = limiter.admit(ticket, host: host) { if slot.hold() { start() } }
        return now && slot.hold()
    }

    /// Leaves the line: the transfer was cancelled while it waited.
    func withdraw() { limiter.withdraw(ticket) }
}
