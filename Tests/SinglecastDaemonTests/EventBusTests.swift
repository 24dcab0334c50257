import Foundation
import SinglecastDaemon
import SinglecastProtocol
import Synchronization
import Testing

/// A watcher too slow for a bulk operation loses its oldest events, and is told how many.
@Suite struct EventBusTests {
    struct Numbered: Codable { var n: Int }
    struct Dropped: Codable { var count: Int }
    struct Line<Params: Codable>: Codable {
        var method: String
        var params: Params
    }

    static func decode<Params>(_ line: Data?, as: Params.Type) throws -> Line<Params> {
        try JSONDecoder().decode(Line<Params>.self, from: try #require(line))
    }

    @Test func aWatcherThatFellBehindIsToldHowManyEventsItLost() async throws {
        let bus = EventBus(logger: Logger(level: .error, environment: [:]))
        let (id, events) = bus.subscribe()
        bus.setTopics([.downloads], for: id)
        let lost = 500
        for n in 0..<(EventBus.bufferLimit + lost) {
            bus.publish(.downloads, method: "download.progress", params: Numbered(n: n))
        }
        var iterator = events.makeAsyncIterator()
        // The notice comes where the gap is: before the oldest event kept.
        let notice = try Self.decode(await iterator.next(), as: Dropped.self)
        #expect(notice.method == "events.dropped")
        #expect(notice.params.count == lost)
        for n in lost..<(EventBus.bufferLimit + lost) {
            let event = try Self.decode(await iterator.next(), as: Numbered.self)
            #expect(event.method == "download.progress")
            if event.params.n != n {
                Issue.record("expected event \(n), got \(event.params.n)")
                break
            }
        }
        // Counted once: the next event comes without a notice.
        bus.publish(.downloads, method: "download.progress", params: Numbered(n: -1))
        #expect(try Self.decode(await iterator.next(), as: Numbered.self).params.n == -1)
        bus.remove(id)
        #expect(await iterator.next() == nil)
    }

    @Test func aBurstIsTakenAtOnceAndWhatWaitsOutlivesTheRemoval() async throws {
        let bus = EventBus(logger: Logger(level: .error, environment: [:]))
        let (id, events) = bus.subscribe()
        bus.setTopics([.downloads], for: id)
        var batches = events.batches()
        for n in 0..<10 {
            bus.publish(.downloads, method: "download.progress", params: Numbered(n: n))
        }
        let burst = try #require(await batches.next())
        #expect(try burst.map { try Self.decode($0, as: Numbered.self).params.n } == Array(0..<10))
        bus.publish(.downloads, method: "download.progress", params: Numbered(n: 10))
        bus.publish(.downloads, method: "download.progress", params: Numbered(n: 11))
        bus.remove(id)
        bus.publish(.downloads, method: "download.progress", params: Numbered(n: 12))
        let last = try #require(await batches.next())
        #expect(try last.map { try Self.decode($0, as: Numbered.self).params.n } == [10, 11])
        #expect(await batches.next() == nil)
    }

    @Test func aWatcherThatStaysBehindLosesOnlyTheOldestAndKeepsTheNewest() async throws {
        let bus = EventBus(logger: Logger(level: .error, environment: [:]))
        let (id, events) = bus.subscribe()
        bus.setTopics([.downloads], for: id)
        // Many times the buffer: the lines dropped are let go along the way, and the newest stay in order.
        let count = 5 * EventBus.bufferLimit + 7
        for n in 0..<count {
            bus.publish(.downloads, method: "download.progress", params: Numbered(n: n))
        }
        var batches = events.batches()
        let batch = try #require(await batches.next())
        #expect(batch.count == EventBus.bufferLimit + 1)
        #expect(try Self.decode(batch.first, as: Dropped.self).params.count == count - EventBus.bufferLimit)
        let kept = try batch.dropFirst().map { try Self.decode($0, as: Numbered.self).params.n }
        #expect(kept == Array((count - EventBus.bufferLimit)..<count))
        bus.remove(id)
    }

    /// Params that write themselves (as a download's do), counting each time they are written.
    struct Counted: JSONByteWritable, Sendable {
        final class Writes: Sendable { let count = Mutex(0) }
        private enum Key: String, CodingKey { case n }
        var n: Int
        var refuses = false
        let writes: Writes

        func write(to writer: inout JSONByteWriter) throws {
            writes.count.withLock { $0 += 1 }
            if refuses { throw JSONByteError(offset: 0, message: "refused") }
            writer.beginObject()
            writer.member(Key.n, n)
            writer.endObject()
        }
    }

    /// A download's event is written by the first watcher that takes it, once for all; one that cannot be written
    /// reaches no one, and the events after it still come.
    @Test func anEventThatWritesItselfIsWrittenOnceByItsFirstReader() async throws {
        let bus = EventBus(logger: Logger(level: .error, environment: [:]))
        let (first, firstEvents) = bus.subscribe()
        let (second, secondEvents) = bus.subscribe()
        bus.setTopics([.downloads], for: first)
        bus.setTopics([.downloads], for: second)
        let writes = Counted.Writes()
        bus.publish(.downloads, method: "download.added") { Counted(n: 1, writes: writes) }
        bus.publish(.downloads, method: "download.added") { Counted(n: 2, refuses: true, writes: writes) }
        bus.publish(.downloads, method: "download.added") { Counted(n: 3, writes: writes) }
        #expect(writes.count.withLock { $0 } == 0)
        var firstBatches = firstEvents.batches()
        let taken = try #require(await firstBatches.next())
        #expect(try taken.map { try Self.decode($0, as: Numbered.self).params.n } == [1, 3])
        #expect(writes.count.withLock { $0 } == 3)
        var secondBatches = secondEvents.batches()
        #expect(try #require(await secondBatches.next()) == taken)
        #expect(writes.count.withLock { $0 } == 3)
        bus.remove(first)
        bus.remove(second)
    }

    /// A watcher that chose some events gets those alone, and an event no watcher chose is never built.
    @Test func aWatcherOfSomeEventsGetsThoseAloneAndTheRestAreNeverBuilt() async throws {
        let bus = EventBus(logger: Logger(level: .error, environment: [:]))
        let (id, events) = bus.subscribe()
        bus.select(EventSelection(events: ["download.completed", "download.failed"]), for: id)
        #expect(bus.isWanted(.downloads, event: "download.completed"))
        #expect(!bus.isWanted(.downloads, event: "download.progress"))
        #expect(!bus.isWanted(.podcasts, event: "podcast.refreshed"))
        let writes = Counted.Writes()
        bus.publish(.downloads, method: "download.added") { Counted(n: 1, writes: writes) }
        bus.publish(.downloads, method: "download.completed") { Counted(n: 2, writes: writes) }
        bus.publish(.downloads, method: "download.progress", params: Numbered(n: 3))
        bus.publish(.downloads, method: "download.failed", params: Numbered(n: 4))
        var batches = events.batches()
        let taken = try #require(await batches.next())
        #expect(
            try taken.map { try Self.decode($0, as: Numbered.self).method } == [
                "download.completed", "download.failed",
            ]
        )
        #expect(writes.count.withLock { $0 } == 1)
        // Choosing again replaces the choice: every event of the topic comes.
        bus.select(EventSelection(topics: [.downloads]), for: id)
        bus.publish(.downloads, method: "download.progress", params: Numbered(n: 5))
        #expect(try Self.decode(try #require(await batches.next()).first, as: Numbered.self).params.n == 5)
        bus.select(.none, for: id)
        #expect(!bus.isWatched(.downloads))
        #expect(bus.watcherCount == 0)
        bus.remove(id)
    }

    @Test func aWatcherThatKeepsUpIsToldNothing() async throws {
        let bus = EventBus(logger: Logger(level: .error, environment: [:]))
        let (id, events) = bus.subscribe()
        bus.setTopics([.downloads], for: id)
        var iterator = events.makeAsyncIterator()
        for n in 0..<(3 * EventBus.bufferLimit) {
            bus.publish(.downloads, method: "download.progress", params: Numbered(n: n))
            #expect(try Self.decode(await iterator.next(), as: Numbered.self).params.n == n)
        }
        bus.remove(id)
        #expect(await iterator.next() == nil)
    }
}
