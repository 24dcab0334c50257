import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport
import Synchronization

/// Fans events out to the connections that asked for them with `watch`.
///
/// Each subscriber has a bounded buffer: a watcher that stops reading loses its oldest unsent events instead
/// of making the daemon's memory grow, and is told how many with `events.dropped` before the next event it reads.
package final class EventBus: Sendable {
    private struct Subscriber {
        var selection: EventSelection
        let mailbox: Mailbox
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 1
    }

    /// Events buffered per watcher before the oldest are dropped.
    package static let bufferLimit = 1024

    private let state = Mutex(State())
    private let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    /// A subscription with no events yet; it ends when ``remove(_:)`` is called.
    package func subscribe() -> (id: UInt64, events: Subscription) {
        let mailbox = Mailbox()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = Subscriber(selection: .none, mailbox: mailbox)
            return state.nextID
        }
        return (id, Subscription(bus: self, mailbox: mailbox))
    }

    /// Replaces the events subscriber `id` receives.
    package func select(_ selection: EventSelection, for id: UInt64) {
        state.withLock { $0.subscribers[id]?.selection = selection }
    }

    /// Subscriber `id` receives every event of `topics`.
    package func setTopics(_ topics: Set<EventTopic>, for id: UInt64) {
        select(EventSelection(topics: topics), for: id)
    }

    /// Ends subscriber `id`'s subscription after the events already waiting.
    package func remove(_ id: UInt64) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscriber?.mailbox.close()
    }

    /// Connections that watch at least one topic.
    package var watcherCount: Int {
        state.withLock { $0.subscribers.values.count(where: { !$0.selection.topics.isEmpty }) }
    }

    /// Whether any connection watches `topic`: events nobody receives need not be built.
    package func isWatched(_ topic: EventTopic) -> Bool {
        state.withLock { $0.subscribers.values.contains { $0.selection.topics.contains(topic) } }
    }

    /// Whether any connection receives the event `name` of `topic`.
    package func isWanted(_ topic: EventTopic, event name: String) -> Bool {
        state.withLock { $0.subscribers.values.contains { $0.selection.admits(topic, event: name) } }
    }

    /// Encodes the event once and queues it for every subscriber that receives it.
    package func publish(_ topic: EventTopic, method: String, params: some Encodable) {
        // Most of the time nobody watches: an enqueue of 10,000 downloads spent a third of its time encoding
        // `download.added` events for no one.
        guard isWanted(topic, event: method) else { return }
        do {
            post(topic, method, EventLine(encoded: try WireCoding.notificationLine(method: method, params: params)))
        } catch {
            logger.error("cannot encode event \(method): \(error)")
        }
    }

    /// The same for params that write themselves, such as every `download.*` event's: built and written by the first
    /// reader that takes the event, not by the publisher. The download queue publishes several events per download
    /// from its actor, where their `DownloadInfo` and JSON were about a tenth of a small download's instructions, and
    /// a thousand `download.added` of one `enqueue` kept the queue from starting the first transfer until all were
    /// written. Nothing is built here, so there is no ``isWanted(_:event:)`` first: ``post(_:_:_:)`` asks each
    /// watcher anyway, under the lock it takes once.
    package func publish(
        _ topic: EventTopic,
        method: String,
        building params: @escaping @Sendable () -> any JSONByteWritable
    ) {
        post(
            topic,
            method,
            EventLine(method: method) { try WireCoding.notificationLine(method: method, writing: params()) }
        )
    }

    private func post(_ topic: EventTopic, _ method: String, _ line: EventLine) {
        // Posted under the lock, so that events published at once reach every watcher in the same order.
        let dropping = state.withLock { state in
            var dropping = 0
            for subscriber in state.subscribers.values where subscriber.selection.admits(topic, event: method) {
                if subscriber.mailbox.post(line) { dropping += 1 }
            }
            return dropping
        }
        if dropping > 0 {
            logger.debug("\(ListSummary.count(dropping, "watcher")) not reading; dropped their oldest event")
        }
    }

    /// One event's line, encoded once for all its subscribers: when published, or by the first reader to take it.
    fileprivate final class EventLine: Sendable {
        private enum State {
            case pending(method: String, encode: @Sendable () throws -> Data)
            case encoded(Data)
            /// Encoding failed (and was logged): no reader gets the event.
            case failed
        }

        private let state: Mutex<State>

        init(encoded line: Data) {
            state = Mutex(.encoded(line))
        }

        init(method: String, encode: @escaping @Sendable () throws -> Data) {
            state = Mutex(.pending(method: method, encode: encode))
        }

        /// The line; `nil` when the event cannot be encoded, which the first reader logs.
        func data(logger: Logger) -> Data? {
            state.withLock { state in
                switch state {
                case .encoded(let line):
                    return line
                case .failed:
                    return nil
                case .pending(let method, let encode):
                    do {
                        let line = try encode()
                        state = .encoded(line)
                        return line
                    } catch {
                        logger.error("cannot encode event \(method): \(error)")
                        state = .failed
                        return nil
                    }
                }
            }
        }
    }

    /// One subscriber's waiting event lines, bounded by ``bufferLimit``: the oldest go first, counted.
    ///
    /// A reader takes every line waiting at once, so that a burst of events (a thousand `download.added` of one
    /// enqueue, eight downloads finishing together) costs it one wake-up and one write instead of one per event.
    fileprivate final class Mailbox: Sendable {
        private struct Contents {
            /// `lines[start...]` wait, oldest first; dropping the oldest only moves `start`.
            var lines: [EventLine] = []
            var start = 0
            /// Lines lost since the reader last took some.
            var dropped = 0
        }

        private let contents = Mutex(Contents())
        /// Signals lines that came while none waited; finished by ``close()``.
        let wakeups: AsyncStream<Void>
        private let wakeup: AsyncStream<Void>.Continuation

        init() {
            (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        }

        /// Queues `line`; `true` when the oldest line waiting was dropped for it.
        func post(_ line: EventLine) -> Bool {
            let (wasEmpty, dropped) = contents.withLock { contents in
                let waiting = contents.lines.count - contents.start
                var dropped = false
                if waiting >= EventBus.bufferLimit {
                    contents.start += 1
                    contents.dropped += 1
                    dropped = true
                    // Dropped lines are let go once they are as many as those kept.
                    if contents.start >= EventBus.bufferLimit {
                        contents.lines.removeFirst(contents.start)
                        contents.start = 0
                    }
                }
                contents.lines.append(line)
                return (waiting == 0, dropped)
            }
            if wasEmpty { wakeup.yield() }
            return dropped
        }

        /// Every line waiting, and how many were dropped before them.
        func take() -> (lines: ArraySlice<EventLine>, dropped: Int) {
            contents.withLock { contents in
                defer { contents = Contents() }
                return (contents.lines[contents.start...], contents.dropped)
            }
        }

        func close() { wakeup.finish() }
    }

    /// One subscriber's event lines, with an `events.dropped` line where it lost some: line by line, or every line
    /// waiting at once (``batches()``).
    package struct Subscription: AsyncSequence, Sendable {
        package typealias Element = Data
        package typealias Failure = Never

        fileprivate let bus: EventBus
        fileprivate let mailbox: Mailbox

        package func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(batches: batches())
        }

        /// Waits for lines and takes all that wait; the iterator is for one reader.
        package func batches() -> Batches {
            Batches(bus: bus, mailbox: mailbox, wakeups: mailbox.wakeups.makeAsyncIterator())
        }

        package struct Batches: AsyncIteratorProtocol {
            package typealias Element = [Data]
            package typealias Failure = Never

            fileprivate let bus: EventBus
            fileprivate let mailbox: Mailbox
            fileprivate var wakeups: AsyncStream<Void>.AsyncIterator

            /// The lines waiting, oldest first, after an `events.dropped` notice when some were lost before them;
            /// `nil` once the subscription is removed and nothing waits.
            package mutating func next() async -> [Data]? {
                while await wakeups.next() != nil {
                    let (lines, dropped) = mailbox.take()
                    // Only the oldest lines are dropped, so every lost one came before these.
                    var batch: [Data] = []
                    batch.reserveCapacity(lines.count + 1)
                    if dropped > 0, let notice = bus.droppedNotice(dropped) { batch.append(notice) }
                    for line in lines {
                        if let data = line.data(logger: bus.logger) { batch.append(data) }
                    }
                    if !batch.isEmpty { return batch }
                }
                return nil
            }
        }

        package struct AsyncIterator: AsyncIteratorProtocol {
            package typealias Element = Data
            package typealias Failure = Never

            var batches: Batches
            var taken: [Data] = []
            var index = 0

            package mutating func next() async -> Data? {
                if index == taken.count {
                    guard let batch = await batches.next() else { return nil }
                    (taken, index) = (batch, 0)
                }
                defer { index += 1 }
                return taken[index]
            }
        }
    }

    private func droppedNotice(_ count: Int) -> Data? {
        let params = DroppedEvents.Params(at: WallClock.timestamp(), count: count)
        do {
            return try WireCoding.notificationLine(method: DroppedEvents.method, params: params)
        } catch {
            logger.error("cannot encode event \(DroppedEvents.method): \(error)")
            return nil
        }
    }
}
