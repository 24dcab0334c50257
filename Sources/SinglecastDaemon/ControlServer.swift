import CPosix
import FoundationEssentials
import SinglecastProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// Serves the control socket: accepts clients, checks who they are, and answers their requests in order.
///
/// Each connection is a child task that reads lines, answers each one before reading the next (so a client
/// that never reads its answers only stalls itself), and forwards the events it watches. Stopping is
/// graceful: ``beginShutdown()`` stops accepting, lets every connection finish the request it has, and
/// ``run()`` returns once all are closed or the configured timeout has passed.
package final class ControlServer: Service {
    private let listener: ControlSocket
    private let reactor: Reactor
    private let router: Router
    private let context: DaemonContext
    private let daemonUID = geteuid()

    /// A line over this many bytes is read on and answered only while its connection holds one of ``longLines``.
    static let longLine = 64 * 1024
    /// Connections reading or answering a long line at once. A 1 MB line costs several times its size while it is
    /// decoded (the line, the decoded value, the parameters re-read from it); 32 clients sending such lines together
    /// took the daemon to 150–179 MiB under scripts/fuzz-protocol. Others wait before reading on, their bytes held by
    /// the kernel, not by the daemon.
    private let longLines = AsyncPermits(2)

    /// Set once by ``beginShutdown()``; atomic because the reactor reads it under its own lock.
    private let stopping = Atomic<Bool>(false)

    /// Bytes of request lines read since the heap was last trimmed (``trimHeapAfterBursts()``).
    private let bytesSinceTrim = Atomic<Int>(0)
    private let burstStarts: AsyncStream<Void>
    private let burstStarted: AsyncStream<Void>.Continuation

    private struct State {
        var shuttingDown = false
        /// Open connections, so shutdown can end their reads; guarded here so a descriptor is never
        /// shut down after its connection closed it and the number was reused.
        var connections: Set<Int32> = []
        /// The connections that hold one of the `max_clients` slots.
        var slotHolders: Set<Int32> = []
        var otherUserWarnings = WarningThrottle()
        var tooManyClientsWarnings = WarningThrottle()
    }

    private let state = Mutex(State())
    /// Fired once shutdown has begun and no connection is left, by whoever made that so.
    private let drained = Completion()

    package init(listener: ControlSocket, reactor: Reactor, context: DaemonContext) {
        self.listener = listener
        self.reactor = reactor
        self.router = Router(context: context)
        self.context = context
        (burstStarts, burstStarted) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    package func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.trimHeapAfterBursts() }
            await acceptUntilShutdown(into: &group)
            await waitUntilDrained(timeout: context.configuration.shutdownTimeout)
            let remaining = state.withLock { $0.connections.count }
            if remaining > 0 {
                context.logger.warning(
                    "closing \(ListSummary.count(remaining, "connection")) that did not finish in time"
                )
            }
            group.cancelAll()  // what is left, and the heap trimmer
        }
    }

    /// Waits until the last connection has ended after ``beginShutdown()``, for at most `timeout`; returns at once
    /// when the task is cancelled, so that what is left is closed now.
    private func waitUntilDrained(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.drained.wait() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Gives the memory freed after a burst of requests back to the system.
    ///
    /// glibc keeps freed memory in its arenas for reuse: after 32 clients had sent a few 1 MB lines each, the daemon
    /// stayed at 320 MB, nearly all of it free. Once at least 1 MiB of requests went by and none arrived for two
    /// seconds (or 64 MiB went by without a pause), `malloc_trim` returns what it can; it takes milliseconds.
    /// Between bursts it waits for ``noteRequestBytes(_:)`` instead of polling, so an idle daemon stays asleep.
    private func trimHeapAfterBursts() async {
        for await _ in burstStarts {
            var previous = 0
            while (try? await Task.sleep(for: .seconds(2))) != nil {
                let bytes = bytesSinceTrim.load(ordering: .relaxed)
                let quiet = bytes == previous
                previous = bytes
                guard quiet || bytes >= 64 << 20 else { continue }
                let remaining = bytesSinceTrim.subtract(bytes, ordering: .relaxed).newValue
                previous = remaining
                if bytes >= 1 << 20 { cposix_trim_heap() }
                // Bytes that arrived since the load keep this burst going: their sender saw a non-zero count and
                // did not signal.
                if quiet && remaining == 0 { break }
            }
        }
    }

    /// Counts request bytes for ``trimHeapAfterBursts()``, waking it when a burst begins.
    private func noteRequestBytes(_ count: Int) {
        if bytesSinceTrim.add(count, ordering: .relaxed).oldValue == 0 { burstStarted.yield() }
    }

    /// Stops accepting and asks every connection to finish after its current request. Idempotent.
    package func beginShutdown() {
        let open = state.withLock { state -> Int? in
            guard !state.shuttingDown else { return nil }
            state.shuttingDown = true
            // Under the lock: a connection removes itself before closing, so every fd here is still its own.
            for fd in state.connections { shutdown(fd, Int32(SHUT_RD)) }
            return state.connections.count
        }
        guard let open else { return }
        if open == 0 { drained.succeed() }
        stopping.store(true, ordering: .sequentiallyConsistent)
        reactor.deregister(listener.fd)  // wakes the accept loop, or `stopping` keeps it from waiting again
        context.logger.debug("stopping the control server; \(ListSummary.count(open, "connection")) open")
    }

    private func acceptUntilShutdown(into group: inout DiscardingTaskGroup) async {
        while !state.withLock({ $0.shuttingDown }) {
            let fd: Int32
            do {
                fd = try await SocketIO.accept(listener.fd, reactor: reactor) { [self] in
                    stopping.load(ordering: .sequentiallyConsistent)
                }
            } catch {
                if state.withLock({ $0.shuttingDown }) || error is CancellationError { break }
                context.logger.error("accepting a client failed: \(error)")
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            let admitted = state.withLock { state in
                guard !state.shuttingDown else { return false }
                state.connections.insert(fd)
                return true
            }
            guard admitted else {
                SocketIO.writeWithoutWaiting(
                    fd,
                    WireCoding.errorLine(RPCErrorResponse(id: .null, error: .shuttingDown))
                )
                close(fd)
                break
            }
            group.addTask { await self.serve(fd) }
        }
    }

    private func serve(_ fd: Int32) async {
        defer {
            let wasLast = state.withLock { state in
                if state.slotHolders.remove(fd) != nil { context.releaseClient() }
                state.connections.remove(fd)
                reactor.deregister(fd)
                close(fd)
                return state.shuttingDown && state.connections.isEmpty
            }
            if wasLast { drained.succeed() }
        }
        if let refusal = refusal(for: fd) {
            context.countRefused()
            SocketIO.writeWithoutWaiting(fd, WireCoding.errorLine(RPCErrorResponse(id: .null, error: refusal)))
            return
        }
        let connection = ClientConnection(fd: fd, reactor: reactor, events: context.events)
        defer { context.events.remove(connection.subscriptionID) }
        await withDiscardingTaskGroup { group in
            group.addTask { await connection.forwardEvents() }
            await readRequests(connection)
            // Ends the event stream after what is buffered (such as daemon.stopping), then the forwarder returns.
            context.events.remove(connection.subscriptionID)
        }
    }

    /// Why this client may not be served, or `nil` to serve it.
    private func refusal(for fd: Int32) -> RPCError? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard cposix_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
            context.logger.warning("cannot read a client's credentials: \(String(cString: strerror(errno)))")
            return .permissionDenied(peerUID: UInt32.max, daemonUID: daemonUID)
        }
        guard uid == daemonUID else {
            if let heldBack = state.withLock({ $0.otherUserWarnings.letThrough() }) {
                context.logger.warning(
                    "refused a client with uid \(uid) (pid \(pid)); only uid \(daemonUID) is served"
                        + Self.heldBackNote(heldBack)
                )
            }
            return .permissionDenied(peerUID: uid, daemonUID: daemonUID)
        }
        let limit = context.configuration.maxClients
        guard admit(fd, limit: limit) else {
            if let heldBack = state.withLock({ $0.tooManyClientsWarnings.letThrough() }) {
                context.logger.warning(
                    "refused a client (pid \(pid)): \(limit) clients are connected already"
                        + Self.heldBackNote(heldBack)
                )
            }
            return .tooManyClients(limit: limit)
        }
        return nil
    }

    private static func heldBackNote(_ count: Int) -> String {
        count == 0 ? "" : "; \(ListSummary.count(count, "similar refusal")) since the previous warning not logged"
    }

    /// Gives `fd` one of the `limit` client slots.
    ///
    /// At the limit, connections whose client has hung up give their slots back first: such a connection's task may
    /// not have had its turn to notice the end yet, and under a connect-and-close loop hundreds of them did not, so
    /// every other client was refused. Nobody can read an answer on them any more, so they need no slot.
    private func admit(_ fd: Int32, limit: Int) -> Bool {
        state.withLock { state in
            if !context.admitClient(limit: limit) {
                for holder in Self.hungUp(state.slotHolders) {
                    state.slotHolders.remove(holder)
                    context.releaseClient()
                }
                guard context.admitClient(limit: limit) else { return false }
            }
            state.slotHolders.insert(fd)
            return true
        }
    }

    /// The descriptors among `fds` whose other end is closed for good, found with one `poll` and no reads. Runs
    /// under the state lock, so every descriptor is still its connection's own.
    private static func hungUp(_ fds: Set<Int32>) -> [Int32] {
        // > POLLHUP Hang up (only returned in revents; ignored in events).
        // A Unix stream socket reports it once the peer closed (or shut down both ways); a peer that only shut down
        // its sending side still reads its answers, and keeps its slot.
        var descriptors = fds.map { pollfd(fd: $0, events: 0, revents: 0) }
        guard poll(&descriptors, nfds_t(descriptors.count), 0) > 0 else { return [] }
        return descriptors.filter { $0.revents & Int16(POLLHUP) != 0 }.map(\.fd)
    }

    private func readRequests(_ connection: ClientConnection) async {
        var inbox = Inbox(framer: LineFramer(maximumLineLength: context.configuration.maxRequestBytes))
        var holdsLongLinePermit = false
        defer { if holdsLongLinePermit { longLines.release() } }
        while true {
            if inbox.events.isEmpty {
                if inbox.framer.bufferedByteCount > Self.longLine && !holdsLongLinePermit {
                    guard (try? await longLines.acquire()) != nil else { return }
                    holdsLongLinePermit = true
                }
                guard !inbox.ended, await inbox.read(connection.fd, reactor: reactor, logger: context.logger) != nil
                else { return }
                continue
            }
            switch inbox.events.removeFirst() {
            case .line(let line):
                noteRequestBytes(line.count)
                if line.allSatisfy(LineFramer.isWhitespace) { continue }  // tolerate blank lines from humans
                if line.count > Self.longLine && !holdsLongLinePermit {
                    guard (try? await longLines.acquire()) != nil else { return }
                    holdsLongLinePermit = true
                }
                let response =
                    Router.supersedes(line)
                    ? await respondSuperseding(line, connection, &inbox)
                    : await router.respond(to: line, connection: connection)
                if holdsLongLinePermit && !inbox.holdsLongLine {
                    longLines.release()
                    holdsLongLinePermit = false
                }
                guard let response else { continue }
                guard await connection.send(response) else { return }
            case .lineTooLong:
                noteRequestBytes(inbox.framer.maximumLineLength)
                let error = RPCError.requestTooLarge(limit: inbox.framer.maximumLineLength)
                _ = await connection.send(WireCoding.errorLine(RPCErrorResponse(id: .null, error: error)))
                return
            }
        }
    }

    /// Answers a request that a newer one may replace (``Router/supersedes(_:)``, i.e. `search`).
    ///
    /// While it runs the connection keeps reading, so that a newer `search` can cancel it (its caller then gets a
    /// `cancelled` error). Requests read meanwhile wait in `inbox` and are answered in order afterwards; reading
    /// ahead stops at about one `max_request_bytes` of waiting requests, so a client still cannot make the daemon
    /// buffer without bound.
    private func respondSuperseding(_ line: [UInt8], _ client: ClientConnection, _ inbox: inout Inbox) async -> Data? {
        enum Step: Sendable {
            case answered(Data?)
            case readAhead(Inbox)
        }
        return await withTaskGroup(of: Step.self) { group in
            group.addTask { .answered(await self.router.respond(to: line, connection: client)) }
            if inbox.events.contains(where: Inbox.supersedes) {
                group.cancelAll()  // a newer request is already waiting
            } else if !inbox.ended {
                let ahead = inbox
                group.addTask { [reactor, logger = context.logger] in
                    .readAhead(await ahead.readingAhead(client.fd, reactor: reactor, logger: logger))
                }
            }
            var answer: Data?
            for await step in group {
                switch step {
                case .answered(let response):
                    answer = response
                    group.cancelAll()  // ends the read-ahead, which hands back what it has read
                case .readAhead(let ahead):
                    inbox = ahead
                    if inbox.events.contains(where: Inbox.supersedes) { group.cancelAll() }
                }
            }
            return answer
        }
    }
}

