import FoundationEssentials
import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

@main
struct Entrypoint {
    /// Runs the daemon on the concurrency pool and parks the main thread for the process's life. An `async` main
    /// would hand the main thread to `dispatch_main`, which ends it with `pthread_exit`: that unwinds its stack through
    /// the executable's unwind tables, and 0.5–0.9 MiB of them stayed resident for nothing (docs/ARCHITECTURE.md,
    /// Memory). The daemon runs nothing on the main actor.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Before any other thread starts, so that every thread inherits it: the mask dispatch_main gives the main
        // thread, which keeps signals that no instruction raises pending for the dispatch sources that read them.
        blockAsynchronousSignals()
        Daemon.prepareSingleThreadedProcess()
        Task.detached {
            exit(await Daemon.main(arguments: arguments))
        }
        while true {
            pause()
        }
    }

    /// All signals but those a thread's own instruction raises (libdispatch's `_dispatch_sigmask`).
    private static func blockAsynchronousSignals() {
        var mask = sigset_t()
        sigfillset(&mask)
        for synchronous in [SIGILL, SIGTRAP, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, SIGPROF] {
            sigdelset(&mask, synchronous)
        }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }
}
