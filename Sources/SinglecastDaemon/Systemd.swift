import CSystemd
import Dispatch
import FoundationEssentials
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager about the daemon's state through `sd_notify(3)`.
///
/// Without `NOTIFY_SOCKET` (started by hand) every call is a cheap no-op. A failed notification is logged and
/// never fatal: the daemon serves its clients whether or not systemd hears about it.
package final class SystemdNotifier: Sendable {
    private let logger: Logger
    private let lastStatus = Mutex<String?>(nil)

    package init(logger: Logger) {
        self.logger = logger
    }

    /// `READY=1` with a status line: the store is open and the socket listens.
    package func ready(status: String) {
        lastStatus.withLock { $0 = status }
        send("READY=1\nSTATUS=\(status)")
    }

    /// `STATUS=`, sent only when the text changed.
    package func status(_ text: String) {
        let changed = lastStatus.withLock { last in
            defer { last = text }
            return last != text
        }
        if changed { send("STATUS=\(text)", supersededByTheNext: true) }
    }

    /// `RELOADING=1` with the `MONOTONIC_USEC` timestamp systemd uses to match the reload to its request.
    package func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        send("RELOADING=1\nMONOTONIC_USEC=\(microseconds)\nSTATUS=Reloading configuration")
    }

    /// `STOPPING=1`: the daemon begins a clean shutdown.
    package func stopping(status: String) {
        send("STOPPING=1\nSTATUS=\(status)")
    }

    /// `WATCHDOG=1`: the daemon is alive and its store answers.
    package func watchdog() {
        send("WATCHDOG=1", supersededByTheNext: true)
    }

    /// Half the watchdog interval systemd asked for, or `nil` when the watchdog is off.
    package static func watchdogPingInterval() -> Duration? {
        var microseconds: UInt64 = 0
        // unset_environment = 0: only the main process reads it, and a reload must still see it.
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds / 2))
    }

    /// sd_notify blocks while the receiver's queue is full (10 datagrams by default: a busy service manager, a
    /// socket nobody reads). On the cooperative pool that wedged the daemon, and the SIGTERM handler's STOPPING=1
    /// kept the stop from ever starting; one serial queue sends instead, in order, and nobody waits for it.
    private let sender = DispatchQueue(label: "singlecast.sd-notify")
    /// Notifications handed to ``sender`` and not yet sent.
    private let waiting = Mutex(0)
    /// Past this many waiting, a status line or watchdog ping is dropped (the next one says the same, newer), so a
    /// socket nobody reads does not grow the backlog for as long as the daemon runs; state changes always queue.
    private static let backlog = 16

    private func send(_ state: String, supersededByTheNext: Bool = false) {
        let admitted = waiting.withLock { count in
            guard !supersededByTheNext || count < Self.backlog else { return false }
            count += 1
            return true
        }
        guard admitted else { return }
        sender.async { [self] in
            defer { waiting.withLock { $0 -= 1 } }
            let result = sd_notify(0, state)
            if result < 0 {
                logger.warning("sd_notify failed: \(String(cString: strerror(-result))); continuing")
            }
        }
    }
}

/// Sends `WATCHDOG=1` at half the interval systemd configured, but only while the store answers, so a wedged
/// daemon is restarted instead of pinging forever.
package struct WatchdogService: Service {
    let interval: Duration
    let notifier: SystemdNotifier
    let healthCheck: @Sendable () async throws -> Void
    let logger: Logger

    package func run() async throws {
        while true {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return  // cancelled: the daemon is stopping
            }
            do {
                try await healthCheck()
                notifier.watchdog()
            } catch is CancellationError {
                return
            } catch {
                logger.error("health check failed, withholding the watchdog ping: \(error)")
            }
        }
    }
}

/// Something that runs until it is done or cancelled, like swift-service-lifecycle's `Service`.
package protocol Service: Sendable {
    /// Returns or throws when the service has stopped.
    func run() async throws
}

/// The exclusive `flock(2)` on `<state dir>/singlecastd.lock` that keeps two daemons off one store.
///
/// The kernel drops the lock when the process dies, however it dies, so a crash never leaves a stale lock.
package struct InstanceLock: Sendable {
    private let fd: Int32

    package static func acquire(path: String) throws(DaemonStartError) -> InstanceLock {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DaemonStartError(message: "cannot open the lock file '\(path)': \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var holder = ""
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
                let pid = Int32(text.trimmingWhitespace())
            {
                holder = " (pid \(pid))"
            }
            close(fd)
            guard code == EWOULDBLOCK else {
                throw DaemonStartError(message: "cannot lock '\(path)': \(String(cString: strerror(code)))")
            }
            let directory = parentDirectory(of: path)
            throw DaemonStartError(
                message:
                    "another singlecastd\(holder) is already running with the state directory \(directory); stop it first ('systemctl --user stop singlecastd') or pass another --state-dir"
            )
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        return InstanceLock(fd: fd)
    }

    /// Releases the lock; the file stays, as removing it would race with a daemon starting right now.
    package func release() {
        _ = ftruncate(fd, 0)
        close(fd)
    }
}

/// A failure that stops the daemon from starting; the message says what to do.
package struct DaemonStartError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// Turns signals into an async sequence, installed before the daemon reports readiness.
package enum SignalStream {
    /// Ignores the default action of `signals` and delivers them through the returned stream.
    ///
    /// Returns once every handler is registered, so a signal sent after this call is never lost
    /// (swift-service-lifecycle waits for the registration handler the same way).
    package static func make(_ signals: [Int32]) async -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in signals {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
                source.setRegistrationHandler { registered.resume() }
                source.resume()
            }
            sources.append(source)
        }
        let retained = SourceBox(sources)
        continuation.onTermination = { _ in retained.cancelAll() }
        return stream
    }

    private final class SourceBox: @unchecked Sendable {
        // Only touched at creation and on termination.
        private let sources: [any DispatchSourceSignal]
        init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
        func cancelAll() {
            for source in sources { source.cancel() }
        }
    }
}
