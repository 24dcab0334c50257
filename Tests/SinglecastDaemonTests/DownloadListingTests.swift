import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// The order `downloads` lists in, and what a queued download waits for.
@Suite struct DownloadListingTests {
    typealias Machine = DownloadQueueStateMachine

    private func record(
        _ id: Int64,
        host: String = "a.example",
        state: DownloadRecord.State = .queued,
        addedAt: Int64 = 0,
        completedAt: Int64? = nil
    ) -> DownloadRecord {
        var record = DownloadRecord(
            id: id,
            url: "http://\(host)/\(id).bin",
            directory: "/srv/episodes",
            fileName: "\(id).bin",
            position: id,
            addedAt: addedAt
        )
        record.state = state
        record.completedAt = completedAt
        return record
    }

    @Test func unfinishedDownloadsComeInQueueOrderThenFinishedOnesNewestFirst() {
        var machine = Machine()
        machine.load([
            record(1, state: .completed, addedAt: 10, completedAt: 100),
            record(2, state: .completed, addedAt: 20, completedAt: 300),
            record(3, state: .failed, addedAt: 50),
            record(4, state: .failed, addedAt: 200),
            record(5, state: .paused),
            record(6),
            record(7, state: .completed, addedAt: 30, completedAt: 200),
        ])
        #expect(machine.orderedRecords().map(\.id) == [6, 5, 4, 3, 2, 7, 1])
    }

    @Test func aDueDownloadWhoseHostHasNoFreeSlotNamesTheHost() {
        var machine = Machine()
        machine.load([record(1), record(2), record(3), record(4, host: "b.example")])
        _ = machine.gateChanged(closedBecause: nil)
        var scheduler = QueueScheduler()
        scheduler.maximumPerHost = 2
        scheduler.maximumConcurrent = 2
        _ = machine.startDue(scheduler, now: 0)
        #expect(machine.holdsSlot(1) && machine.holdsSlot(2))
        let busy = machine.busyHosts(scheduler)
        #expect(busy == ["a.example"])
        #expect(machine.waitingForHost(3, busyHosts: busy, now: 0) == "a.example")
        // b.example waits for a slot of the whole queue, not of its host.
        #expect(machine.waitingForHost(4, busyHosts: busy, now: 0) == nil)
        #expect(machine.waitingForHost(1, busyHosts: busy, now: 0) == nil, "a running download waits for nothing")
    }
}
