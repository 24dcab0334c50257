import FoundationEssentials
import Synchronization

/// Caps concurrent fetches, in total and per host, so that refreshing a thousand feeds on one host does not open
/// hundreds of connections to it (measured before: 749 established, 615 of 1,004 fetches failed as stalled).
///
/// A fetch waits for a slot (``FetchSlots`` holds the rules) and then runs on the given engine. Connections are
/// shared because every fetch runs on the engine's one multi handle: its connection cache keeps a finished fetch's
/// connection open for the next fetch to the same host, and its DNS cache saves the lookups. So with a per-host
/// limit of four, a refresh of one host's feeds keeps using about four connections. A fetch's slot goes to the next
/// one on the engine's thread, as soon as its last transfer ends (``FetchRequest/lastTransferEnded``). Use one
/// limiter for all refreshes.
/// What fetches a small resource into memory: ``HTTPEngine`` in the daemon; a test may hand out scripted answers, as
/// the download queue's tests do with a `TransferEngine`.
package protocol SmallBodyFetching: Sendable {
    func fetch(_ request: FetchRequest) async throws(TransferError) -> FetchResult
}

extension HTTPEngine: SmallBodyFetching {}

package final class FetchLimiter: Sendable {
    private struct State {
        var slots: FetchSlots
        var nextID = 0
        /// Fetches waiting for a slot; resumed with `true` when they get one, `false` when cancelled.
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Fetches that asked for a slot (so cancellation can tell "not yet asked" from "already running").
        var asked: Set<Int> = []
        /// Fetches cancelled before they asked.
        var cancelledEarly: Set<Int> = []
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
    /// - Throws: ``TransferError``: what ``HTTPEngine/fetch(_:)`` throws, and ``TransferError/Code/cancelled`` when
    ///   the task is cancelled while it waits.
    package func fetch(
        _ request: FetchRequest,
        on engine: any SmallBodyFetching
    ) async throws(TransferError) -> FetchResult {
        let host = Self.host(of: request.url)
        guard await acquire(host: host) else {
            throw .cancelled(request.url, reason: "the fetch was cancelled while it waited for a connection")
        }
        // Given back once, by whichever comes first: the engine's thread when the last transfer ends (the next fetch
        // then starts without waiting for this task to run again, which on a busy pool left the host's connections
        // idle: with 4 per host, a quarter of an all-304 refresh of 1,000 feeds), or the end of this call.
        let slot = Slot { [self] in release(host: host) }
        defer { slot.release() }
        var handed = request
        handed.lastTransferEnded = slot.release
        return try await engine.fetch(handed)
    }

    /// A slot held by one fetch; ``release()`` gives it back the first time only.
    private final class Slot: Sendable {
        private let released = Atomic(false)
        private let giveBack: @Sendable () -> Void

        init(_ giveBack: @escaping @Sendable () -> Void) { self.giveBack = giveBack }

        @Sendable func release() {
            if !released.exchange(true, ordering: .acquiringAndReleasing) { giveBack() }
        }
    }

    /// The host a URL counts against: its host name as ``URLText/host(of:)`` reads it (the whole URL when it has none).
    static func host(of url: String) -> String { URLText.host(of: url) ?? url }

    /// Waits for a slot; `false` when the task was cancelled first.
    private func acquire(host: String) async -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        defer { state.withLock { _ = $0.asked.remove(id) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now: Bool? = state.withLock { state in
                    state.asked.insert(id)
                    if state.cancelledEarly.remove(id) != nil { return false }
                    if state.slots.acquire(id: id, host: host) { return true }
                    state.waiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
                if let waiter = state.waiters.removeValue(forKey: id) {
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
        for waiter in started { waiter.resume(returning: true) }
    }
}
