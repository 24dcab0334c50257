import SinglecastDaemon
import SinglecastHTTP
import SinglecastStore
import Testing

/// The queue's decisions with no I/O at all: each race a crash-torture run or a client can cause, fed as events.
@Suite struct DownloadQueueStateMachineTests {
    typealias Machine = DownloadQueueStateMachine

    private func record(
        _ id: Int64,
        _ name: String = "a.bin",
        host: String = "a.example",
        state: DownloadRecord.State = .queued
    ) -> DownloadRecord {
        var record = DownloadRecord(
            id: id,
            url: "http://\(host)/\(name)",
            directory: "/srv/episodes",
            fileName: name,
            position: id,
            addedAt: 0
        )
        record.state = state
        return record
    }

    /// A machine holding `records`, with `started` downloads opened and transferring.
    private func machine(_ records: [DownloadRecord], transferring started: [Int64] = []) -> Machine {
        var machine = Machine()
        machine.load(records)
        let starts = machine.startDue(QueueScheduler(), now: 0)
        for id in started {
            #expect(starts.contains(.startTransfer(id)))
            #expect(
                machine.resumePlan(id, fileSize: 0, distrustUncheckpointedBytes: false)
                    == .transfer(offset: 0, truncate: false)
            )
            _ = machine.began(id)
        }
        return machine
    }

    /// A machine whose download 1 has received all of its 5 bytes and is named, about to be committed.
    private func completing() -> (Machine, DownloadRecord) {
        var machine = machine([record(1)], transferring: [1])
        _ = machine.transferEnded(1)
        _ = machine.finished(1, .completed(response(5), bytesInFile: 5), fileSize: 5)
        _ = machine.chooseName(1, bytes: 5, partialPath: "/srv/episodes/a.bin.part") { _ in false }
        return (machine, machine.completedRecord(1, now: 42))
    }

    private let noRetry: RetryPolicy = {
        var policy = RetryPolicy()
        policy.maximumAttempts = 1
        return policy
    }()

    private func response(_ total: Int64) -> TransferResponse {
        TransferResponse(status: 200, finalURL: "http://a.example/a.bin", etag: "\"v1\"", totalLength: total)
    }

    @Test func startingADownloadMakesItActiveAndHoldsItsSlot() {
        var machine = machine([record(1)])
        #expect(machine.records[1]?.state == .active)
        #expect(machine.lives[1] == .opening)
        var started = record(1, state: .active)
        started.attempts = 1
        #expect(machine.began(1) == [.publish(.started, started)])
        #expect(machine.pace(of: 1) != nil)
        #expect(machine.holdsSlot(1))
    }

    @Test func aFinishingDownloadGivesItsSlotAwayButCannotStartAgain() {
        var machine = machine([record(1, host: "h"), record(2, "b.bin", host: "h"), record(3, "c.bin", host: "h")])
        // Two per host by default: 1 and 2 run, 3 waits.
        #expect(machine.lives[3] == .idle(.queued))
        _ = machine.began(1)
        #expect(machine.transferEnded(1) == [.reschedule])
        #expect(machine.lives[1] == .finishing(collisions: []))
        // Paused and resumed while it finishes: it is queued again, yet must not run a second transfer.
        _ = try? machine.pause(.ids([1]))
        _ = try? machine.resume(.ids([1]))
        #expect(machine.records[1]?.state == .queued)
        let actions = machine.startDue(QueueScheduler(), now: 0)
        #expect(actions == [.startTransfer(3)])
        #expect(machine.lives[1] == .windingDown(.queued, holdsSlot: false))
        // Once the attempt ends it may start again.
        _ = machine.attemptEnded(1)
        #expect(machine.lives[1] == .idle(.queued))
    }

    @Test func aPauseWhileOpeningStopsTheTransferAndSendsNothing() throws {
        var machine = machine([record(1)])
        let actions = try machine.pause(.ids([1]))
        #expect(actions.contains(.stopTransfer(1)))
        #expect(machine.resumePlan(1, fileSize: 100, distrustUncheckpointedBytes: false) == .stopped)
        #expect(machine.stopped(1) == [.persist([record(1, state: .paused)], .powerLoss)])
        #expect(machine.attemptEnded(1) == [.reschedule])
        #expect(machine.lives[1] == .idle(.paused))
    }

    @Test func aCancelWhileTransferringRemovesTheDownloadWhenTheTransferStops() throws {
        var machine = machine([record(1)], transferring: [1])
        let actions = try machine.cancel([1], deletePartial: true)
        #expect(actions.first.map { if case .persist = $0 { true } else { false } } == true)
        #expect(actions.contains(.stopTransfer(1)))
        #expect(!actions.contains { if case .delete = $0 { true } else { false } })
        // The name stays claimed while the transfer may still write the partial file.
        #expect(machine.records[1]?.state == .cancelled)
        _ = machine.transferEnded(1)
        let step = machine.finished(
            1,
            .failed(TransferError(code: .cancelled, message: "stopped"), response: nil, bytesInFile: 10),
            fileSize: 10
        )
        #expect(step == .keepThenFail(.transfer(TransferError(code: .cancelled, message: "stopped")), bytes: 10))
        let removal = machine.stopped(1)
        #expect(removal.count == 3)
        #expect(removal[1] == .delete([1]))
        #expect(machine.records[1] == nil)
        #expect(machine.attemptEnded(1) == [.reschedule])
    }

    @Test func aCancelWhileFinishingIsCarriedOutWhenTheAttemptEnds() throws {
        var machine = machine([record(1)], transferring: [1])
        _ = machine.transferEnded(1)
        #expect(machine.finished(1, .completed(response(5), bytesInFile: 5), fileSize: 5) == .complete(bytes: 5))
        let actions = try machine.cancel([1], deletePartial: false)
        #expect(!actions.contains(.stopTransfer(1)))
        #expect(machine.records[1]?.state == .cancelled)
        // The file synced; the completion sees the cancel and concludes it instead.
        #expect(!machine.stillActive(1))
        _ = machine.stopped(1)
        #expect(machine.records[1] == nil)
        #expect(machine.attemptEnded(1) == [.reschedule])
    }

    @Test func aCancelDuringTheLastCommitRemovesTheEntryAndKeepsTheFile() throws {
        let (named, completed) = completing()
        var machine = named
        _ = try machine.cancel([1], deletePartial: true)
        let actions = machine.committed(completed, runsHook: true)
        #expect(!actions.contains(.runHook(completed)))
        #expect(!actions.contains(.publish(.completed, completed)))
        #expect(machine.records[1] == nil)
    }

    @Test func aPauseDuringTheLastCommitYieldsToTheCompletion() throws {
        let (named, completed) = completing()
        var machine = named
        _ = try machine.pause(.ids([1]))
        let actions = machine.committed(completed, runsHook: true)
        // Saved over the pause, then announced, then the hook.
        #expect(actions.first == .persist([completed], .powerLoss))
        #expect(actions.suffix(2) == [.publish(.completed, completed), .runHook(completed)])
        #expect(machine.records[1]?.state == .completed)
        #expect(machine.records[1]?.completedAt == 42)
    }

    @Test func aCompletedDownloadNeverTakesAKeptPartialFileOrAClaimedName() {
        // 2 is unfinished and will be "b.bin"; "a (2).bin.part" was kept by a cancel.
        var machine = machine([record(1), record(2, "b.bin", state: .paused)], transferring: [1])
        _ = machine.transferEnded(1)
        _ = machine.finished(1, .completed(response(5), bytesInFile: 5), fileSize: 5)
        var taken: Set<String> = ["/srv/episodes/a.bin", "/srv/episodes/a (2).bin.part"]
        let named = machine.chooseName(1, bytes: 5, partialPath: "/srv/episodes/a.bin.part") { taken.contains($0) }
        #expect(named.fileName == "a (3).bin")
        // The bytes are still in the old partial file until the rename: its name is recorded with the new one.
        #expect(named.partialName == "a.bin.part")
        #expect(named.partialPath == "/srv/episodes/a.bin.part")
        // A file that appeared at the last moment: the next free name.
        taken.insert("/srv/episodes/a (3).bin")
        #expect(
            machine.chooseName(1, bytes: 5, partialPath: "/srv/episodes/a.bin.part") { taken.contains($0) }.fileName
                == "a (4).bin"
        )
        // Another download's future name is not free either.
        var other = self.machine([record(3, "b.bin")], transferring: [3])
        other.load([record(4, "b.bin", state: .paused)])
        _ = other.transferEnded(3)
        _ = other.finished(3, .completed(response(5), bytesInFile: 5), fileSize: 5)
        #expect(
            other.chooseName(3, bytes: 5, partialPath: "/srv/episodes/b.bin.part") { _ in false }.fileName
                == "b (2).bin"
        )
    }

    /// A transfer the shutdown stopped is no failure: the download is saved queued (it resumes at the next start),
    /// with no retry counted against it and nothing announced.
    @Test func aTransferStoppedByTheShutdownIsQueuedNotFailed() {
        var machine = machine([record(1)], transferring: [1])
        _ = machine.transferEnded(1)
        let stopped = TransferError(code: .cancelled, message: "stopped")
        let step = machine.finished(1, .failed(stopped, response: nil, bytesInFile: 3), fileSize: 3)
        #expect(step == .keepThenFail(.transfer(stopped), bytes: 3))
        machine.kept(1, bytes: 3)
        let actions = machine.failed(1, .transfer(stopped), policy: RetryPolicy(), now: 0, random: 0)
        #expect(saved(actions).map(\.state) == [.queued])
        #expect(saved(actions).map(\.bytesDone) == [3])
        #expect(published(actions).isEmpty)
        #expect(machine.records[1]?.nextAttemptAt == nil)
        _ = machine.attemptEnded(1)
        #expect(machine.lives[1] == .idle(.queued))
    }

    /// The actor only says how the rename went; the machine chooses the next name, remembers the taken one (even
    /// if it vanished before the next look), or fails the download.
    @Test func aRenameThatFindsItsNameTakenTriesTheNextNameAndAFailedOneFails() {
        var machine = machine([record(1)], transferring: [1])
        _ = machine.transferEnded(1)
        _ = machine.finished(1, .completed(response(5), bytesInFile: 5), fileSize: 5)
        let partial = "/srv/episodes/a.bin.part"
        let first = machine.nameFile(1, bytes: 5, partialPath: partial) { _ in false }
        guard case .rename(let path, let actions) = first else {
            Issue.record("no rename: \(first)")
            return
        }
        #expect(path == "/srv/episodes/a.bin")
        #expect(saved(actions).map(\.path) == [path], "the name is saved before the rename")
        // "a.bin" appeared and went again before the next look: the machine still does not take it.
        let second = machine.renamed(1, .nameTaken, bytes: 5, partialPath: partial, now: 7) { _ in false }
        guard case .rename(let next, let again) = second else {
            Issue.record("no second rename: \(second)")
            return
        }
        #expect(next == "/srv/episodes/a (2).bin")
        #expect(saved(again).map(\.fileName) == ["a (2).bin"])
        #expect(saved(again).first?.partialName == "a.bin.part", "the bytes are still under the old name")
        #expect(machine.lives[1] == .finishing(collisions: ["/srv/episodes/a.bin"]))
        let third = machine.renamed(1, .nameTaken, bytes: 5, partialPath: partial, now: 7) { _ in false }
        guard case .rename(let last, _) = third else {
            Issue.record("no third rename: \(third)")
            return
        }
        #expect(last == "/srv/episodes/a (3).bin", "counted from the partial file's name")
        guard
            case .commit(let done) = machine.renamed(
                1,
                .renamed,
                bytes: 5,
                partialPath: partial,
                now: 9,
                exists: { _ in false }
            )
        else {
            Issue.record("no commit")
            return
        }
        #expect(done.state == .completed && done.fileName == "a (3).bin" && done.partialName == nil)
        #expect(done.completedAt == 9)
        // A rename the system refused fails the download with the path it was for.
        var refused = self.machine([record(2, "b.bin")], transferring: [2])
        _ = refused.transferEnded(2)
        _ = refused.finished(2, .completed(response(5), bytesInFile: 5), fileSize: 5)
        _ = refused.nameFile(2, bytes: 5, partialPath: "/srv/episodes/b.bin.part") { _ in false }
        #expect(
            refused.renamed(2, .failed(errno: 13), bytes: 5, partialPath: "/srv/episodes/b.bin.part", now: 9) { _ in
                false
            } == .fail(.file(.rename, errno: 13, path: "/srv/episodes/b.bin"))
        )
    }

    /// `clear` decides which rows the store clears (completed: an episode may still point at the file) and which it
    /// deletes; a discard decides which downloads are cancelled, whose files are deleted and which are forgotten.
    @Test func clearAndDiscardSplitTheirDownloadsInTheMachine() throws {
        var machine = machine([
            record(1, state: .completed), record(2, "b.bin", state: .failed), record(3, "c.bin", state: .paused),
        ])
        let clearing = machine.clear([.completed, .failed])
        #expect(clearing.records.map(\.id) == [1, 2])
        #expect(clearing.unlist == [1])
        #expect(clearing.delete == [2])
        #expect(!machine.isVisible(1) && !machine.isVisible(2))
        // A discard of a cleared (unlisted) completed download, a paused one and an unknown one.
        let discarding = try machine.discard([1, 3, 9], deleteFiles: true)
        #expect(discarding.dispose.map(\.id) == [1])
        #expect(discarding.forget.isEmpty)
        #expect(discarding.cancel.contains(.delete([3])), "the paused one is cancelled, its partial file deleted")
        #expect(machine.records[3] == nil)
        #expect(discarding.cancel.contains { if case .discardPartial(let r) = $0 { r.deletePartial } else { false } })
        // Without deleting files, completed downloads are forgotten with their files kept.
        var keep = self.machine([record(4, "d.bin", state: .completed)])
        let kept = try keep.discard([4], deleteFiles: false)
        #expect(kept.forget.map(\.id) == [4] && kept.dispose.isEmpty && kept.cancel.isEmpty)
    }

    /// Each download is one Live state: a pace only while bytes arrive, a slot only while opening or transferring
    /// (or stopping), and the stored state always derived from it.
    @Test func aDownloadsLiveStateCarriesOnlyWhatExistsInIt() throws {
        var machine = machine([record(1), record(2, "b.bin")], transferring: [1])
        #expect(machine.lives[2] == .opening)
        #expect(machine.pace(of: 2) == nil, "no pace before bytes arrive")
        #expect(machine.pace(of: 1) != nil)
        // A pause while transferring: paused at once (stored so), its slot held until the transfer stops, no pace.
        _ = try machine.pause(.ids([1]))
        #expect(machine.lives[1] == .windingDown(.paused, holdsSlot: true))
        #expect(machine.records[1]?.state == .paused)
        #expect(machine.pace(of: 1) == nil)
        #expect(machine.holdsSlot(1))
        // Resumed before the transfer stopped: queued, yet it does not start while its attempt winds down.
        _ = try machine.resume(.ids([1]))
        #expect(machine.lives[1] == .windingDown(.queued, holdsSlot: true))
        #expect(!machine.startDue(QueueScheduler(), now: 0).contains(.startTransfer(1)))
        _ = machine.transferEnded(1)
        #expect(!machine.holdsSlot(1))
        _ = machine.attemptEnded(1)
        #expect(machine.lives[1] == .idle(.queued))
        #expect(machine.startDue(QueueScheduler(), now: 0).contains(.startTransfer(1)))
        // Every record's state is its Live state's.
        for (id, live) in machine.lives { #expect(machine.records[id]?.state == live.stored) }
        #expect(machine.totalRate == 0)
    }

    @Test func enqueuesNeverChooseANameTakenOrReservedMeanwhile() {
        var machine = machine([record(1, "a.bin", state: .paused)])
        let first = machine.reserveNames([("/srv/episodes", "a.bin"), ("/srv/episodes", "a.bin")]) { _, name in
            name == "a (2).bin.part"  // kept by a cancel
        }
        #expect(first == ["/srv/episodes/a (3).bin", "/srv/episodes/a (4).bin"])
        // A second enqueue while the first one commits.
        let second = machine.reserveNames([("/srv/episodes", "a.bin")]) { _, _ in false }
        #expect(second == ["/srv/episodes/a (2).bin"])
        _ = machine.enqueued([], reserved: first)
        #expect(machine.reserveNames([("/srv/episodes", "a.bin")]) { _, _ in false } == ["/srv/episodes/a (3).bin"])
    }

    @Test func aFailureIsRetriedAtItsTimeAndStartsWhenTheClockGetsThere() {
        var machine = machine([record(1)], transferring: [1])
        _ = machine.transferEnded(1)
        let step = machine.finished(
            1,
            .httpError(TransferResponse(status: 503, finalURL: "http://a.example/a.bin")),
            fileSize: 0
        )
        guard case .fail(let failure) = step else {
            Issue.record("a 503 is a failure, got \(step)")
            return
        }
        let actions = machine.failed(1, failure, policy: RetryPolicy(), now: 1_000, random: 0.5)
        #expect(actions.contains { if case .publish(.retrying, _) = $0 { true } else { false } })
        let at = try? #require(machine.records[1]?.nextAttemptAt)
        #expect((at ?? 0) > 1_000)
        _ = machine.attemptEnded(1)
        #expect(machine.startDue(QueueScheduler(), now: 1_000) == [.wake(at: at ?? 0)])
        #expect(machine.startDue(QueueScheduler(), now: at ?? 0) == [.startTransfer(1)])
    }

    @Test func aFailureAfterAPauseConcludesThePauseInstead() throws {
        var machine = machine([record(1)], transferring: [1])
        _ = try machine.pause(.ids([1]))
        _ = machine.transferEnded(1)
        let error = TransferError(code: .cancelled, message: "stopped")
        #expect(
            machine.finished(1, .failed(error, response: nil, bytesInFile: 7), fileSize: 7)
                == .keepThenFail(.transfer(error), bytes: 7)
        )
        machine.kept(1, bytes: 7)
        let actions = machine.failed(1, .transfer(error), policy: noRetry, now: 0, random: 0)
        #expect(machine.records[1]?.state == .paused)
        #expect(machine.records[1]?.bytesDone == 7)
        #expect(actions.count == 1)  // the checkpoint, no failure
    }

    @Test func aBodyThatIsNotTheMediaAnnouncedFailsForGoodAndTheRetryStartsAfresh() throws {
        var machine = machine([record(1, "a.mp3")], transferring: [1])
        _ = machine.transferEnded(1)
        #expect(machine.finished(1, .completed(response(5), bytesInFile: 5), fileSize: 5) == .complete(bytes: 5))
        // The queue removed the partial file: nothing of the page is trusted again, not even its size.
        machine.partialRemoved(1)
        let failure = DownloadFailure.notMedia(announced: "audio/mpeg", received: "text/html")
        let actions = machine.failed(1, failure, policy: RetryPolicy(), now: 0, random: 0)
        #expect(actions.contains { if case .publish(.failed, _) = $0 { true } else { false } })
        let failed = try #require(machine.records[1])
        #expect(failed.state == .failed)
        #expect(failed.errorCode == "not_media")
        #expect(failed.nextAttemptAt == nil)
        #expect(failed.bytesDone == 0 && failed.bytesTotal == nil && failed.etag == nil)
        _ = machine.attemptEnded(1)
        #expect(machine.startDue(QueueScheduler(), now: 0).isEmpty)
        _ = try machine.retry(.ids([1]))
        #expect(machine.startDue(QueueScheduler(), now: 0) == [.startTransfer(1)])
        #expect(
            machine.resumePlan(1, fileSize: 0, distrustUncheckpointedBytes: false)
                == .transfer(offset: 0, truncate: false)
        )
    }

    @Test func aLengthMismatchStartsOverAndAnUnsatisfiableRangeOfACompleteFileCompletes() {
        var machine = machine([record(1), record(2, "b.bin")], transferring: [1, 2])
        _ = machine.transferEnded(1)
        #expect(
            machine.finished(1, .completed(response(10), bytesInFile: 8), fileSize: 8)
                == .startOver(.lengthMismatch(received: 8, announced: 10))
        )
        #expect(machine.records[1]?.bytesDone == 0)
        _ = machine.transferEnded(2)
        let answer = TransferResponse(status: 416, finalURL: "http://a.example/b.bin", totalLength: 9)
        #expect(machine.finished(2, .rangeNotSatisfiable(answer), fileSize: 9) == .complete(bytes: 9))
    }

    @Test func bytesWithoutAValidatorAreNeverResumedFromAndDistrustedTailsAreCut() {
        var withValidator = record(1)
        withValidator.etag = "\"v1\""
        withValidator.bytesDone = 100
        let machine = machine([withValidator, record(2, "b.bin")])
        #expect(
            machine.resumePlan(1, fileSize: 150, distrustUncheckpointedBytes: false)
                == .transfer(offset: 150, truncate: false)
        )
        #expect(
            machine.resumePlan(1, fileSize: 150, distrustUncheckpointedBytes: true)
                == .transfer(offset: 100, truncate: true)
        )
        #expect(
            machine.resumePlan(2, fileSize: 150, distrustUncheckpointedBytes: false)
                == .transfer(offset: 0, truncate: true)
        )
    }

    private func recovered(
        _ stored: DownloadRecord,
        partialExists: Bool,
        finalSize: Int64?,
        marked: Bool
    ) -> Machine.Recovery {
        Machine.recover(stored, partialExists: partialExists, finalSize: finalSize, finalMarked: marked, now: 9)
    }

    @Test func startUpFinishesWhatACrashInterrupted() {
        var renamed = record(1, state: .active)
        renamed.bytesTotal = 5
        renamed.bytesDone = 5
        // The file is in place and its partial file gone: the rename happened, the commit did not.
        guard
            case .keep(let done, true) = recovered(renamed, partialExists: false, finalSize: 5, marked: false)
        else {
            Issue.record("a renamed download is kept")
            return
        }
        #expect(done.state == .completed)
        #expect(done.completedAt == 9)
        // A new name was recorded, then the daemon died before the rename: the bytes are under the old name.
        var named = record(2, "b (2).bin", state: .active)
        named.partialName = "b.bin.part"
        guard
            case .keep(let back, true) = recovered(named, partialExists: false, finalSize: nil, marked: false)
        else {
            Issue.record("a named download is kept")
            return
        }
        #expect(back.fileName == "b.bin")
        #expect(back.state == .queued)
        #expect(back.partialPath == "/srv/episodes/b.bin.part")
        #expect(
            recovered(record(3, state: .cancelled), partialExists: true, finalSize: nil, marked: false)
                == .discard(record(3, state: .cancelled))
        )
    }

    /// A marked file under the row's name is the download's, whatever size the row last saved; without the mark,
    /// a file of another size there is someone else's.
    @Test func startUpCompletesADownloadByTheMarkOnItsFile() {
        var renamed = record(1, state: .active)
        renamed.bytesDone = 100
        guard
            case .keep(let done, true) = recovered(renamed, partialExists: false, finalSize: 5, marked: true)
        else {
            Issue.record("a marked download is kept")
            return
        }
        #expect(done.state == .completed)
        #expect(done.bytesDone == 5 && done.bytesTotal == 5)
        guard
            case .keep(let other, _) = recovered(renamed, partialExists: false, finalSize: 5, marked: false)
        else {
            Issue.record("an unmarked download is kept")
            return
        }
        #expect(other.state == .queued)
        // With its partial file still there, the rename did not happen: the mark is on someone's copy.
        guard
            case .keep(let resumed, _) = recovered(renamed, partialExists: true, finalSize: 5, marked: true)
        else {
            Issue.record("a partly downloaded one is kept")
            return
        }
        #expect(resumed.state == .queued)
    }

    @Test func commandsRefuseUnknownAndFinishedDownloads() throws {
        var machine = machine([record(1, state: .completed), record(2, "b.bin")])
        #expect(throws: DownloadQueueError.self) { try machine.pause(.ids([9])) }
        #expect(throws: DownloadQueueError.self) { try machine.move(1, to: .top) }
        #expect(throws: DownloadQueueError.self) { try machine.move(2, to: .before(9)) }
        // Cancelling a completed download changes nothing; an idle one goes at once.
        #expect(try machine.cancel([1], deletePartial: false) == [.persist([], .powerLoss)])
        var idle = self.machine([record(3, state: .paused)])
        let actions = try idle.cancel([3], deletePartial: true)
        #expect(actions.contains(.delete([3])))
        #expect(idle.records[3] == nil)
    }

    // MARK: - Races of one owner (each was a way the queue lost or misreported a download)

    /// The records `actions` save, in order.
    private func saved(_ actions: [Machine.Action]) -> [DownloadRecord] {
        actions.flatMap { action -> [DownloadRecord] in
            guard case .persist(let rows, _) = action else { return [] }
            return rows
        }
    }

    /// The events `actions` publish, as "event id".
    private func published(_ actions: [Machine.Action]) -> [String] {
        actions.compactMap { action -> String? in
            guard case .publish(let event, let row) = action else { return nil }
            return "\(event) \(row.id)"
        }
    }

    @Test func aRetryRacingClearOfFailedDownloadsKeepsTheRetriedTransfer() throws {
        var failed = record(1, state: .failed)
        failed.errorCode = "http_status"
        var machine = machine([failed, record(2, "b.bin", state: .failed)])
        // Another client's retry came first: its transfer runs, and the clear leaves it alone.
        _ = try machine.retry(.ids([1]))
        #expect(machine.startDue(QueueScheduler(), now: 0) == [.startTransfer(1)])
        _ = machine.began(1)
        // `clear --failed` takes its downloads off the list before its rows are cleared: a retry meanwhile finds
        // nothing to retry, rather than a download that the clear then deletes under its transfer.
        let cleared = machine.clear([.failed]).records
        #expect(cleared.map(\.id) == [2])
        #expect(throws: DownloadQueueError.self) { try machine.retry(.ids([2])) }
        #expect(machine.startDue(QueueScheduler(), now: 0).isEmpty)
        _ = machine.cleared(cleared, unlisted: [], deletePartial: false)
        #expect(machine.records[2] == nil)
        _ = machine.transferEnded(1)
        #expect(machine.finished(1, .completed(response(5), bytesInFile: 5), fileSize: 5) == .complete(bytes: 5))
        // A clear the store did not save lists its downloads again.
        var again = self.machine([record(3, "c.bin", state: .failed)])
        let notSaved = again.clear([.failed]).records
        again.clearNotSaved(notSaved)
        #expect(again.isVisible(3))
    }

    @Test func aMoveDuringTheLastCommitDoesNotLeaveTheRowActive() throws {
        let (named, completed) = completing()
        var machine = named
        machine.load([record(2, "b.bin")])
        let move = try machine.move(1, to: .bottom)
        // The move saved download 1 as the table had it: still active.
        #expect(saved(move).contains { $0.id == 1 && $0.state == .active })
        let actions = machine.committed(completed, runsHook: false)
        #expect(
            saved(actions).contains { $0.id == 1 && $0.state == .completed },
            "the completion is saved over the move"
        )
        #expect(machine.records[1]?.state == .completed)
    }

    @Test func nowDuringTheLastCommitDoesNotLeaveTheRowActive() {
        let (named, completed) = completing()
        var machine = named
        let expedite = machine.expedite([1])
        #expect(saved(expedite).map(\.id) == [1])
        let actions = machine.committed(completed, runsHook: false)
        #expect(
            saved(actions).contains { $0.id == 1 && $0.state == .completed },
            "the completion is saved over the --now"
        )
    }

    @Test func aCancelledDownloadWindingDownIsNotListed() throws {
        var machine = machine([record(1), record(2, "b.bin")], transferring: [1])
        _ = try machine.cancel([1], deletePartial: true)
        #expect(machine.records[1]?.state == .cancelled, "the record stays until its transfer stops")
        #expect(machine.orderedRecords().map(\.id) == [2])
    }

    @Test func theFirstOpenGateChangesNothingThatWasAlreadyQueued() {
        var gated = record(3, "c.bin", state: .paused)
        gated.pauseReason = GateReason.outsideWindow.rawValue
        var machine = Machine()
        machine.load([record(1), record(2, "b.bin"), gated])
        let actions = machine.gateChanged(closedBecause: nil)
        // Only the download the gate had paused before the restart changes.
        #expect(saved(actions).map(\.id) == [3])
        #expect(published(actions) == ["resumed 3"])
        // Nothing at all when nothing was held.
        var idle = Machine()
        idle.load([record(1)])
        #expect(
            idle.gateChanged(closedBecause: nil).filter { if case .reschedule = $0 { false } else { true } }.isEmpty
        )
    }

    /// The gate turned while an enqueue was being committed: the new downloads follow the gate as it is after the
    /// commit, neither left paused behind a gate that opened nor started past one that closed.
    @Test func aGateTurningDuringAnEnqueuesCommitIsFollowedByTheNewDownloads() {
        var machine = Machine()
        _ = machine.gateChanged(closedBecause: nil)
        let queued = machine.admitted(record(1))
        #expect(queued.state == .queued)
        // The gate closes while the enqueue's transaction runs: the table does not know download 1 yet.
        _ = machine.gateChanged(closedBecause: .metered)
        let closed = machine.enqueued([queued], reserved: [queued.path])
        #expect(machine.records[1]?.state == .paused)
        #expect(machine.records[1]?.pauseReason == GateReason.metered.rawValue)
        #expect(saved(closed).map(\.id) == [1], "the stored row follows the gate too")
        #expect(published(closed) == ["added 1"])
        #expect(machine.startDue(QueueScheduler(), now: 0).isEmpty)
        // The other way: admitted behind the closed gate, which opens before the commit ends.
        let held = machine.admitted(record(2, "b.bin"))
        #expect(held.state == .paused)
        _ = machine.gateChanged(closedBecause: nil)
        let opened = machine.enqueued([held], reserved: [held.path])
        #expect(machine.records[2]?.state == .queued)
        #expect(saved(opened).map(\.state) == [.queued])
        #expect(machine.startDue(QueueScheduler(), now: 0).contains(.startTransfer(2)))
        // A gate that did not turn costs no second write.
        var still = Machine()
        _ = still.gateChanged(closedBecause: nil)
        #expect(saved(still.enqueued([still.admitted(record(3, "c.bin"))], reserved: [])).isEmpty)
    }

    @Test func completionsArrivingDuringACommitGoTogetherInTheNextBatch() throws {
        var machine = machine(
            [record(1), record(2, "b.bin"), record(3, "c.bin", host: "c.example")],
            transferring: [1, 2, 3]
        )
        var synced = (1...3).map { id in
            _ = machine.transferEnded(Int64(id))
            return Machine.SyncedFile(id: Int64(id), bytes: 5, partialPath: "/srv/episodes/\(id).part")
        }
        synced.append(Machine.SyncedFile(id: 4, bytes: 5, partialPath: "/srv/episodes/d.bin.part"))
        #expect(machine.commitRequested(synced[0]) == .lead)
        #expect(machine.commitRequested(synced[1]) == .wait)
        #expect(machine.commitRequested(synced[2]) == .wait)
        let first = machine.commitBatch(leadBy: synced[0])
        #expect(first.map(\.id) == [1, 2, 3])
        let completed = first.map { machine.completedRecord($0.id, now: 9) }
        // While the first batch syncs: 3 is cancelled (its row is not written back), and 4 arrives.
        _ = try machine.cancel([3], deletePartial: false)
        #expect(machine.commitRequested(synced[3]) == .wait)
        let (rows, hooks) = machine.rowsToCommit(completed, runsHook: true)
        #expect(rows.map(\.id) == [1, 2])
        #expect(hooks == [1, 2])
        // The lead goes to 4, which commits alone; then the next completion leads again.
        #expect(machine.batchCommitted() == 4)
        #expect(machine.commitBatch(leadBy: synced[3]).map(\.id) == [4])
        #expect(machine.rowsToCommit([record(4, "d.bin", state: .completed)], runsHook: false).hooks.isEmpty)
        #expect(machine.batchCommitted() == nil)
        #expect(machine.commitRequested(synced[0]) == .lead)
    }

    /// A batch's files are named together, with one save before any rename; one paused while it waited for the
    /// batch keeps its bytes in its partial file, unnamed.
    @Test func aBatchNamesItsFilesWithOneSaveAndLeavesOutAStoppedOne() throws {
        let names = ["a.bin", "b.bin", "c.bin"]
        var machine = machine(
            [record(1), record(2, names[1], host: "b.example"), record(3, names[2], host: "c.example")],
            transferring: [1, 2, 3]
        )
        let batch = (1...3).map { id in
            _ = machine.transferEnded(Int64(id))
            return Machine.SyncedFile(id: Int64(id), bytes: 5, partialPath: "/srv/episodes/\(names[id - 1]).part")
        }
        _ = try machine.pause(.ids([3]))
        let (named, stopped, actions) = machine.nameBatch(batch) { $0 == "/srv/episodes/b.bin" }
        #expect(named.map(\.id) == [1, 2])
        #expect(stopped == [3])
        #expect(actions.count == 1, "one transaction for the whole batch")
        #expect(saved(actions).map(\.id) == [1, 2])
        #expect(saved(actions).map(\.fileName) == ["a.bin", "b (2).bin"])
        #expect(saved(actions).map(\.partialName) == [nil, "b.bin.part"], "the bytes are still under the old name")
        #expect(saved(actions).allSatisfy { $0.bytesDone == 5 && $0.bytesTotal == 5 })
        #expect(machine.records[3]?.fileName == "c.bin")
        #expect(machine.nameBatch([], exists: { _ in false }).actions.isEmpty)
    }

    /// A marked file that keeps its row's name saves nothing before its rename: its size goes with the completion.
    /// One whose name changes is saved as before.
    @Test func aBatchSavesOnlyTheNamesThatAMarkCannotStandFor() throws {
        let names = ["a.bin", "b.bin", "c.bin"]
        var machine = machine(
            [record(1), record(2, names[1], host: "b.example"), record(3, names[2], host: "c.example")],
            transferring: [1, 2, 3]
        )
        let batch = (1...3).map { id in
            _ = machine.transferEnded(Int64(id))
            return Machine.SyncedFile(
                id: Int64(id),
                bytes: 5,
                partialPath: "/srv/episodes/\(names[id - 1]).part",
                marked: id != 3
            )
        }
        let (named, _, actions) = machine.nameBatch(batch) { $0 == "/srv/episodes/b.bin" }
        #expect(named.map(\.id) == [1, 2, 3])
        #expect(saved(actions).map(\.id) == [2, 3], "b takes another name; c has no mark")
        #expect(saved(actions).map(\.fileName) == ["b (2).bin", "c.bin"])
        #expect(machine.records[1]?.bytesTotal == 5, "a's size waits in the table for the completion")
        #expect(machine.completedRecord(1, now: 9).bytesDone == 5)
        var allMarked = self.machine([record(4, "d.bin")], transferring: [4])
        _ = allMarked.transferEnded(4)
        let marked = Machine.SyncedFile(id: 4, bytes: 7, partialPath: "/srv/episodes/d.bin.part", marked: true)
        #expect(allMarked.nameBatch([marked]) { _ in false }.actions.isEmpty)
    }

    @Test func progressSetsTheSpeedCheckpointsAndPublishesAtMostWhenBytesArriveOrAStallGoesOn() throws {
        var machine = machine([record(1)])
        _ = machine.began(1, offset: 100, now: 0)
        func report(_ bytes: Int64, at now: Int64, etag: String? = nil) -> Machine.ProgressStep {
            machine.progressed(
                1,
                bytes: bytes,
                total: 10_000,
                etag: etag,
                lastModified: nil,
                now: now,
                checkpointBytes: 4_000,
                checkpointInterval: 60_000
            )
        }
        // The size is new: saved at once, after a sync; then the progress.
        #expect(report(1_100, at: 250) == .checkpoint(bytes: 1_100))
        #expect(machine.pace(of: 1)?.rate == 4_000)
        let synced = machine.progressSynced(1, bytes: 1_100, synced: true, now: 250)
        #expect(saved(synced).map(\.bytesDone) == [1_100])
        #expect(published(synced) == ["progress 1"])
        // Nothing new arrived: no event, and the speed decays.
        #expect(report(1_100, at: 500) == .perform([]))
        #expect(machine.pace(of: 1)?.rate == 2_800)
        #expect(machine.stalledSince(1, now: 5_000) == nil)
        // Bytes past the checkpoint distance: a checkpoint; a failed sync records nothing.
        #expect(report(5_200, at: 750) == .checkpoint(bytes: 5_200))
        #expect(saved(machine.progressSynced(1, bytes: 5_200, synced: false, now: 750)).isEmpty)
        #expect(report(5_200, at: 750) == .checkpoint(bytes: 5_200), "still due after a failed sync")
        #expect(saved(machine.progressSynced(1, bytes: 5_200, synced: true, now: 750)).map(\.bytesDone) == [5_200])
        // Stalled for 5 s: it says since when, and still publishes every 5 s.
        for now in stride(from: Int64(1_000), through: 5_500, by: 250) { _ = report(5_200, at: now) }
        #expect(machine.stalledSince(1, now: 5_750) == 750)
        guard case .perform(let actions) = report(5_200, at: 5_750) else {
            Issue.record("no checkpoint is due")
            return
        }
        #expect(published(actions) == ["progress 1"])
        #expect((machine.pace(of: 1)?.rate ?? 0) < 10, "the speed fell")
        // After a pause, nothing is published or saved.
        _ = try machine.pause(.ids([1]))
        #expect(report(6_000, at: 6_000) == .perform([]))
        #expect(machine.stalledSince(1, now: 20_000) == nil)
        #expect(machine.pace(of: 1) == nil, "a pace exists only while bytes arrive")
        _ = machine.transferEnded(1)
        #expect(machine.lives[1] == .windingDown(.paused, holdsSlot: false))
    }

    @Test func theSpeedIsOverTheTimeSinceTheLastReportHoweverLateOrEarlyItCame() {
        var machine = machine([record(1)])
        _ = machine.began(1, offset: 0, now: 1_000)
        func report(_ bytes: Int64, at now: Int64) {
            _ = machine.progressed(
                1,
                bytes: bytes,
                total: nil,
                etag: nil,
                lastModified: nil,
                now: now,
                checkpointBytes: 1 << 30,
                checkpointInterval: 60_000
            )
        }
        // The first report comes early (the queue looks at every transfer on one timer): 500 bytes in 100 ms.
        report(500, at: 1_100)
        #expect(machine.pace(of: 1)?.rate == 5_000)
        // A late one (a busy queue): 1,000 bytes in 500 ms, smoothed into the speed.
        report(1_500, at: 1_600)
        #expect(machine.pace(of: 1)?.rate == 5_000 * 0.7 + 2_000 * 0.3)
        // Two in the same millisecond divide by no zero.
        report(1_500, at: 1_600)
        #expect(machine.pace(of: 1)?.rate.isFinite == true)
    }

    // MARK: - A URL asked for again

    @Test func aCompletedDownloadWhoseFileIsThereAnswersTheSameURLAgain() throws {
        let done = record(1, "ep.mp3", state: .completed)
        let machine = machine([done])
        let again = Machine.Repeat(url: done.url, directory: nil, name: nil)
        #expect(try machine.existing(for: again) { _ in true }?.id == 1)
        // The same place named explicitly is still that download.
        let same = Machine.Repeat(url: done.url, directory: "/srv/episodes", name: "ep.mp3")
        #expect(try machine.existing(for: same) { _ in true }?.id == 1)
        // Its file deleted by hand: fetched again.
        #expect(try machine.existing(for: again) { _ in false } == nil)
        // Another name or directory asks for another copy.
        let renamed = Machine.Repeat(url: done.url, directory: nil, name: "copy.mp3")
        #expect(try machine.existing(for: renamed) { _ in true } == nil)
        let elsewhere = Machine.Repeat(url: done.url, directory: "/srv/other", name: nil)
        #expect(try machine.existing(for: elsewhere) { _ in true } == nil)
    }

    @Test func anUnfinishedDownloadIsNotSilentlyKeptWhereARequestDoesNotWantIt() throws {
        let failed = record(1, "ep.mp3", state: .failed)
        let machine = machine([failed])
        // Asked for again as it is: the store answers with it (existing), nothing is refused here.
        #expect(
            try machine.existing(for: Machine.Repeat(url: failed.url, directory: nil, name: nil)) { _ in true } == nil
        )
        #expect(throws: DownloadQueueError.self) {
            try machine.existing(for: Machine.Repeat(url: failed.url, directory: "/srv/other", name: nil)) { _ in true }
        }
        do {
            _ = try machine.existing(for: Machine.Repeat(url: failed.url, directory: nil, name: "x.mp3")) { _ in true }
            Issue.record("another name for a failed download was accepted")
        } catch {
            #expect(error.code == .invalid(parameter: "name"))
            #expect(error.message.contains("download 1 (failed"), "\(error.message)")
        }
    }

    // MARK: - Moving across priorities

    @Test func aMoveAcrossPrioritiesTakesThePriorityOfItsNewPlace() throws {
        var urgent = record(1, "a.bin")
        urgent.priority = 5
        var machine = Machine()
        machine.load([urgent, record(2, "b.bin"), record(3, "c.bin")])
        let order = { machine.orderedRecords().map(\.id) }
        #expect(order() == [1, 2, 3])
        _ = try machine.move(3, to: .before(1))
        #expect(order() == [3, 1, 2], "before a download of a higher priority means taking its priority")
        #expect(machine.records[3]?.priority == 5)
        _ = try machine.move(3, to: .bottom)
        #expect(order() == [1, 2, 3], "the bottom is below the lower priorities too")
        #expect(machine.records[3]?.priority == 0)
        _ = try machine.move(2, to: .top)
        #expect(order() == [2, 1, 3])
        #expect(machine.records[2]?.priority == 5)
        // Within one priority only the positions change.
        _ = try machine.move(3, to: .before(2))
        #expect(order() == [3, 2, 1])
        _ = try machine.move(1, to: .before(2))
        #expect(order() == [3, 1, 2])
        #expect(machine.records.values.map(\.priority).sorted() == [5, 5, 5])
    }

    // MARK: - Partial files of failed downloads

    @Test func aDownloadFailingForGoodDiscardsItsPartialFileWhenEmptyAndARetryDoesNot() throws {
        var machine = machine([record(1), record(2, "b.bin", host: "b.example")], transferring: [1, 2])
        for id: Int64 in [1, 2] { _ = machine.transferEnded(id) }
        let notFound = DownloadFailure.httpStatus(404, url: "http://a.example/a.bin", retryAfter: nil)
        let failed = machine.failed(1, notFound, policy: RetryPolicy(), now: 0, random: 0)
        let record = try #require(machine.records[1])
        #expect(record.state == .failed)
        // The queue removes it only when empty (or asked to): bytes a server sent stay for a `retry`.
        #expect(failed.contains(.discardPartial(record)))
        #expect(!record.deletePartial)
        let unavailable = DownloadFailure.httpStatus(503, url: "http://b.example/b.bin", retryAfter: nil)
        let retrying = machine.failed(2, unavailable, policy: RetryPolicy(), now: 0, random: 0)
        #expect(machine.records[2]?.state == .queued)
        #expect(!retrying.contains { if case .discardPartial = $0 { true } else { false } })
    }
}
