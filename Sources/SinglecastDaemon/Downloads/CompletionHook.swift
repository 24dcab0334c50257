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
    static func runAndWait(_ program: String, for record: DownloadRecord, logger: Logger) {
        var environment = ProcessInfo.processInfo.environment
        environment["SINGLECAST_FILE"] = record.path
        environment["SINGLECAST_URL"] = record.url
        environment["SINGLECAST_FINAL_URL"] = record.finalURL ?? record.url
        environment["SINGLECAST_ID"] = String(record.id)
        environment["SINGLECAST_BYTES"] = String(record.bytesDone)
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

/// Runs `on_complete` programs on a small, fixed pool of threads: a burst of completions queues its hooks
/// instead of starting a thread (and a process) for each one at once.
///
/// A hook is recorded as pending in the store with its download's completion; the worker takes that record just
/// before it starts the program. So a crash before then runs the hook after the restart (``resume(_:)``), and no
/// hook ever runs twice: at most once per completed download.
package final class HookRunner: Sendable {
    private struct Job: Sendable {
        var program: String
        var record: DownloadRecord
    }

    private let store: Store
    private let logger: Logger
    private let workers: Int
    /// Hooks waiting for a worker, and whether the workers were started (on the first hook: a daemon without
    /// `on_complete` never starts them).
    private let state = Mutex<(jobs: [Job], started: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)

    package init(store: Store, logger: Logger, workers: Int = 2) {
        self.store = store
        self.logger = logger
        self.workers = max(1, workers)
    }

    /// Queues `program` for a completed download whose hook the store holds as pending.
    package func run(_ program: String, for record: DownloadRecord) {
        let start = state.withLock { state in
            state.jobs.append(Job(program: program, record: record))
            defer { state.started = true }
            return !state.started
        }
        if start {
            for number in 1...workers { startThread(name: "singlecast-hook\(number)") { [self] in work() } }
        }
        ready.signal()
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

    private func work() {
        while true {
            ready.wait()
            guard let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { continue }
            guard take(job.record.id) else { continue }
            CompletionHook.runAndWait(job.program, for: job.record, logger: logger)
        }
    }

    /// Removes the pending record before the program starts; blocks this worker thread (never the cooperative
    /// pool) until the store has answered.
    private func take(_ id: Int64) -> Bool {
        let answer = Mutex<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Task { [store, logger] in
            do {
                let taken = try await store.takePendingHook(id)
                answer.withLock { $0 = taken }
            } catch {
                logger.error("cannot take the pending hook of download \(id): \(error)")
            }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }
    }
}
