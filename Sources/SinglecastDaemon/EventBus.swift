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
        var topics: Set<EventTopic>
        var continuation: AsyncStream<Data>.Continuation
        /// Events lost since the subscriber last read one.
        var dropped = 0
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

    /// A subscription with no topics yet; its stream ends when ``remove(_:)`` is called.
    package func subscribe() -> (id: UInt64, events: Subscription) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Data.self,
            bufferingPolicy: .bufferingNewest(Self.bufferLimit)
        )
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = Subscriber(topics: [], continuation: continuation)
            return state.nextID
        }
        return (id, Subscription(id: id, bus: self, stream: stream))
    }

    /// Replaces the topics subscriber `id` receives.
    package func setTopics(_ topics: Set<EventTopic>, for id: UInt64) {
        state.withLock { $0.subscribers[id]?.topics = topics }
    }

    /// Ends subscriber `id`'s stream after the events already buffered.
    package func remove(_ id: UInt64) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscriber?.continuation.finish()
    }

    /// Connections that watch at least one topic.
    package var watcherCount: Int {
        state.withLock { $0.subscribers.values.count(where: { !$0.topics.isEmpty }) }
    }

    /// Whether any connection watches `topic`: events nobody receives need not be built.
    package func isWatched(_ topic: EventTopic) -> Bool {
        state.withLock { $0.subscribers.values.contains { $0.topics.contains(topic) } }
    }

    /// Encodes the event once and queues it for every subscriber of `topic`.
    package func publish(_ topic: EventTopic, method: String, params: some Encodable) {
        // Most of the time nobody watches: an enqueue of 10,000 downloads spent a third of its time encoding
        // `download.added` events for no one.
        guard isWatched(topic) else { return }
        let line: Data
        do {
            line = try WireCoding.notificationLine(method: method, params: params)
        } catch {
            logger.error("cannot encode event \(method): \(error)")
            return
        }
        // Queued under the lock, so that a drop is counted before the watcher can read past it.
        let dropping = state.withLock { state in
            var dropping = 0
            for (id, subscriber) in state.subscribers where subscriber.topics.contains(topic) {
                if case .dropped = subscriber.continuation.yield(line) {
                    state.subscribers[id]?.dropped += 1
                    dropping += 1
                }
            }
            return dropping
        }
        if dropping > 0 {
            logger.debug("\(ListSummary.count(dropping, "watcher")) not reading; dropped their oldest event")
        }
    }

    /// The events subscriber `id` lost since it last asked, now counted as told.
    private func takeDropped(_ id: UInt64) -> Int {
        state.withLock { state in
            defer { state.subscribers[id]?.dropped = 0 }
            return state.subscribers[id]?.dropped ?? 0
        }
    }

    /// One subscriber's event lines, with an `events.dropped` line where it lost some.
    package struct Subscription: AsyncSequence, Sendable {
        package typealias Element = Data
        package typealias Failure = Never

        let id: UInt64
        let bus: EventBus
        let stream: AsyncStream<Data>

        package func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(id: id, bus: bus, lines: stream.makeAsyncIterator())
        }

        package struct AsyncIterator: AsyncIteratorProtocol {
            package typealias Element = Data
            package typealias Failure = Never

            let id: UInt64
            let bus: EventBus
            var lines: AsyncStream<Data>.AsyncIterator
            /// The line read after a loss, handed out after the notice.
            var held: Data?

            package mutating func next() async -> Data? {
                if let line = held {
                    held = nil
                    return line
                }
                guard let line = await lines.next() else { return nil }
                // Only the oldest lines are dropped, so every lost one came before this one.
                let count = bus.takeDropped(id)
                guard count > 0, let notice = bus.droppedNotice(count) else { return line }
                held = line
                return notice
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
