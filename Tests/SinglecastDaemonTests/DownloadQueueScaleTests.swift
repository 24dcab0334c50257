import SinglecastDaemon
import SinglecastHTTP
import SinglecastStore
import Testing

/// The work the queue's state machine does per start with many downloads queued, counted in queued entries it looks
/// at rather than timed: a daemon with 20,000 downloads failing against a refused port spent most of its CPU walking
/// every queued download at each start.
@Suite struct DownloadQueueScaleTests {
    typealias Machine = DownloadQueueStateMachine

    private func record(_ id: Int64, host: String, notBefore: Int64? = nil) -> DownloadRecord {
        var record = DownloadRecord(
            id: id,
            url: "http://\(host)/\(id).mp3",
            directory: "/srv/episodes",
            fileName: "\(id).mp3",
            position: id,
            addedAt: 0
        )
        record.nextAttemptAt = notBefore
        return record
    }

    /// Runs the opened download `id` into a 503, retried later, as a refused connection would be.
    private func fail(_ machine: inout Machine, _ id: Int64, now: Int64) {
        _ = machine.resumePlan(id, fileSize: 0, distrustUncheckpointedBytes: false)
        _ = machine.began(id, now: now)
        _ = machine.transferEnded(id)
        let step = machine.finished(id, .httpError(TransferResponse(status: 503, finalURL: "http://h/")), fileSize: 0)
        guard case .fail(let failure) = step else {
            Issue.record("a 503 is a failure, got \(step)")
            return
        }
        _ = machine.failed(id, failure, policy: RetryPolicy(), now: now, random: 0.5)
        _ = machine.attemptEnded(id)
    }

    private static func started(_ actions: [Machine.Action]) -> [Int64] {
        actions.compactMap { if case .startTransfer(let id) = $0 { id } else { nil } }
    }

    @Test func eachStartLooksAtAFewQueuedDownloadsNotAllOfThem() {
        let count: Int64 = 20_000
        var machine = Machine()
        machine.load((1...count).map { record($0, host: "refused.example") })
        var now: Int64 = 1_000
        var running = Self.started(machine.startDue(QueueScheduler(), now: now))
        #expect(running == [1, 2], "two per host, in queue order")
        var startedInAll = running.count
        var worst = 0
        for _ in 0..<500 {
            now += 1
            var next: [Int64] = []
            for id in running {
                fail(&machine, id, now: now)
                let before = machine.queueEntriesExamined
                next += Self.started(machine.startDue(QueueScheduler(), now: now))
                worst = max(worst, machine.queueEntriesExamined - before)
            }
            running = next
            startedInAll += next.count
        }
        #expect(startedInAll == 1_002, "every slot that freed was taken by the next queued download")
        #expect(running == [1_001, 1_002])
        #expect(worst <= 16, "a start looked at \(worst) of \(count) queued downloads")
    }

    @Test func retryTimesAndHostsKeepTheirOrderAtScale() {
        var machine = Machine()
        // Host a: 10,000 downloads waiting for their retry at 5,000. Host b: 10,000 due now. Host c: one, due now.
        machine.load(
            (1...10_000).map { record($0, host: "a.example", notBefore: 5_000) }
                + (10_001...20_000).map { record($0, host: "b.example") } + [record(20_001, host: "c.example")]
        )
        let first = machine.startDue(QueueScheduler(), now: 0)
        #expect(first == [.startTransfer(10_001), .startTransfer(10_002), .startTransfer(20_001), .wake(at: 5_000)])
        for id: Int64 in [10_001, 10_002, 20_001] { fail(&machine, id, now: 1) }
        let before = machine.queueEntriesExamined
        // Everything is due by now: a's retries and the three that failed, which come before 10,003 on b.
        let second = machine.startDue(QueueScheduler(), now: 100_000)
        #expect(Self.started(second) == [1, 2, 10_001])
        #expect(machine.queueEntriesExamined - before <= 10_016, "the due retries are moved once, then looked at")
        let third = machine.queueEntriesExamined
        fail(&machine, 1, now: 100_001)
        #expect(Self.started(machine.startDue(QueueScheduler(), now: 100_001)) == [3])
        #expect(machine.queueEntriesExamined - third <= 16)
    }
}
