import Foundation
import SinglecastDaemon
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct CompletionTests {
    @Test func firingBeforeWaitingIsRemembered() async throws {
        let completion = Completion()
        #expect(completion.succeed())
        try await completion.wait()
        #expect(!completion.succeed())
    }

    @Test func cancellationWinsOverALaterFire() async throws {
        let completion = Completion()
        let task = Task { try await completion.wait() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!completion.succeed(), "a cancelled waiter never takes what is handed over")
    }

    @Test func asyncLockSerializesCriticalSections() async throws {
        let lock = AsyncLock()
        let occupancy = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await lock.withLock {
                        occupancy.enter()
                        try await Task.sleep(for: .microseconds(200))
                        occupancy.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(occupancy.maximum == 1)
    }

    @Test func asyncPermitsAdmitAsManyAsTheirCountAtOnce() async throws {
        let permits = AsyncPermits(3)
        let occupancy = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<30 {
                group.addTask {
                    try await permits.acquire()
                    defer { permits.release() }
                    occupancy.enter()
                    try await Task.sleep(for: .milliseconds(2))
                    occupancy.leave()
                }
            }
            try await group.waitForAll()
        }
        #expect(occupancy.maximum == 3)
    }

    @Test func cancelledLockWaiterDoesNotDeadlockTheOthers() async throws {
        let lock = AsyncLock()
        let holder = Completion()
        let release = Completion()
        let first = Task {
            try await lock.withLock {
                holder.succeed()
                try await release.wait()
            }
        }
        try await holder.wait()
        let cancelled = Task { try await lock.withLock {} }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        release.succeed()
        try await first.value
        try await lock.withLock {}  // still acquirable
    }
}

/// Counts how many tasks are inside a critical section at once.
private final class Occupancy: Sendable {
    private let state = Mutex((inside: 0, maximum: 0))

    func enter() {
        state.withLock {
            $0.inside += 1
            $0.maximum = max($0.maximum, $0.inside)
        }
    }

    func leave() { state.withLock { $0.inside -= 1 } }

    var maximum: Int { state.withLock { $0.maximum } }
}

private func nonBlockingSocketPair() throws -> (Int32, Int32) {
    var fds: [Int32] = [0, 0]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
    return (fds[0], fds[1])
}

@Suite struct ReactorTests {
    @Test func wakesReadersAndWritersOfASocketPair() async throws {
        let reactor = try Reactor()
        reactor.start()
        let (left, right) = try nonBlockingSocketPair()
        defer {
            close(left)
            close(right)
        }
        async let received: Int = {
            var buffer = [UInt8](repeating: 0, count: 16)
            return try await SocketIO.read(left, into: &buffer, reactor: reactor)
        }()
        try await Task.sleep(for: .milliseconds(20))
        try await SocketIO.writeAll(right, Data("hello".utf8), reactor: reactor)
        #expect(try await received == 5)

        // Fill the buffer so the writer has to wait, then drain from the other side.
        let big = Data(count: 4 << 20)
        async let wrote: Void = SocketIO.writeAll(right, big, reactor: reactor)
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while total < big.count {
            total += try await SocketIO.read(left, into: &buffer, reactor: reactor)
        }
        try await wrote
        #expect(total == big.count)
        reactor.deregister(left)
        reactor.deregister(right)
        await reactor.stop()
    }

    @Test func deregisterAndCancellationWakeWaiters() async throws {
        let reactor = try Reactor()
        reactor.start()
        let (left, right) = try nonBlockingSocketPair()
        defer {
            close(left)
            close(right)
        }
        let waiting = Task { try await reactor.wait(for: .readable, on: left) }
        try await Task.sleep(for: .milliseconds(20))
        reactor.deregister(left)
        await #expect(throws: ReactorError.self) { try await waiting.value }

        let cancelled = Task { try await reactor.wait(for: .readable, on: left) }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        await reactor.stop()
    }
}
