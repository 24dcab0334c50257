import Synchronization
import Testing

@testable import SinglecastDaemon

/// Concurrent requests for one answer share computations, and no answer is older than its request.
@Suite struct RequestCoalescerTests {
    @Test func theFirstCallerComputesAndLaterOnesWaitForTheNextRound() {
        var machine = RequestCoalescerStateMachine<String, Int>()
        #expect(machine.arrive(1, for: "a") == .compute)
        #expect(machine.arrive(2, for: "a") == .wait)
        #expect(machine.arrive(3, for: "b") == .compute)
        #expect(machine.arrive(4, for: "a") == .wait)
        // Callers 2 and 4 came while 1's computation ran: it answers only 1, and 2 computes for both.
        #expect(machine.finish("a") == .init(answer: [1], handOver: 2))
        #expect(machine.arrive(5, for: "a") == .wait)
        #expect(machine.finish("a") == .init(answer: [2, 4], handOver: 5))
        #expect(machine.finish("a") == .init(answer: [5], handOver: nil))
        #expect(machine.running == 1)
        #expect(machine.finish("b") == .init(answer: [3], handOver: nil))
        #expect(machine.running == 0)
        #expect(machine.arrive(6, for: "a") == .compute)
    }

    /// A gate the computation waits at, so that callers can be made to arrive while it runs.
    private final class Gate: Sendable {
        private let opened = Mutex<[CheckedContinuation<Void, Never>]?>([])
        func wait() async {
            await withCheckedContinuation { continuation in
                let waiting = opened.withLock { list -> Bool in
                    guard list != nil else { return false }
                    list!.append(continuation)
                    return true
                }
                if !waiting { continuation.resume() }
            }
        }
        func open() {
            let waiting = opened.withLock { list in
                defer { list = nil }
                return list ?? []
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    @Test func manyConcurrentCallersMakeTwoComputationsAndGetFreshAnswers() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        // The state the computation reads, and how many computations started.
        let version = Atomic<Int>(0)
        let started = Atomic<Int>(0)
        let gate = Gate()
        let compute: @Sendable () async -> Int = {
            started.add(1, ordering: .sequentiallyConsistent)
            let seen = version.load(ordering: .sequentiallyConsistent)
            await gate.wait()
            return seen
        }
        let first = Task { await coalescer.value(for: "feed", compute: compute) }
        while started.load(ordering: .sequentiallyConsistent) == 0 { await Task.yield() }
        // The state changes after the first computation read it: later callers must not get its answer.
        version.store(1, ordering: .sequentiallyConsistent)
        let later = (0..<50).map { _ in Task { await coalescer.value(for: "feed", compute: compute) } }
        try await Task.sleep(for: .milliseconds(50))
        gate.open()
        #expect(await first.value == 0)
        for task in later { #expect(await task.value == 1) }
        #expect(started.load(ordering: .sequentiallyConsistent) == 2)
        #expect(coalescer.running == 0)
    }

    @Test func differentKeysComputeApart() async {
        let coalescer = RequestCoalescer<Int, Int>()
        async let one = coalescer.value(for: 1) { 10 }
        async let two = coalescer.value(for: 2) { 20 }
        #expect(await (one, two) == (10, 20))
        #expect(coalescer.running == 0)
    }
}