/// What has been read from one connection and not answered yet.
private struct Inbox: Sendable {
    var framer: LineFramer
    var events: [LineFramer.Event] = []
    /// The client stopped sending, or reading failed: nothing more will arrive.
    var ended = false
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    init(framer: LineFramer) { self.framer = framer }

    /// Bytes read and not answered yet.
    private var waitingBytes: Int {
        events.reduce(framer.bufferedByteCount) { total, event in
            if case .line(let line) = event { return total + line.count }
            return total
        }
    }

    /// Whether a long line (``ControlServer/longLine``) is being read or waits to be answered.
    var holdsLongLine: Bool {
        framer.bufferedByteCount > ControlServer.longLine
            || events.contains { if case .line(let line) = $0 { line.count > ControlServer.longLine } else { false } }
    }

    static func supersedes(_ event: LineFramer.Event) -> Bool {
        if case .line(let line) = event { return Router.supersedes(line) }
        return false
    }

    /// Reads once and frames what arrived; returns the new events, or `nil` when the task was cancelled before
    /// anything arrived. End of stream or a failed read sets ``ended``.
    mutating func read(_ fd: Int32, reactor: Reactor, logger: Logger) async -> [LineFramer.Event]? {
        let count: Int
        do {
            count = try await SocketIO.read(fd, into: &buffer, reactor: reactor)
        } catch is CancellationError {
            return nil
        } catch {
            logger.debug("client read ended: \(error)")
            ended = true
            return []
        }
        var new = count == 0 ? [] : framer.append(buffer[..<count])
        if count == 0 {
            ended = true
            if let last = framer.finish() { new.append(last) }
        }
        events += new
        return new
    }

