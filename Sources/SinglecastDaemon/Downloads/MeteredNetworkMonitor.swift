import CPosix
import CSystemd
import FoundationEssentials
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// `metered = pause`: follows NetworkManager's `Metered` property on the system bus and tells the download queue.
///
/// It asks, then listens for `PropertiesChanged` (and for NetworkManager leaving or joining the bus); a question left
/// unanswered past sd-bus's time-out is asked again, after 1 s doubling up to a minute. The bus connection's
/// descriptor and its timer wait in the daemon's ``Reactor``, so an idle daemon spends nothing on them. Without a
/// system bus at start-up, or without NetworkManager on it, the network counts as not metered, and that is logged
/// once. A connection that fails is made again, and meanwhile NetworkManager's last answer holds: a metered network's
/// pauses are never lifted because the bus went away. While the bus's socket does not exist, the watch waits for it
/// to appear (``PathAppearanceWatch``) and spends nothing meanwhile; a socket that is there but refuses, or an address
/// that is not a path, is tried again after 1 s, doubling up to a minute.
package struct MeteredNetworkMonitor: Service {
    package var reactor: Reactor
    /// `DBUS_SYSTEM_BUS_ADDRESS` when set (tests point it at a private bus), else the system bus's socket.
    package var address: String
    /// The socket file of ``address``, when it names one: what to wait for while the bus is absent.
    var socketPath: String? { Self.socketPath(ofBusAddress: address) }
    package var logger: Logger
    /// Receives what is known of the network.
    package var report: @Sendable (MeteredNews) async -> Void

    /// How long NetworkManager may take to answer.
    static let answerTimeoutMicroseconds: UInt64 = 10_000_000
    /// The wait before connecting again, doubled after each failure up to ``longestRetryDelay``.
    static let firstRetryDelay = Duration.seconds(1)
    static let longestRetryDelay = Duration.seconds(60)

    package init(
        reactor: Reactor,
        environment: [String: String],
        logger: Logger,
        report: @escaping @Sendable (MeteredNews) async -> Void
    ) {
        self.reactor = reactor
        let address = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        self.address = address.isEmpty ? "unix:path=/run/dbus/system_bus_socket" : address
        self.logger = logger
        self.report = report
    }

    /// NM_METERED_YES (1) and NM_METERED_GUESS_YES (3) are metered; UNKNOWN (0), NO (2) and GUESS_NO (4) are not.
    package static func isMetered(_ value: UInt32) -> Bool { value == 1 || value == 3 }

    /// Errors that mean NetworkManager is not on the bus at all (rather than slow, or failing): nothing is metered.
    static func meansAbsent(_ errorName: String) -> Bool {
        errorName == "org.freedesktop.DBus.Error.ServiceUnknown"
            || errorName == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }

    /// The file of a `unix:path=` bus address (D-Bus escapes bytes as `%XX` in values), or `nil` for any other
    /// transport, for several addresses (sd-bus tries them in turn), and for a malformed one.
    static func socketPath(ofBusAddress address: String) -> String? {
        guard !address.contains(";"), address.hasPrefix("unix:") else { return nil }
        for pair in address.dropFirst("unix:".count).split(separator: ",") {
            guard pair.hasPrefix("path=") else { continue }
            var bytes: [UInt8] = []
            var rest = pair.utf8.dropFirst("path=".count)[...]
            while let byte = rest.popFirst() {
                guard byte == UInt8(ascii: "%") else {
                    bytes.append(byte)
                    continue
                }
                guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                rest = rest.dropFirst(2)
            }
            guard !bytes.isEmpty, !bytes.contains(0) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        return nil
    }

    /// The answers told so far, so that each is told once.
    private final class Teller {
        var last: MeteredNews?
    }

    /// Returns when the task is cancelled (the daemon stops); never throws, so that a stop is clean.
    package func run() async {
        let teller = Teller()
        var connectedOnce = false
        var toldNoBus = false
        var delay = Self.firstRetryDelay
        while !Task.isCancelled {
            // Armed before connecting, so that a socket appearing between a failed attempt and the wait wakes it.
            let watch = socketPath.flatMap { try? PathAppearanceWatch(path: $0, reactor: reactor) }
            let connection: SystemBusConnection
            do {
                connection = try SystemBusConnection(address: address)
            } catch {
                if !toldNoBus {
                    toldNoBus = true
                    logger.notice("metered networks are not detected (downloads run as if unmetered): \(error.message)")
                }
                // No bus at start-up: nothing can be metered. A bus that was there and went keeps the last answer.
                if !connectedOnce { await tell(.undetectable, teller) }
                guard await waitBeforeConnecting(watch, &delay) else { return }
                continue
            }
            watch?.close()
            if connectedOnce { logger.info("connected to the system bus again; asking NetworkManager") }
            connectedOnce = true
            toldNoBus = false
            delay = Self.firstRetryDelay
            guard let lost = await follow(connection, teller) else { return }
            logger.warning(
                "the system bus connection ended (\(lost)); NetworkManager's last answer holds until it is made again"
            )
            guard (try? await Task.sleep(for: delay)) != nil else { return }
        }
    }

    /// Waits for the bus socket to appear when it is missing (no timer at all), else for `delay`, then doubles it.
    ///
    /// - Returns: `false` when the task was cancelled (the daemon stops).
    private func waitBeforeConnecting(_ watch: PathAppearanceWatch?, _ delay: inout Duration) async -> Bool {
        defer { watch?.close() }
        if let watch, !watch.appeared {
            logger.debug(
                "waiting for the system bus socket \(watch.path) to appear (watching \(watch.target.directory))"
            )
            do {
                try await watch.changed()
                return !Task.isCancelled
            } catch is CancellationError {
                return false
            } catch let error as ReactorError where error.code != .system {
                return false  // the daemon is stopping
            } catch {
                logger.warning("cannot wait for the system bus socket to appear (\(error)); trying again in \(delay)")
            }
        }
        guard (try? await Task.sleep(for: delay)) != nil else { return false }
        delay = min(delay * 2, Self.longestRetryDelay)
        return true
    }

    private func tell(_ news: MeteredNews, _ teller: Teller) async {
        guard teller.last != news else { return }
        teller.last = news
        if case .answered(let metered) = news {
            logger.info("NetworkManager: the network is \(metered ? "" : "not ")metered")
        }
        await report(news)
    }

    /// Follows NetworkManager on one connection.
    ///
    /// - Returns: Why the connection ended, or `nil` when the task was cancelled (the daemon stops).
    private func follow(_ connection: SystemBusConnection, _ teller: Teller) async -> String? {
        defer {
            reactor.deregister(connection.fd)
            reactor.deregister(connection.timerFD)
            connection.close()
        }
        var complained = false
        // A question left unanswered is asked again, after 1 s doubling up to a minute: a NetworkManager busy at
        // boot answers a later one, and nothing else would bring its answer until the property changed.
        var askAgainAt: UInt64?
        var askDelay = Self.firstRetryDelay
        do {
            try connection.watchNetworkManager()
            try connection.requestMetered(timeout: Self.answerTimeoutMicroseconds)
            while true {
                try connection.processPending()
                let news = connection.takeNews()
                if let failure = news.failure {
                    if Self.meansAbsent(failure) {
                        logger.info("NetworkManager is not on the system bus; downloads run as if unmetered")
                        await tell(.undetectable, teller)
                    } else {
                        if !complained {
                            complained = true
                            logger.notice(
                                "NetworkManager does not answer on the system bus (\(failure)); its last answer holds until it does"
                            )
                        }
                        await tell(.unanswered, teller)
                        askAgainAt = SystemBusConnection.monotonicMicroseconds(after: askDelay)
                        askDelay = min(askDelay * 2, Self.longestRetryDelay)
                    }
                }
                if let value = news.metered {
                    complained = false
                    askAgainAt = nil
                    askDelay = Self.firstRetryDelay
                    await tell(.answered(metered: Self.isMetered(value)), teller)
                }
                switch news.owner {
                case .appeared?:
                    askAgainAt = nil
                    try connection.requestMetered(timeout: Self.answerTimeoutMicroseconds)
                case .left?:
                    askAgainAt = nil
                    logger.info("NetworkManager left the system bus; downloads run as if unmetered")
                    await tell(.undetectable, teller)
                case nil: break
                }
                if let at = askAgainAt, SystemBusConnection.monotonicMicroseconds(after: .zero) >= at {
                    askAgainAt = nil
                    try connection.requestMetered(timeout: Self.answerTimeoutMicroseconds)
                }
                try await wait(for: connection, orUntil: askAgainAt)
            }
        } catch is CancellationError {
            return nil
        } catch let error as ReactorError where error.code != .system {
            return nil  // the daemon is stopping
        } catch {
            return Task.isCancelled ? nil : "\(error)"
        }
    }

    /// Sleeps until the bus has something to read (or room to write), until sd-bus's time-out for an unanswered
    /// call, or until `wake` (CLOCK_MONOTONIC microseconds); with neither time there is no timer at all.
    ///
    /// The times are the connection's `timerfd`, waited on like the bus: a `Task.sleep` that lost the race still
    /// fired at its deadline, waking the idle daemon 10 s after every answer NetworkManager gave in time.
    private func wait(for connection: SystemBusConnection, orUntil wake: UInt64?) async throws {
        let (interest, timed) = try connection.nextWait(orUntil: wake)
        let fd = connection.fd
        let timerFD = connection.timerFD
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [reactor] in try await reactor.wait(for: interest, on: fd) }
            if timed { group.addTask { [reactor] in try await reactor.wait(for: .readable, on: timerFD) } }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// A system bus connection of sd-bus, owned by the one task that runs ``MeteredNetworkMonitor``.
final class SystemBusConnection {
    struct Problem: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// What NetworkManager said since the last ``takeNews()``.
    struct News {
        enum Owner { case appeared, left }
        var metered: UInt32?
        var failure: String?
        var owner: Owner?
    }

    private let bus: OpaquePointer
    /// Filled in by the C callbacks while sd_bus_process runs; a stable address for as long as the bus lives.
    private let state = UnsafeMutablePointer<csystemd_nm_state>.allocate(capacity: 1)
    let fd: Int32
    /// Armed by ``nextWait()`` for sd-bus's time-out of an unanswered call; readable once it passes.
    let timerFD: Int32
    private var closed = false

    init(address: String) throws(Problem) {
        let timerFD = cposix_monotonic_timer()
        guard timerFD >= 0 else {
            throw Problem(message: "cannot make a timer for the system bus: \(String(cString: strerror(errno)))")
        }
        state.initialize(to: csystemd_nm_state())
        var bus: OpaquePointer?
        var result = sd_bus_new(&bus)
        if result >= 0 { result = sd_bus_set_address(bus, address) }
        if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
        if result >= 0 { result = sd_bus_start(bus) }
        if result >= 0 { result = sd_bus_get_fd(bus) }
        guard result >= 0, let bus else {
            if let bus { sd_bus_close_unref(bus) }
            state.deallocate()
            Glibc.close(timerFD)
            throw Problem(message: "cannot connect to the system bus \(address): \(String(cString: strerror(-result)))")
        }
        self.bus = bus
        self.fd = result
        self.timerFD = timerFD
    }

    deinit {
        close()
        state.deallocate()
    }

    /// Closes the connection, dropping what was not sent yet; call after deregistering ``fd`` from the reactor.
    ///
    /// Never sd_bus_flush_close_unref: a flush first waits, blocking the thread, for the connection to be set up and
    /// its queue written. On a bus that accepts but does not answer (dbus.socket listening while dbus.service is
    /// stopped, or a slow broker just started) that took the authentication time-out, and a SIGTERM meanwhile left
    /// the daemon running. Nothing queued here (matches, a question) matters once the connection is given up.
    func close() {
        guard !closed else { return }
        closed = true
        sd_bus_close_unref(bus)
        Glibc.close(timerFD)
    }

    func watchNetworkManager() throws(Problem) {
        try check(csystemd_nm_watch(bus, state), "cannot subscribe to NetworkManager's signals")
    }

    func requestMetered(timeout: UInt64) throws(Problem) {
        try check(csystemd_nm_request_metered(bus, state, timeout), "cannot ask NetworkManager")
    }

    /// Handles everything the bus has for us, running the callbacks.
    func processPending() throws(Problem) {
        while true {
            let result = sd_bus_process(bus, nil)
            try check(result, "the system bus connection failed")
            if result == 0 { return }
        }
    }

    func takeNews() -> News {
        var news = News()
        if state.pointee.updated != 0 { news.metered = state.pointee.metered }
        if state.pointee.failed != 0 {
            news.failure = withUnsafeBytes(of: state.pointee.error_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        switch state.pointee.owner_changed {
        case 1: news.owner = .appeared
        case 2: news.owner = .left
        default: break
        }
        state.pointee = csystemd_nm_state()
        return news
    }

    /// What to wait for next: readiness of ``fd`` and, while a call waits for its answer or `wake` (CLOCK_MONOTONIC
    /// microseconds) is set, ``timerFD``, armed here for the earlier of the two; disarmed, and any expiry forgotten,
    /// when there is neither.
    func nextWait(orUntil wake: UInt64?) throws(Problem) -> (interest: Reactor.Interest, timed: Bool) {
        let events = sd_bus_get_events(bus)
        try check(events, "the system bus connection failed")
        var timeout: UInt64 = 0
        try check(sd_bus_get_timeout(bus, &timeout), "the system bus connection failed")
        // > sd_bus_get_timeout: an absolute time in CLOCK_MONOTONIC microseconds, or UINT64_MAX for none.
        if let wake { timeout = min(timeout, wake) }
        guard cposix_arm_monotonic_timer(timerFD, timeout) == 0 else {
            throw Problem(message: "cannot set the system bus timer: \(String(cString: strerror(errno)))")
        }
        let interest: Reactor.Interest = Int16(events) & Int16(POLLOUT) != 0 ? .writable : .readable
        return (interest, timeout != UInt64.max)
    }

    /// CLOCK_MONOTONIC in microseconds, sd-bus's clock, `delay` from now.
    static func monotonicMicroseconds(after delay: Duration) -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = delay.components
        let microseconds =
            Int64(now.tv_sec).saturatingMultiply(1_000_000).saturatingAdd(Int64(now.tv_nsec) / 1000)
            .saturatingAdd(seconds.saturatingMultiply(1_000_000)).saturatingAdd(attoseconds / 1_000_000_000_000)
        return UInt64(clamping: microseconds)
    }

    private func check(_ result: Int32, _ what: String) throws(Problem) {
        guard result < 0 else { return }
        throw Problem(message: "\(what): \(String(cString: strerror(-result)))")
    }
}

@available(*, unavailable)
extension SystemBusConnection: Sendable {}
