import CMicroHTTPD
import FoundationEssentials
import SinglecastProtocol
import Synchronization

/// One `GET /events` response: the notifications `watch` would send, as Server-Sent Events, with a comment line as
/// heartbeat so that proxies and the connection timeout see it alive.
///
/// libmicrohttpd pulls the bytes (``read(into:capacity:)``, on its thread); when none are waiting the connection
/// is suspended, and the task that forwards events resumes it. A consumer that does not read lets at most
/// ``highWater`` bytes wait here; beyond that the forwarder stops taking events, the bus drops the oldest ones as it
/// does for a `watch` client, and the consumer reads `events.dropped` before the next.
final class WebEventStream: @unchecked Sendable {
    /// Bytes waiting before the forwarder stops taking events.
    static let highWater = 256 << 10

    private struct State {
        var pending: [UInt8] = []
        var sent = 0
        /// The connection is suspended because nothing was waiting.
        var suspended = false
        /// No more events will come: the reader ends the response once what waits is sent.
        var finished = false
        /// The connection is gone: it is never resumed again.
        var gone = false
        /// The forwarder waits for the consumer to read.
        var roomWanted: CheckedContinuation<Void, Never>?
    }

    /// `MHD_Connection *`; used only under `state`'s lock, while the connection exists (`gone` is false).
    private let connection: OpaquePointer
    private let state = Mutex(State())
    private let events: EventBus
    private let subscription: (id: UInt64, events: EventBus.Subscription)

    init(connection: OpaquePointer, events: EventBus, selection: EventSelection) {
        self.connection = connection
        self.events = events
        subscription = events.subscribe()
        events.select(selection, for: subscription.id)
        // `retry` tells EventSource how long to wait before it reconnects after the daemon went away.
        state.withLock { $0.pending = Array("retry: 3000\n: singlecast events\n\n".utf8) }
    }

    /// Forwards events and heartbeats until the stream is finished or the connection is gone.
    func run(heartbeat: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await line in self.subscription.events {
                    var event = Array("data: ".utf8)
                    event += line.last == UInt8(ascii: "\n") ? line.dropLast() : line[...]
                    event += Array("\n\n".utf8)
                    guard await self.append(event) else { break }
                }
            }
            group.addTask {
                while (try? await Task.sleep(for: heartbeat)) != nil {
                    guard await self.append(Array(":\n\n".utf8), skipWhenFull: true) else { break }
                }
            }
            await group.next()
            group.cancelAll()
        }
        end()
    }

    /// Queues `bytes` and wakes the connection; waits while ``highWater`` bytes are waiting. `false` once the stream
    /// has ended.
    private func append(_ bytes: [UInt8], skipWhenFull: Bool = false) async -> Bool {
        while true {
            let full = state.withLock { state -> Bool? in
                guard !state.finished, !state.gone else { return nil }
                return state.pending.count - state.sent >= Self.highWater
            }
            guard let full else { return false }
            if !full { break }
            if skipWhenFull { return true }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard !state.finished, !state.gone, state.pending.count - state.sent >= Self.highWater else {
                        return true
                    }
                    state.roomWanted = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        return state.withLock { state in
            guard !state.finished, !state.gone else { return false }
            state.pending += bytes
            wake(&state)
            return true
        }
    }

    /// Ends the response once the events already published (such as `daemon.stopping`) are sent: the forwarder
    /// reads them to the end of the subscription, then ends. For shutdown and reload; idempotent.
    func finish() {
        events.remove(subscription.id)
    }

    /// Ends the response after what is waiting here, at once, even if the forwarder waits for the consumer.
    func end() {
        let waiter = state.withLock { state in
            state.finished = true
            wake(&state)
            defer { state.roomWanted = nil }
            return state.roomWanted
        }
        waiter?.resume()
        events.remove(subscription.id)
    }

    /// Whether libmicrohttpd is done with the response: sent to its end, or its connection closed.
    var isGone: Bool { state.withLock { $0.gone } }

    /// The connection closed (libmicrohttpd frees the response): never touch it again.
    func connectionClosed() {
        let waiter = state.withLock { state in
            state.gone = true
            defer { state.roomWanted = nil }
            return state.roomWanted
        }
        waiter?.resume()
        events.remove(subscription.id)
    }

    /// Resumes the connection if it waits for bytes. Under the lock, so the reader cannot suspend in between.
    private func wake(_ state: inout State) {
        guard state.suspended, !state.gone else { return }
        state.suspended = false
        MHD_resume_connection(connection)
    }

    /// libmicrohttpd's content reader: copies waiting bytes, ends the stream, or suspends the connection.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let (count, waiter) = state.withLock { state -> (Int, CheckedContinuation<Void, Never>?) in
            let waiting = state.pending.count - state.sent
            if waiting > 0 {
                let count = min(waiting, capacity)
                state.pending.withUnsafeBytes { bytes in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + state.sent, byteCount: count)
                }
                state.sent += count
                if state.sent == state.pending.count {
                    state.pending = []
                    state.sent = 0
                }
                guard state.pending.count - state.sent < Self.highWater, let waiter = state.roomWanted else {
                    return (count, nil)
                }
                state.roomWanted = nil
                return (count, waiter)
            }
            if state.finished || state.gone { return (cmhd_end_of_stream(), nil) }
            // Allowed from the content reader; zero then means "ask again once resumed".
            state.suspended = true
            MHD_suspend_connection(connection)
            return (0, nil)
        }
        waiter?.resume()
        return count
    }
}
