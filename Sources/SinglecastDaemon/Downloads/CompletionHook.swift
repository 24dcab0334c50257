import Dispatch
import FoundationEssentials
import SinglecastStore
import Synchronization

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// Runs the user's `on_complete` program after a download completed.
///
/// The program gets the file as its only argument and the details in `SINGLECAST_*` environment variables;
/// no shell is involved, so nothing from a URL or a file name is ever interpreted as a command. Its outcome
/// is logged and never affects the download or the daemon.
package enum CompletionHook {
    /// Starts `program` for a completed download and waits for it to exit; blocks the calling thread.
    ///
    /// - Parameters:
    ///   - started: Told the program's process id once it runs.
    ///   - exiting: Told it again once the program has exited but before it is reaped, so that a stop may signal
    ///     the process id until then and never a stranger's that reused it.
    static func runAndWait(
        _ program: String,
        for record: DownloadRecord,
        episode: (episode: EpisodeRecord, podcast: String)? = nil,
        logger: Logger,
        started: (pid_t) -> Void = { _ in },
        exiting: (pid_t) -> Void = { _ in }
    ) {
        var environment = ProcessInfo.processInfo.environment
        environment["SINGLECAST_FILE"] = record.path
        environment["SINGLECAST_URL"] = record.url
        environment["SINGLECAST_FINAL_URL"] = record.finalURL ?? record.url
        environment["SINGLECAST_ID"] = String(record.id)
        environment["SINGLECAST_BYTES"] = String(record.bytesDone)
        // What a hook that files episodes or tags them needs; absent for a download by URL.
        if let (episode, podcast) = episode {
            environment["SINGLECAST_PODCAST"] = podcast
            environment["SINGLECAST_PODCAST_ID"] = String(episode.podcastID)
            environment["SINGLECAST_EPISODE"] = episode.title
            environment["SINGLECAST_EPISODE_ID"] = String(episode.id)
            environment["SINGLECAST_EPISODE_GUID"] = episode.guid ?? episode.identity
            environment["SINGLECAST_EPISODE_DATE"] = UTCTimestamp.string(
                milliseconds: episode.publishedAt ?? episode.firstSeenAt
            )
        }
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup(record.path), nil]
        let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in arguments { free(pointer) }
            for pointer in variables { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The hook must not read the daemon's stdin; its output goes to the daemon's log streams.
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // The daemon ignores SIGTERM, SIGINT, SIGHUP (Dispatch handles them) and SIGPIPE, and an ignored signal stays
        // ignored across exec: the program starts with every signal at its default and none blocked, so a stop can
        // end it and a pipeline in it ends on SIGPIPE.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        var noSignal = sigset_t()
        sigemptyset(&noSignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, arguments, variables)
        guard result == 0 else {
            logger.warning("on_complete program \(program) could not be started: \(String(cString: strerror(result)))")
            return
        }
        started(pid)
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        exiting(pid)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        if !exited || code != 0 {
            logger.warning(
                "on_complete program \(program) for download \(record.id) "
                    + (exited ? "exited with status \(code)" : "was killed by signal \(status & 0x7f)")
            )
        } else {
            logger.debug("on_complete program \(program) for download \(record.id) finished")
        }
    }
}

