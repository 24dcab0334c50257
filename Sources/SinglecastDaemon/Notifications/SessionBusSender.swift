import CSystemd
import Dispatch
import FoundationEssentials
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Shows ``DesktopNotification``s through `org.freedesktop.Notifications` on the user's session bus.
///
/// An sd-bus call blocks until the notification server answers, so the bus connection lives on a thread of its
/// own and ``send(_:)`` only queues: no daemon thread ever waits for D-Bus. Without a session bus or a
/// notification server, the first failure is reported and later ones of the same kind are not, so a desktop-less
/// machine does not fill the journal.
package final class SessionBusSender: Sendable {
    private struct State {
        var pending: [DesktopNotification] = []
        var stopped = false
    }

    /// Notifications waiting for the thread; beyond this the oldest are dropped.
    static let pendingLimit = 64
    /// How long one call may wait for the notification server.
    static let callTimeoutMicroseconds: UInt64 = 5_000_000

    private let address: String?
    private let report: @Sendable (String) -> Void
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - environment: `DBUS_SESSION_BUS_ADDRESS` is used when set, else `unix:path=$XDG_RUNTIME_DIR/bus`
    ///     (what sd-bus itself would pick).
    ///   - report: where failures go, once per kind of failure.
    package init(environment: [String: String], report: @escaping @Sendable (String) -> Void) {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            self.address = address
        } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            self.address = "unix:path=\(runtime)/bus"
        } else {
            self.address = nil
        }
        self.report = report
        startThread(name: "sc-notify") { [self] in self.serve() }
    }

    /// Queues `notification` for the bus thread; never blocks.
    package func send(_ notification: DesktopNotification) {
        state.withLock { state in
            state.pending.append(notification)
            if state.pending.count > Self.pendingLimit { state.pending.removeFirst() }
        }
        wakeup.signal()
    }

    /// Lets the thread end after the notifications already queued; returns at once, so that a stop never
    /// waits for the notification server.
    package func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
    }

    private func serve() {
        var connection: OpaquePointer?
        var reported: Set<String> = []
        func failed(_ kind: String, _ message: String) {
            if reported.insert(kind).inserted { report(message) }
        }
        defer {
            if let connection { sd_bus_flush_close_unref(connection) }
        }
        while true {
            wakeup.wait()
            let (batch, stopped) = state.withLock { state in
                defer { state.pending.removeAll() }
                return (state.pending, state.stopped)
            }
            for notification in batch {
                if connection == nil {
                    switch open() {
                    case .success(let bus): connection = bus
                    case .failure(let problem):
                        failed("bus", "desktop notifications are not shown: \(problem)")
                        continue
                    }
                }
                if let problem = call(connection, notification) {
                    failed(problem.kind, "a desktop notification was not shown: \(problem.message)")
                    if problem.connectionLost {
                        sd_bus_flush_close_unref(connection)
                        connection = nil
                    }
                } else {
                    reported.removeAll()
                }
            }
            if stopped { return }
        }
    }

    private struct Problem: Error {
        var kind: String
        var message: String
        var connectionLost = false
    }

    private func open() -> Result<OpaquePointer, Problem> {
        guard let address else {
            return .failure(
                Problem(
                    kind: "bus",
                    message: "no session bus (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)"
                )
            )
        }
        var bus: OpaquePointer?
        var result = sd_bus_new(&bus)
        if result >= 0 { result = sd_bus_set_address(bus, address) }
        if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
        if result >= 0 { result = sd_bus_start(bus) }
        guard result >= 0, let bus else {
            if let bus { sd_bus_flush_close_unref(bus) }
            return .failure(
                Problem(
                    kind: "bus",
                    message: "cannot connect to the session bus \(address): \(String(cString: strerror(-result)))"
                )
            )
        }
        return .success(bus)
    }

    private func call(_ bus: OpaquePointer?, _ notification: DesktopNotification) -> Problem? {
        var errorName: UnsafeMutablePointer<CChar>?
        var errorMessage: UnsafeMutablePointer<CChar>?
        defer {
            free(errorName)
            free(errorMessage)
        }
        let result = csystemd_bus_notify(
            bus,
            "singlecast",
            notification.icon,
            notification.summary,
            notification.body,
            -1,
            Self.callTimeoutMicroseconds,
            &errorName,
            &errorMessage
        )
        guard result < 0 else { return nil }
        if let errorName {
            let name = String(cString: errorName)
            let detail = errorMessage.map { String(cString: $0) } ?? ""
            return Problem(kind: name, message: "\(name)\(detail.isEmpty ? "" : ": \(detail)")")
        }
        let code = Int32(-result)
        return Problem(
            kind: "errno \(code)",
            message: String(cString: strerror(code)),
            connectionLost: [ECONNRESET, ENOTCONN, EPIPE, ESHUTDOWN].contains(code)
        )
    }
}
