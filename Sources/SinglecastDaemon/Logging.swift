import FoundationEssentials
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Syslog severities the daemon logs at; the raw value is the syslog priority systemd's journal reads.
package enum LogLevel: Int, Comparable, CaseIterable, Sendable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    package var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    package init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    /// More severe levels compare as smaller, as syslog numbers them.
    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Writes log lines to stderr: `<N>message` when stderr is systemd's journal stream, so the journal records
/// the priority, and `2026-11-29T12:00:00Z warning: message` otherwise.
package final class Logger: Sendable {
    private let threshold: Atomic<Int>
    private let journal: Bool
    /// Serializes whole lines so concurrent writers never interleave.
    private let output = Mutex<Void>(())

    package init(level: LogLevel, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.threshold = Atomic(level.rawValue)
        self.journal = Self.stderrIsJournal(environment["JOURNAL_STREAM"])
    }

    package var level: LogLevel {
        get { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    package func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    package func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    package func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    package func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    package func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }

    package func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level.rawValue <= threshold.load(ordering: .relaxed) else { return }
        // One record per line: a message with newlines would otherwise become several journal entries.
        let text = message().replacingLineFeeds(with: " ⏎ ")
        let line =
            journal
            ? "<\(level.rawValue)>\(text)\n"
            : "\(WallClock.timestamp()) \(level.name): \(text)\n"
        output.withLock { _ in
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }  // nowhere to log to; never fail the caller
                bytes = bytes.dropFirst(written)
            }
        }
    }

    /// systemd sets `JOURNAL_STREAM=<dev>:<inode>` for the stream it connected; a child that inherited the variable
    /// but writes elsewhere must not emit `<N>` prefixes, so compare with stderr itself (sd-daemon(3)).
    private static func stderrIsJournal(_ value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
