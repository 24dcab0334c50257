import Synchronization

/// A one-shot signal that one task awaits and another fires, safe against every ordering of fire, wait and
/// cancellation.
///
/// Firing before the waiter arrives is remembered; cancelling the waiting task makes ``wait()`` throw
/// `CancellationError` and turns a later ``succeed()`` into a no-op that reports `false`, so a handed-over
/// resource (a lock, a readiness event) is never given to a task that already left.
package final class Completion: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, any Error>)
        case succeeded
        case failed(any Error)
        case consumed
    }

    private let state = Mutex<State>(.idle)

    package init() {}

    /// Suspends until ``succeed()`` or ``fail(_:)``; throws `CancellationError` when the task is cancelled first.
    package func wait() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    switch state {
                    case .idle:
                        state = .waiting(continuation)
                        return nil
                    case .succeeded:
                        state = .consumed
                        return .success(())
                    case .failed(let error):
                        state = .consumed
                        return .failure(error)
                    case .waiting, .consumed:
                        fatalError("Completion awaited twice")
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            fail(CancellationError())
        }
    }

    /// Fires the signal. Returns `false` when it had already completed (for instance because the waiter was
    /// cancelled), so the caller knows nobody took what it handed over.
    @discardableResult
    package func succeed() -> Bool { complete(.success(())) }

    /// Fires the signal with an error; returns `false` when it had already completed.
    @discardableResult
    package func fail(_ error: any Error) -> Bool { complete(.failure(error)) }

    private func complete(_ result: Result<Void, any Error>) -> Bool {
        let (delivered, continuation): (Bool, CheckedContinuation<Void, any Error>?) = state.withLock { state in
            switch state {
            case .idle:
                switch result {
                case .success: state = .succeeded
                case .failure(let error): state = .failed(error)
                }
                return (true, nil)
            case .waiting(let continuation):
                state = .consumed
                return (true, continuation)
            case .succeeded, .failed, .consumed:
                return (false, nil)
            }
        }
        continuation?.resume(with: result)
        return delivered
    }
}

/// A first-in first-out lock for async code, so that whole messages from several tasks reach a socket unbroken.
package final class AsyncLock: Sendable {
    private let permits = AsyncPermits(1)

    package init() {}

    /// Runs `body` while holding the lock.
    package func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await permits.acquire()
        defer { permits.release() }
        return try await body()
    }
}

/// A first-in first-out counting semaphore for async code: at most `count` holders at once.
package final class AsyncPermits: Sendable {
    private struct State {
        var free: Int
        var waiters: [Completion] = []
    }

    private let state: Mutex<State>

    package init(_ count: Int) {
        precondition(count > 0)
        state = Mutex(State(free: count))
    }

    /// Waits for a permit; throws `CancellationError` when the task is cancelled first.
    package func acquire() async throws {
        let waiter: Completion? = state.withLock { state in
            if state.free > 0 {
                state.free -= 1
                return nil
            }
            let waiter = Completion()
            state.waiters.append(waiter)
            return waiter
        }
        // On cancellation the waiter stays queued but refuses the hand-over, and release() moves on.
        try await waiter?.wait()
    }

    /// Gives a permit back, handing it to the longest waiter if there is one.
    package func release() {
        state.withLock { state in
            while !state.waiters.isEmpty {
                if state.waiters.removeFirst().succeed() { return }  // handed over
            }
            state.free += 1
        }
    }
}