    /// This inbox after reading on until a request that supersedes arrives, the client stops sending, a line is too
    /// long, about ``LineFramer/maximumLineLength`` bytes are waiting, or the task is cancelled.
    func readingAhead(_ fd: Int32, reactor: Reactor, logger: Logger) async -> Inbox {
        var inbox = self
        while !inbox.ended && inbox.waitingBytes < framer.maximumLineLength {
            guard let new = await inbox.read(fd, reactor: reactor, logger: logger) else { break }
            if new.contains(where: { Self.supersedes($0) || $0 == .lineTooLong }) { break }
        }
        return inbox
    }
}

/// One client's socket: serialized writes for responses and events, and its event subscription.
final class ClientConnection: ConnectionControl {
    let fd: Int32
    let subscriptionID: UInt64
    private let reactor: Reactor
    private let events: EventBus
    private let eventStream: EventBus.Subscription
    private let writeLock = AsyncLock()

    init(fd: Int32, reactor: Reactor, events: EventBus) {
        self.fd = fd
        self.reactor = reactor
        self.events = events
        (subscriptionID, eventStream) = events.subscribe()
    }

    func watch(_ selection: EventSelection) {
        events.select(selection, for: subscriptionID)
    }

    /// Writes one whole message; `false` when the client is gone.
    func send(_ line: Data) async -> Bool {
        do {
            try await writeLock.withLock { try await SocketIO.writeAll(fd, line, reactor: reactor) }
            return true
        } catch {
            return false
        }
    }

    /// Writes the events waiting together: a burst costs one write, not one per event.
    func forwardEvents() async {
        var batches = eventStream.batches()
        while let batch = await batches.next() {
            var lines = Data(capacity: batch.reduce(0) { $0 + $1.count })
            for line in batch { lines.append(line) }
            guard await send(lines) else { return }
        }
    }
}
