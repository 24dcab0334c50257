import FoundationEssentials
import SinglecastStore

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
    package static func run(_ program: String, for record: DownloadRecord, logger: Logger) {
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
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, nil, arguments, variables)
        guard result == 0 else {
            logger.warning("on_complete program \(program) could not be started: \(String(cString: strerror(result)))")
            return
        }
        let (id, child) = (record.id, pid)
        // Reaped on a thread of its own: the hook may run for a long time, and its exit status is only logged.
        startThread(name: "singlecast-hook") {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            let exited = status & 0x7f == 0
            let code = (status >> 8) & 0xff
            if !exited || code != 0 {
                logger.warning(
                    "on_complete program \(program) for download \(id) "
                        + (exited ? "exited with status \(code)" : "was killed by signal \(status & 0x7f)")
                )
            } else {
                logger.debug("on_complete program \(program) for download \(id) finished")
            }
        }
    }
}