/// Runs `on_complete` programs, a few at a time: a service of the daemon's task group.
///
/// A burst of completions queues its hooks instead of starting a process for each one at once. Each program runs on
/// a thread of its own (it blocks in `waitpid`), never on the cooperative pool. A hook is recorded as pending in the
/// store with its download's completion; the runner takes that record just before it starts the program. So a crash
/// or a stop before then runs the hook after the restart (``resume(_:completed:program:)``), and no hook ever runs
/// twice: at most once per completed download.
///
/// A stop (``shutdown()``) starts no further hook (they stay pending for the next start) and waits for the running
/// ones, at most ``stopTimeout`` (`hook_stop_timeout`): a program still running then (one that ignores the stop's
/// SIGTERM) is killed, and that is logged, so that no hook outlives the daemon unbounded.
package final class HookRunner: Service {
    private struct Job: Sendable {
        var program: String
        var record: DownloadRecord
    }

    private let store: Store
    private let logger: Logger
    private let workers: Int
    package let stopTimeout: Duration
    private let jobs: AsyncStream<Job>
    private let submit: AsyncStream<Job>.Continuation
    /// Programs running, who waits for a free worker, and who waits for the last one to end (a stop).
    private struct Workers {
        var running = 0
        var stopping = false
        var slot: CheckedContinuation<Void, Never>?
        var idle: Once?
        /// The programs not yet reaped, which a stop past its bound kills.
        var pids: Set<pid_t> = []
    }
    private let workersState = Mutex(Workers())

    package init(store: Store, logger: Logger, workers: Int = 2, stopTimeout: Duration = .seconds(10)) {
        self.store = store
        self.logger = logger
        self.workers = max(1, workers)
        self.stopTimeout = stopTimeout
        (jobs, submit) = AsyncStream.makeStream(of: Job.self)
    }

    /// Queues `program` for a completed download whose hook the store holds as pending.
    package func run(_ program: String, for record: DownloadRecord) {
        submit.yield(Job(program: program, record: record))
    }

    /// Queues the hooks a crash left pending for completed downloads (`pending` holds every pending id); drops the
    /// others (a download cancelled while it completed, or no program configured any more).
    package func resume(_ pending: [Int64], completed: [Int64: DownloadRecord], program: String?) async {
        for id in pending {
            if let program, let record = completed[id] {
                logger.info("running the on_complete program of download \(id), which a stop interrupted")
                run(program, for: record)
            } else {
                _ = try? await store.takePendingHook(id)
            }
        }
    }

    /// Runs hooks as they come until ``shutdown()`` (or its task is cancelled), then waits for the running ones, at
    /// most ``stopTimeout``, and kills those still running.
    ///
    /// The programs' threads report their end through continuations, not child tasks: a stop's wait must hold even
    /// when the daemon's task group is cancelled, and must not outlast its bound, which a child task blocked on a
    /// program would.
    package func run() async {
        for await job in jobs {
            await freeWorker()
            if workersState.withLock({ $0.stopping }) { continue }  // left pending in the store, for the next start
            do {
                // Taken before the program starts: it runs at most once, even if the daemon dies while it runs.
                guard try await store.takePendingHook(job.record.id) else { continue }
            } catch {
                logger.error("cannot take the pending hook of download \(job.record.id): \(error)")
                continue
            }
            let episode: (episode: EpisodeRecord, podcast: String)?
            do {
                episode = try await store.episodeOfDownload(job.record.id)
            } catch {
                logger.warning(
                    "the on_complete program of download \(job.record.id) runs without its episode: \(error)"
                )
                episode = nil
            }
            workersState.withLock { $0.running += 1 }
            startThread(name: "singlecast-hook") { [self] in
                CompletionHook.runAndWait(
                    job.program,
                    for: job.record,
                    episode: episode,
                    logger: logger,
                    started: { pid in workersState.withLock { _ = $0.pids.insert(pid) } },
                    exiting: { pid in workersState.withLock { _ = $0.pids.remove(pid) } }
                )
                ended()
            }
        }
        let running = workersState.withLock { $0.running }
        guard running > 0 else { return }
        logger.info("waiting for \(ListSummary.count(running, "on_complete program")) to end")
        let allEnded = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once(continuation)
            let idle = workersState.withLock { state in
                if state.running == 0 { return true }
                state.idle = once
                return false
            }
            if idle { once.resume(true) }
            let (seconds, attoseconds) = stopTimeout.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { once.resume(false) }
        }
        if !allEnded {
            // Under the lock: a program that exited meanwhile left the set before it was reaped.
            let killed = workersState.withLock { state in
                for pid in state.pids { kill(pid, SIGKILL) }
                return state.pids.count
            }
            logger.warning(
                "killed \(ListSummary.count(killed, "on_complete program")) still running after \(stopTimeout)"
            )
        }
    }

    /// Stops taking hooks; ``run()`` returns once the running ones ended or were killed after ``stopTimeout``.
    package func shutdown() {
        let waiting = workersState.withLock { state in
            state.stopping = true
            defer { state.slot = nil }
            return state.slot
        }
        submit.finish()
        waiting?.resume()  // no worker is needed any more
    }

    /// Returns when fewer than ``workers`` programs run.
    private func freeWorker() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = workersState.withLock { state in
                if state.running < workers || state.stopping { return true }
                state.slot = continuation
                return false
            }
            if free { continuation.resume() }
        }
    }

    /// A program ended (on its thread): its worker is free, and a stop waiting for the last one may go on.
    private func ended() {
        let (slot, idle) = workersState.withLock { state in
            state.running -= 1
            defer { state.slot = nil }
            return (state.slot, state.running == 0 ? state.idle : nil)
        }
        slot?.resume()
        idle?.resume(true)
    }

    /// A continuation that two racing parties (the last program, a timer) may resume: the first one does.
    private final class Once: Sendable {
        private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

        init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = Mutex(continuation) }

        func resume(_ value: Bool) {
            continuation.withLock { $0.take() }?.resume(returning: value)
        }
    }
}
