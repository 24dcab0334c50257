import FoundationEssentials
import SinglecastProtocol
import Synchronization

/// Fans events out to the connections that asked for them with `watch`.
///
/// Each subscriber has a bounded buffer: a watcher that stops reading loses its oldest unsent events instead
/// of making the daemon's memory grow.
package final class EventBus: Sendable {
    private struct Subscriber {
        var topics: Set<EventTopic>
        var continuation: AsyncStream<Data>.Continuation
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
    package func subscribe() -> (id: UInt64, events: AsyncStream<Data>) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Data.self,
            bufferingPolicy: .bufferingNewest(Self.bufferLimit)
        )
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = Subscriber(topics: [], continuation: continuation)
            return state.nextID
        }
        return (id, stream)
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
        let continuations = state.withLock { state in
            state.subscribers.values.filter { $0.topics.contains(topic) }.map(\.continuation)
        }
        for continuation in continuations {
            if case .dropped = continuation.yield(line) {
                logger.debug("a watcher is not reading; dropped its oldest event")
            }
        }
    }
}
