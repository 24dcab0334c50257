import Synchronization

/// The stop of one running refresh (an unsubscribe, the refresher's end): it cancels the task the refresh runs in.
///
/// A refresh runs in a task of its own (a child of the refresher's task group, or of the group a client's `refresh`
/// makes), so cancelling that task stops exactly that refresh. Before, each refresh raced its work against a stop
/// signal in a task group of its own: a group, two child tasks and a waiting continuation per feed, about a fifth of
/// the cooperative pool's CPU in a refresh of 1,000 unchanged feeds (docs/ARCHITECTURE.md, Refreshing many feeds).
/// A stop that comes before the run begins cancels the task as it begins; one that comes after the run ended does
/// nothing.
final class RefreshStop: Sendable {
    /// The task a refresh runs in, cancelled only under the lock while the run lasts, so never once it has ended.
    private struct RunningTask: @unchecked Sendable {
        let task: UnsafeCurrentTask
    }

    private enum State {
        case idle
        case running(RunningTask)
        case stopped
        case ended
    }

    private let state = Mutex(State.idle)

    init() {}

    /// Runs `body` in the current task, which ``stop()`` cancels while `body` runs.
    ///
    /// - Returns: What `body` returned, and whether the refresh was stopped.
    /// - Important: The current task must be the refresh's own and end with it: the cancellation stays with it.
    func run<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async -> T
    ) async -> (result: T, stopped: Bool) {
        withUnsafeCurrentTask { task in
            guard let task else { return }  // async code always runs in a task
            state.withLock { state in
                switch state {
                case .idle: state = .running(RunningTask(task: task))
                case .stopped: task.cancel()
                case .running, .ended: fatalError("a refresh's stop was run twice")
                }
            }
        }
        let result = await body()
        let stopped = state.withLock { state in
            defer { state = .ended }
            if case .stopped = state { return true }
            return false
        }
        return (result, stopped)
    }

    /// Stops the refresh: cancels its task while it runs, or as it begins.
    func stop() {
        state.withLock { state in
            switch state {
            case .idle:
                state = .stopped
            case .running(let running):
                running.task.cancel()
                state = .stopped
            case .stopped, .ended:
                break
            }
        }
    }
}
