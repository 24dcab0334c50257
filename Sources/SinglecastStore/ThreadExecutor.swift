import Dispatch
import SinglecastSupport
import Synchronization

/// A serial executor that runs its jobs one at a time on a thread of its own.
///
/// SQLite blocks its caller: a commit with `synchronous = FULL` waits for `fsync`. On Swift's cooperative pool,
/// which has one thread per core, two commits stalled every other task of the daemon on a two-core machine,
/// so the ``Store`` actor runs here instead. The thread ends once the executor is released.
final class ThreadExecutor: SerialExecutor {
    /// The jobs waiting, shared with the thread; the thread does not keep the executor itself alive.
    private final class Jobs: Sendable {
        private struct State {
            var waiting: [UnownedJob] = []
            var stopping = false
        }

        private let state = Mutex(State())
        /// Counts posts, not jobs: the thread takes every waiting job per wake-up and skips empty wake-ups.
        private let wakeup = DispatchSemaphore(value: 0)

        func append(_ job: UnownedJob) {
            state.withLock { $0.waiting.append(job) }
            wakeup.signal()
        }

        func stop() {
            state.withLock { $0.stopping = true }
            wakeup.signal()
        }

        /// Runs jobs as they come until ``stop()`` was called and none are left.
        func run(on executor: UnownedSerialExecutor) {
            while true {
                wakeup.wait()
                let (jobs, stopping) = state.withLock { state in
                    defer { state.waiting.removeAll(keepingCapacity: true) }
                    return (state.waiting, state.stopping)
                }
                for job in jobs { job.runSynchronously(on: executor) }
                if stopping && jobs.isEmpty { return }
                if stopping { wakeup.signal() }  // look once more for jobs the last ones enqueued
            }
        }
    }

    private let jobs = Jobs()

    /// Starts the thread.
    ///
    /// - Parameter name: The thread's name as `ps -L` and `top -H` show it; at most 15 bytes are kept.
    init(name: String) {
        let executor = UnownedSerialExecutor(ordinary: self)
        startThread(name: name) { [jobs] in jobs.run(on: executor) }
    }

    deinit { jobs.stop() }

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.append(UnownedJob(job))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
