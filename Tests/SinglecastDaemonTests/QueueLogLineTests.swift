import SinglecastDaemon
import SinglecastHTTP
import SinglecastStore
import Testing

/// What the queue writes to the journal says what happened: no `(0 download(s))` for a gate that let nothing go, and
/// attempts counted against `max_attempts`, never past it.
@Suite struct QueueLogLineTests {
    typealias Machine = DownloadQueueStateMachine

    private func logs(_ actions: [Machine.Action]) -> [String] {
        actions.compactMap { if case .log(_, let line) = $0 { line } else { nil } }
    }

    /// Download 1 after `attempts` earlier attempts, started again and failed with a 503.
    private func failing(after attempts: Int, policy: RetryPolicy) -> [String] {
        var record = DownloadRecord(
            id: 1,
            url: "http://a.example/a.bin",
            directory: "/srv",
            fileName: "a.bin",
            position: 1,
            addedAt: 0
        )
        record.attempts = attempts
        var machine = Machine()
        machine.load([record])
        _ = machine.startDue(QueueScheduler(), now: 0)
        _ = machine.resumePlan(1, fileSize: 0, distrustUncheckpointedBytes: false)
        _ = machine.began(1)
        _ = machine.transferEnded(1)
        let step = machine.finished(1, .httpError(TransferResponse(status: 503, finalURL: record.url)), fileSize: 0)
        guard case .fail(let failure) = step else {
            Issue.record("a 503 is a failure, got \(step)")
            return []
        }
        return logs(machine.failed(1, failure, policy: policy, now: 1_000, random: 0.5))
    }

    @Test func attemptsAreCountedAgainstMaxAttempts() throws {
        var policy = RetryPolicy()
        policy.maximumAttempts = 3
        let first = try #require(failing(after: 0, policy: policy).first)
        #expect(first.hasPrefix("download 1: attempt 1 of 3 failed, next in 1s: "), "\(first)")
        #expect(first.contains("503"), "\(first)")
        let last = try #require(failing(after: 2, policy: policy).first)
        #expect(last.hasPrefix("download 1 failed after 3 attempts: "), "\(last)")
        // max_attempts lowered by a reload below what a download already tried: it fails, counting what it tried.
        policy.maximumAttempts = 2
        let lowered = try #require(failing(after: 4, policy: policy).first)
        #expect(lowered.hasPrefix("download 1 failed after 5 attempts: "), "\(lowered)")
        #expect(!lowered.contains(" of "))
    }

    @Test func theGateSaysWhatItHeldOrLetGoAndNothingAtAQuietStart() {
        var machine = Machine()
        machine.load([])
        #expect(logs(machine.gateChanged(closedBecause: nil)).isEmpty, "the first open gate at start says nothing")
        #expect(logs(machine.gateChanged(closedBecause: .metered)) == ["downloads held: the network is metered"])
        #expect(logs(machine.gateChanged(closedBecause: nil)) == ["download gate open"])
        #expect(
            Machine.gateLine(.outsideWindow, changed: 1)
                == "downloads held: outside the download windows (1 download paused)"
        )
        #expect(Machine.gateLine(nil, changed: 4_990) == "download gate open (4,990 downloads resumed)")
    }
}
