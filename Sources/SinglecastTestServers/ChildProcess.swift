import CPosix
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process in its own process group, terminated (group and all) and reaped exactly once: by ``stop()`` or
/// when the value is released.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process` because the child must start with an empty signal
/// mask: test runners call from threads that block most signals, a spawned child inherits that mask, and an nginx
/// started that way never sees the SIGTERM that should stop it.
final class ChildProcess: Sendable {
    private let pid: pid_t
    private let reaped = Mutex(false)

    /// Starts `executable` with `arguments`. `standardInput`/`standardOutput`/`standardError` are descriptors for
    /// the child's 0, 1 and 2 (the caller keeps and closes its own copies); by default the child inherits ours, and
    /// our environment unless `environment` is given.
    init(
        _ executable: String,
        _ arguments: [String],
        standardInput: Int32? = nil,
        standardOutput: Int32? = nil,
        standardError: Int32? = nil,
        environment: [String: String]? = nil
    ) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        // Ignored signals stay ignored across exec; give the usual ones their default action back.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        )
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput { posix_spawn_file_actions_adddup2(&actions, standardInput, 0) }
        if let standardOutput { posix_spawn_file_actions_adddup2(&actions, standardOutput, 1) }
        if let standardError { posix_spawn_file_actions_adddup2(&actions, standardError, 2) }
        // Nothing else of the test process's: Foundation's Process learns that a child (a singlecastd) exited when the
        // last copy of a socket it gives that child closes, and a server spawned here while another test started a
        // daemon held such a copy for its whole life, so that daemon "ran" long after its exit and every stop of it
        // timed out. The socket is not close-on-exec (the child needs it), so only closing here keeps it out.
        cposix_spawn_close_from(&actions, 3)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let result: Int32
        if var envp {
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, &envp)
        } else {
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard result == 0 else {
            throw TestServerError(
                "starting \(executable) failed: \(String(cString: strerror(result))); is it installed?"
            )
        }
        self.pid = pid
    }

    deinit { stop() }

    /// Whether the child still runs (it has not exited, or it has exited but nobody reaped it yet).
    var isRunning: Bool {
        reaped.withLock { reaped in
            guard !reaped else { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                return false
            }
            return true
        }
    }

    /// Sends `signal` to the child alone, unless it was reaped (SIGSTOP and SIGCONT, to freeze a peer for a while).
    func send(_ signal: Int32) {
        reaped.withLock { reaped in
            if !reaped { kill(pid, signal) }
        }
    }

    /// Sends `signal` to the child's process group (SIGKILL after 5 s) and reaps the child.
    func stop(signal: Int32 = SIGTERM) {
        reaped.withLock { reaped in
            guard !reaped else { return }
            reaped = true
            kill(-pid, signal)
            var status: Int32 = 0
            for _ in 0..<500 {
                if waitpid(pid, &status, WNOHANG) == pid { return }
                usleep(10_000)
            }
            kill(-pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }
}

/// Binds an ephemeral loopback port, closes it and returns its number, for servers that cannot bind port 0 and
/// report it (nginx). Another process may take it meanwhile, so callers retry on "address in use".
package func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestServerError("socket() failed: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw TestServerError("binding 127.0.0.1:0 failed: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func acceptsConnections(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
