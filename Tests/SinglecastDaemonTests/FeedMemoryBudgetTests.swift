import Foundation
import Synchronization
import Testing

@testable import SinglecastDaemon

/// The memory budget of feed parsing: reservations within a byte budget, in arrival order, a too-big one alone.
@Suite struct FeedMemoryBudgetTests {
    @Test func reservationsFitWithinTheBudgetAndTheRestWait() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted = [(1, 40), (2, 40), (3, 40)].map { budget.reserve(id: $0, bytes: $1) }
        #expect(granted == [true, true, false])
        #expect(budget.held == 80)
        #expect(budget.waitingCount == 1)

        let started1 = budget.release(id: 1)
        #expect(started1 == [3])
        #expect(budget.held == 80)
        let started2 = budget.release(id: 2)
        #expect(started2 == [])
        let started3 = budget.release(id: 3)
        #expect(started3 == [])
        #expect(budget.held == 0)
    }

    @Test func aDocumentBiggerThanTheBudgetRunsAloneOnceNothingElseHolds() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 30)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 500)
        #expect(!granted2, "it waits while anything else holds the budget")
        let granted3 = budget.reserve(id: 3, bytes: 10)
        #expect(!granted3, "nothing starts beside it, nor overtakes it")
        let started1 = budget.release(id: 1)
        #expect(started1 == [2])
        #expect(budget.holders == 1)
        #expect(budget.held == 500)
        let started2 = budget.release(id: 2)
        #expect(started2 == [3])
    }

    @Test func smallReservationsDoNotStarveABigOne() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 60)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 90)
        #expect(!granted2)
        // 30 would fit beside the first, but the big one asked earlier.
        let granted3 = budget.reserve(id: 3, bytes: 30)
        #expect(!granted3)
        let started1 = budget.release(id: 1)
        #expect(started1 == [2])
        let started2 = budget.release(id: 2)
        #expect(started2 == [3])
    }

    @Test func cancellingTheHeadOfTheLineGrantsThoseBehindIt() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 60)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 90)
        #expect(!granted2)
        let granted3 = budget.reserve(id: 3, bytes: 20)
        #expect(!granted3)
        let granted4 = budget.reserve(id: 4, bytes: 30)
        #expect(!granted4)
        let started1 = budget.cancel(id: 2)
        #expect(started1 == [3], "20 fits beside 60; 30 more does not")
        let started2 = budget.cancel(id: 1)
        #expect(started2 == nil, "a granted reservation is not waiting: it releases")
        let started3 = budget.release(id: 1)
        #expect(started3 == [4])
        let started4 = budget.cancel(id: 4)
        #expect(started4 == nil)
    }

    @Test func aLargerBudgetGrantsWaitersAndASmallerOneKeepsWhatIsHeld() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 80)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 80)
        #expect(!granted2)
        let started1 = budget.setLimit(200)
        #expect(started1 == [2])
        let started2 = budget.setLimit(10)
        #expect(started2 == [])
        #expect(budget.held == 160)
        let granted3 = budget.reserve(id: 3, bytes: 1)
        #expect(!granted3)
        let started3 = budget.release(id: 1)
        #expect(started3 == [])
        let started4 = budget.release(id: 2)
        #expect(started4 == [3])
    }

    /// A document a little bigger than its last one, reserved alone over the budget, grows in place: the feeds
    /// waiting behind it keep waiting (they used to be let in when it gave its reservation back to ask again).
    @Test func theOnlyHolderGrowsInPlaceAndThoseWaitingKeepWaiting() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 200)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 200)
        #expect(!granted2)
        let grown = budget.resize(id: 1, bytes: 201)
        #expect(grown.resized && grown.granted.isEmpty)
        #expect(budget.held == 201 && budget.waitingCount == 1)
        let started1 = budget.release(id: 1)
        #expect(started1 == [2])
    }

    @Test func aGrowthThatFitsBesideTheOthersIsTakenAndAShrinkLetsWaitersIn() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 30)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 30)
        #expect(granted2)
        let granted3 = budget.reserve(id: 3, bytes: 50)
        #expect(!granted3)
        let grown = budget.resize(id: 1, bytes: 40)
        #expect(grown.resized && grown.granted.isEmpty)
        #expect(budget.held == 70)
        let shrunk = budget.resize(id: 2, bytes: 10)
        #expect(shrunk.resized && shrunk.granted == [3])
        #expect(budget.held == 100)
    }

    /// A growth that does not fit gives back what it holds and waits first in line: nothing behind it starts, it
    /// waits only for the holder running now, and two that grew at once do not wait for each other.
    @Test func aGrowthThatDoesNotFitWaitsFirstInLineForTheHoldersOnly() {
        var budget = FeedMemoryBudget(limit: 100)
        let granted1 = budget.reserve(id: 1, bytes: 40)
        #expect(granted1)
        let granted2 = budget.reserve(id: 2, bytes: 40)
        #expect(granted2)
        let granted3 = budget.reserve(id: 3, bytes: 40)
        #expect(!granted3)
        let first = budget.resize(id: 1, bytes: 70)
        #expect(!first.resized && first.granted.isEmpty)
        #expect(budget.bytesHeld(by: 1) == nil && budget.held == 40)
        #expect(budget.waitingCount == 2)
        let second = budget.resize(id: 2, bytes: 70)
        #expect(second.resized, "once the first gave its bytes back, the second is the only holder")
        let started1 = budget.release(id: 2)
        #expect(started1 == [1], "the grown one first; 40 more does not fit beside its 70")
        #expect(budget.bytesHeld(by: 1) == 70)
        let started2 = budget.release(id: 1)
        #expect(started2 == [3])
    }

    // MARK: - The limiter, with real tasks

    /// Eight tasks reserving 40 of 100 each: never more than two hold at once, and all get their turn.
    @Test func concurrentReservationsNeverExceedTheBudget() async {
        let limiter = FeedMemoryLimiter(limit: 100)
        let peak = Peak()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    guard let reservation = await limiter.reserve(40, within: 100) else { return }
                    peak.count(+1)
                    try? await Task.sleep(for: .milliseconds(20))
                    peak.count(-1)
                    withExtendedLifetime(reservation) {}
                }
            }
        }
        #expect(peak.most == 2)
        #expect(limiter.held == 0)
    }

    /// A reservation cancelled while it waits ends at once, and the one behind it is granted when the holder
    /// releases.
    @Test func cancellingAWaitingReservationEndsItAndKeepsTheLineMoving() async throws {
        let limiter = FeedMemoryLimiter(limit: 100)
        var holder = await limiter.reserve(100, within: 100)
        #expect(holder != nil)
        let cancelled = Task { await limiter.reserve(50, within: 100) != nil }
        try await Task.sleep(for: .milliseconds(100))
        let behind = Task { await limiter.reserve(50, within: 100)?.bytes }
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        #expect(await cancelled.value == false)
        holder = nil
        #expect(await behind.value == 50)
        #expect(limiter.held == 0, "the reservation was released when the task dropped it")
    }

    /// A refresh whose document grew by an item grows its reservation; the feed waiting behind it is not let in
    /// meanwhile.
    @Test func aGrowingReservationKeepsTheOneBehindItWaiting() async throws {
        let limiter = FeedMemoryLimiter(limit: 100)
        var holder = await limiter.reserve(200, within: 100)
        let behind = Task { await limiter.reserve(200, within: 100)?.bytes }
        try await Task.sleep(for: .milliseconds(100))
        let grown = await limiter.grow(try #require(holder), to: 201, within: 100)
        #expect(grown && holder?.bytes == 201 && limiter.held == 201)
        holder = nil
        #expect(await behind.value == 200)
    }

    /// A growth that waits first in line holds nothing; cancelled, it ends, and releasing it gives back nothing.
    @Test func aCancelledGrowthHoldsNothing() async throws {
        let limiter = FeedMemoryLimiter(limit: 100)
        let first = try #require(await limiter.reserve(40, within: 100))
        let second = try #require(await limiter.reserve(40, within: 100))
        let growing = Task { await limiter.grow(first, to: 70, within: 100) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(limiter.held == 40, "it gave its bytes back to wait first in line")
        growing.cancel()
        #expect(await growing.value == false)
        #expect(first.bytes == 0)
        withExtendedLifetime((first, second)) {}
    }

    @Test func aTaskCancelledBeforeItAsksGetsNoReservation() async {
        let limiter = FeedMemoryLimiter(limit: 100)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await limiter.reserve(10, within: 100) != nil
        }
        // Nothing holds the budget, so only the cancellation can refuse it.
        #expect(await task.value == false)
        #expect(limiter.held == 0)
    }
}

/// The most holders at once.
private final class Peak: Sendable {
    private let state = Mutex((now: 0, most: 0))

    func count(_ change: Int) {
        state.withLock { state in
            state.now += change
            state.most = max(state.most, state.now)
        }
    }

    var most: Int { state.withLock { $0.most } }
}
