import CPosix
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// Failure of the readiness reactor.
package struct ReactorError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// The descriptor was deregistered (closed, or the daemon is stopping) while a task waited on it.
        case deregistered
        /// The reactor was stopped.
        case stopped
        /// A system call failed.
        case system
    }

    package var code: Code
    package var message: String

    package var description: String { message }

    static func system(_ call: String, errno code: Int32 = errno) -> ReactorError {
        ReactorError(code: .system, message: "\(call) failed: \(String(cString: strerror(code)))")
    }
}

/// Waits for descriptors to become readable or writable with one epoll instance on one thread, so thousands
/// of idle connections cost no threads and no polling.
///
/// Each wait arms a one-shot interest; the loop thread resumes the waiting task when the kernel reports
/// readiness. Callers must ``deregister(_:)`` a descriptor before closing it, because epoll tracks open file
/// descriptions and a reused descriptor number would otherwise receive a stale event.
package final class Reactor: Sendable {
    package enum Interest: Sendable {
        case readable
        case writable
    }

    private struct Registration {
        var reader: Completion?
        var writer: Completion?
        var inEpoll = false
    }

    private struct State {
        var registrations: [Int32: Registration] = [:]
        var stopped = false
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let state = Mutex(State())
    private let finished = Completion()

    package init() throws {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw ReactorError.system("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            let error = ReactorError.system("eventfd")
            close(epollFD)
            throw error
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            let error = ReactorError.system("epoll_ctl")
            close(wakeFD)
            close(epollFD)
            throw error
        }
    }

    /// Starts the loop thread.
    package func start() {
        startThread(name: "singlecast-reactor") { [self] in
            loop()
            finished.succeed()
        }
    }

    /// Suspends until `fd` is ready for `interest` (or has an error or hang-up, which the next I/O call reports).
    ///
    /// - Throws: `CancellationError` when the task is cancelled, ``ReactorError`` when the descriptor is
    ///   deregistered or the reactor stops.
    /// - Parameter abandon: checked under the reactor's lock right before the wait is armed; when it returns
    ///   `true` the wait fails at once. A task that ``deregister(_:)`` would otherwise have to wake can thus
    ///   never slip in between its own last check and the registration.
    package func wait(
        for interest: Interest,
        on fd: Int32,
        abandonIf abandon: (@Sendable () -> Bool)? = nil
    ) async throws {
        let completion = Completion()
        let armError: ReactorError? = state.withLock { state in
            if state.stopped { return ReactorError(code: .stopped, message: "the I/O reactor has stopped") }
            if let abandon, abandon() {
                return ReactorError(code: .deregistered, message: "descriptor \(fd) is being closed")
            }
            var registration = state.registrations[fd] ?? Registration()
            switch interest {
            case .readable: registration.reader = completion
            case .writable: registration.writer = completion
            }
            if let error = arm(fd, &registration) { return error }
            state.registrations[fd] = registration
            return nil
        }
        if let armError { throw armError }
        try await completion.wait()
    }

    /// Forgets `fd`, failing any task waiting on it. Call before `close(fd)`.
    package func deregister(_ fd: Int32) {
        let registration = state.withLock { state in
            let registration = state.registrations.removeValue(forKey: fd)
            if registration?.inEpoll == true {
                _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
            }
            return registration
        }
        let error = ReactorError(code: .deregistered, message: "descriptor \(fd) was closed")
        registration?.reader?.fail(error)
        registration?.writer?.fail(error)
    }

    /// Stops the loop, fails every waiter and waits for the loop thread to end.
    package func stop() async {
        let registrations = state.withLock { state in
            state.stopped = true
            defer { state.registrations.removeAll() }
            return state.registrations.values
        }
        let error = ReactorError(code: .stopped, message: "the I/O reactor has stopped")
        for registration in registrations {
            registration.reader?.fail(error)
            registration.writer?.fail(error)
        }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        try? await finished.wait()
        close(wakeFD)
        close(epollFD)
    }

    /// Adds or modifies the one-shot epoll interest for everything `registration` waits for. Runs under the lock.
    private func arm(_ fd: Int32, _ registration: inout Registration) -> ReactorError? {
        var event = epoll_event()
        event.events = EPOLLONESHOT.rawValue | EPOLLRDHUP.rawValue
        if registration.reader != nil { event.events |= EPOLLIN.rawValue }
        if registration.writer != nil { event.events |= EPOLLOUT.rawValue }
        event.data.fd = fd
        let operation = registration.inEpoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD
        if epoll_ctl(epollFD, operation, fd, &event) != 0 {
            return ReactorError.system("epoll_ctl(\(fd))")
        }
        registration.inEpoll = true
        return nil
    }

    private func loop() {
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while true {
            let count = epoll_wait(epollFD, events, Int32(capacity), -1)
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: \(String(cString: strerror(errno)))")
            }
            var ready: [Completion] = []
            let stop = state.withLock { state -> Bool in
                for index in 0..<Int(count) {
                    let event = events[index]
                    let fd = event.data.fd
                    if fd == wakeFD { continue }
                    guard var registration = state.registrations[fd] else { continue }
                    let flags = event.events
                    let problem = flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
                    if let reader = registration.reader,
                        problem || flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0
                    {
                        ready.append(reader)
                        registration.reader = nil
                    }
                    if let writer = registration.writer, problem || flags & EPOLLOUT.rawValue != 0 {
                        ready.append(writer)
                        registration.writer = nil
                    }
                    // One-shot: the interest is disarmed now; re-arm for whoever still waits.
                    if registration.reader != nil || registration.writer != nil {
                        if let error = arm(fd, &registration) {
                            registration.reader?.fail(error)
                            registration.writer?.fail(error)
                            registration.reader = nil
                            registration.writer = nil
                        }
                    }
                    state.registrations[fd] = registration
                }
                return state.stopped
            }
            for completion in ready { completion.succeed() }
            if stop { return }
        }
    }
}
