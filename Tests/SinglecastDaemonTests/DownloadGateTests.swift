import SinglecastDaemon
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport
import Testing

/// `download_window` and the gate in front of the queue, with a hand-moved clock and hand-made time zones.
@Suite struct DownloadWindowTests {
    /// 2026-03-02 00:00:00 UTC, a Monday; every instant below is an offset from it.
    static let midnight: Int64 = 1_772_409_600

    private func at(_ hour: Int, _ minute: Int = 0, _ second: Int = 0, day: Int = 0) -> Int64 {
        Self.midnight + Int64(day * 86_400 + hour * 3600 + minute * 60 + second)
    }

    private func windows(_ text: String) throws -> DownloadWindows {
        try DownloadWindows.parse(text).get()
    }

    @Test func rangesAreRead() throws {
        #expect(try windows("01:00-06:00").windows == [DownloadWindow(start: 60, end: 360)])
        #expect(try windows(" 22:00-02:00 , 9:30-10:00").windows.map(\.description) == ["22:00-02:00", "09:30-10:00"])
        #expect(try windows("00:00-23:59").description == "00:00-23:59")
        #expect(DownloadWindows().description == "always")
        #expect(try windows("Always") == DownloadWindows())
    }

    @Test(arguments: [
        ("25:00-01:00", "'25:00' in '25:00-01:00' is not a time from 00:00 to 23:59"),
        ("01:00", "'01:00' is not a range such as 01:00-06:00"),
        ("a-b", "'a' in 'a-b' is not a time from 00:00 to 23:59"),
        ("", "it is empty"),
        ("  ", "it is empty"),
        ("01:00-01:00", "'01:00-01:00' starts and ends at the same time"),
        ("01:00-06:60", "'06:60' in '01:00-06:60' is not a time"),
        ("01:00-06:00,", "'' is not a range"),
        ("1:0-2:00", "'1:0' in '1:0-2:00' is not a time"),
        ("-1:00-02:00", "is not a range"),
        ("01:00-02:00-03:00", "is not a range"),
    ])
    func badValuesAreRefused(text: String, expected: String) {
        guard case .failure(let problem) = DownloadWindows.parse(text) else {
            Issue.record("'\(text)' was accepted")
            return
        }
        #expect(problem.message.contains(expected), "\(problem.message)")
    }

    @Test func theConfigurationNamesTheLine() throws {
        let config = try DaemonConfiguration.parse("download_window = 01:00-06:00, 13:00-14:00", path: "/c", home: "/h")
        #expect(config.downloadWindows.description == "01:00-06:00, 13:00-14:00")
        #expect(DaemonConfiguration().downloadWindows.windows.isEmpty)
        #expect(DaemonConfiguration().metered == .pause)
        #expect(try DaemonConfiguration.parse("metered = IGNORE", path: "/c", home: "/h").metered == .ignore)
        for (text, expected) in [
            ("\ndownload_window = 25:00-01:00", "/c:2: download_window must be local times such as 01:00-06:00"),
            ("download_window =", "/c:1: download_window must be local times"),
            ("metered = sometimes", "/c:1: metered must be pause or ignore; got 'sometimes'"),
        ] {
            #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(text, path: "/c", home: "/h") }
            do {
                _ = try DaemonConfiguration.parse(text, path: "/c", home: "/h")
            } catch {
                #expect(error.description.hasPrefix(expected), "\(error)")
            }
        }
    }

    @Test func openAndTheNextChangeInUTC() throws {
        let night = try windows("01:00-06:00")
        #expect(!night.isOpen(at: at(0, 59, 59), in: .utc))
        #expect(night.isOpen(at: at(1), in: .utc))
        #expect(night.isOpen(at: at(5, 59, 59), in: .utc))
        #expect(!night.isOpen(at: at(6), in: .utc))
        #expect(night.nextChange(after: at(0, 30, 10), in: .utc) == at(1))
        #expect(night.nextChange(after: at(1), in: .utc) == at(6))
        #expect(night.nextChange(after: at(12), in: .utc) == at(1, day: 1))
        #expect(DownloadWindows().nextChange(after: at(12), in: .utc) == nil)
        #expect(DownloadWindows().isOpen(at: at(12), in: .utc))
    }

    @Test func aWindowCrossingMidnight() throws {
        let late = try windows("22:00-02:00")
        #expect(late.isOpen(at: at(23), in: .utc))
        #expect(late.isOpen(at: at(1, 59), in: .utc))
        #expect(!late.isOpen(at: at(2), in: .utc))
        #expect(!late.isOpen(at: at(21, 59, 59), in: .utc))
        #expect(late.nextChange(after: at(12), in: .utc) == at(22))
        #expect(late.nextChange(after: at(23), in: .utc) == at(2, day: 1))
    }

    @Test func touchingWindowsAreOneAndAWholeDayNeverChanges() throws {
        let joined = try windows("01:00-03:00, 03:00-05:00")
        #expect(joined.nextChange(after: at(2), in: .utc) == at(5))
        let always = try windows("00:00-12:00, 12:00-00:00")
        #expect(always.isOpen(at: at(7), in: .utc))
        #expect(always.nextChange(after: at(7), in: .utc) == nil)
    }

    @Test func localTimeIsTheZones() throws {
        // UTC+02:00: 01:00 local is 23:00 UTC the day before.
        let night = try windows("01:00-06:00")
        let east = LocalTimeZone.fixed(secondsFromUTC: 7200)
        #expect(night.isOpen(at: at(23, day: -1), in: east))
        #expect(night.nextChange(after: at(12), in: east) == at(23))
        // A zone with seconds in its offset (as TZ allows) still changes exactly at its local minute.
        let odd = LocalTimeZone.fixed(secondsFromUTC: 17)
        #expect(night.nextChange(after: at(0, 30), in: odd) == at(1) - 17)
    }

    /// A daylight saving change at 02:00 local: forward skips 02:00-03:00, back repeats 01:00-02:00.
    @Test func daylightSavingNeitherCrashesNorLoops() throws {
        let change = at(2)
        let spring = LocalTimeZone { $0 < change ? 0 : 3600 }
        // A window inside the skipped hour opens on the next day instead.
        let skipped = try windows("02:15-02:45")
        #expect(skipped.nextChange(after: at(1), in: spring) == at(2, 15, day: 1) - 3600)
        // A window ending inside the skipped hour closes when the clock jumps past its end.
        let endsInGap = try windows("01:00-02:30")
        #expect(endsInGap.nextChange(after: at(1, 30), in: spring) == change)

        let autumn = LocalTimeZone { [back = at(1)] in $0 < back ? 3600 : 0 }
        // 01:00-02:00 local happens twice; the window stays open through both and closes at the second 02:00.
        let repeated = try windows("01:00-02:00")
        #expect(repeated.isOpen(at: at(0, 30), in: autumn))
        #expect(repeated.nextChange(after: at(0, 30), in: autumn) == at(2))
    }

    @Test func everyMinuteBoundaryIsFoundForAnyStart() throws {
        let night = try windows("01:00-06:00, 22:30-23:00")
        var instant = at(0)
        var changes: [Int64] = []
        while let next = night.nextChange(after: instant, in: .utc), next < at(0, day: 2) {
            #expect(next > instant)
            changes.append(next)
            instant = next
        }
        #expect(
            changes == [
                at(1), at(6), at(22, 30), at(23), at(1, day: 1), at(6, day: 1), at(22, 30, day: 1), at(23, day: 1),
            ]
        )
    }
}

@Suite struct DownloadGateStateMachineTests {
    typealias Machine = DownloadQueueStateMachine

    private func record(_ id: Int64, state: DownloadRecord.State = .queued, now: Bool = false) -> DownloadRecord {
        var record = DownloadRecord(
            id: id,
            url: "http://h\(id).example/\(id).bin",
            directory: "/srv/episodes",
            fileName: "\(id).bin",
            position: id,
            addedAt: 0
        )
        record.state = state
        record.bypassesGate = now
        return record
    }

    private func started(_ records: [DownloadRecord], transferring: [Int64]) -> Machine {
        var machine = Machine()
        machine.load(records)
        _ = machine.gateChanged(closedBecause: nil)
        _ = machine.startDue(QueueScheduler(), now: 0)
        for id in transferring {
            _ = machine.resumePlan(id, fileSize: 0, distrustUncheckpointedBytes: false)
            _ = machine.began(id)
        }
        return machine
    }

    private func stops(_ actions: [Machine.Action]) -> [Int64] {
        actions.compactMap { if case .stopTransfer(let id) = $0 { id } else { nil } }
    }

    private func published(_ actions: [Machine.Action]) -> [Int64: Machine.Announcement] {
        var events: [Int64: Machine.Announcement] = [:]
        for case .publish(let event, let record) in actions { events[record.id] = event }
        return events
    }

    @Test func closingStopsRunningTransfersAndPausesQueuedOnes() {
        var diskFull = record(4, state: .paused)
        diskFull.pauseReason = "disk_full"
        var machine = started(
            [record(1), record(2), record(3, now: true), diskFull, record(5, state: .paused), record(6)],
            transferring: [1, 3]
        )
        // Three at once: 1 and 3 transfer, 2 is opening its file, 6 waits for a slot.
        #expect(machine.lives[2] == .opening)
        let actions = machine.gateChanged(closedBecause: .outsideWindow)
        #expect(Set(stops(actions)) == [1, 2])
        for id: Int64 in [1, 2] {
            #expect(machine.records[id]?.state == .paused)
            #expect(machine.records[id]?.pauseReason == "outside_window")
        }
        // Queued with no slot: held too, without a transfer to stop.
        #expect(machine.records[6]?.state == .paused)
        #expect(machine.records[6]?.pauseReason == "outside_window")
        // --now, a disk_full pause and a user's pause are left alone.
        #expect(machine.records[3]?.state == .active)
        #expect(machine.records[4]?.pauseReason == "disk_full")
        #expect(machine.records[5]?.pauseReason == nil)
        #expect(published(actions) == [1: .paused, 2: .paused, 6: .paused])
        guard case .persist(let saved, _)? = actions.first(where: { if case .persist = $0 { true } else { false } })
        else {
            Issue.record("nothing persisted")
            return
        }
        #expect(saved.map(\.id) == [1, 2, 6])
        // The one opening sends nothing.
        #expect(machine.resumePlan(2, fileSize: 0, distrustUncheckpointedBytes: false) == .stopped)
        // The stopped transfer concludes as a pause; its bytes stay.
        _ = machine.transferEnded(1)
        #expect(
            machine.finished(
                1,
                .failed(.init(code: .cancelled, message: "stopped"), response: nil, bytesInFile: 7),
                fileSize: 7
            ) == .keepThenFail(.transfer(.init(code: .cancelled, message: "stopped")), bytes: 7)
        )
        machine.kept(1, bytes: 7)
        _ = machine.stopped(1)
        #expect(machine.records[1]?.state == .paused)
        #expect(machine.records[1]?.bytesDone == 7)
    }

    @Test func nothingStartsWhileClosedButNowDownloads() {
        var machine = Machine()
        machine.load([record(1), record(2, now: true)])
        _ = machine.gateChanged(closedBecause: .metered)
        let actions = machine.startDue(QueueScheduler(), now: 0)
        #expect(actions == [.startTransfer(2)])
        #expect(machine.records[1]?.pauseReason == "metered")
    }

    @Test func openingResumesExactlyWhatTheGatePaused() {
        var diskFull = record(3, state: .paused)
        diskFull.pauseReason = "disk_full"
        var machine = Machine()
        machine.load([record(1), record(2, state: .paused), diskFull])
        _ = machine.gateChanged(closedBecause: .outsideWindow)
        let actions = machine.gateChanged(closedBecause: nil)
        #expect(machine.records[1]?.state == .queued)
        #expect(machine.records[1]?.pauseReason == nil)
        #expect(machine.records[2]?.state == .paused)
        #expect(machine.records[3]?.pauseReason == "disk_full")
        #expect(published(actions) == [1: .resumed])
        #expect(actions.last == .reschedule)
        #expect(machine.startDue(QueueScheduler(), now: 0) == [.startTransfer(1)])
    }

    @Test func aReasonChangeWhileClosedIsShownAndTheSameReasonIsNoEvent() {
        var machine = Machine()
        machine.load([record(1)])
        _ = machine.gateChanged(closedBecause: .outsideWindow)
        #expect(machine.gateChanged(closedBecause: .outsideWindow) == [])
        let actions = machine.gateChanged(closedBecause: .metered)
        #expect(machine.records[1]?.pauseReason == "metered")
        #expect(published(actions) == [1: .paused])
    }

    /// Rows the gate paused before a restart resume when the first look finds the gate open.
    @Test func theFirstLookAfterARestartResumesGatePausedRows() {
        var stored = record(1, state: .paused)
        stored.pauseReason = "metered"
        var machine = Machine()
        machine.load([stored])
        #expect(!machine.gateKnown)
        _ = machine.gateChanged(closedBecause: nil)
        #expect(machine.records[1]?.state == .queued)
    }

    /// With `metered = pause` the first look waits for NetworkManager, and downloads may run meanwhile: an open gate
    /// leaves them running.
    @Test func aFirstLookThatFindsTheGateOpenLeavesRunningDownloadsAlone() {
        var machine = Machine()
        machine.load([record(1), record(2)])
        _ = machine.startDue(QueueScheduler(), now: 0)
        _ = machine.resumePlan(1, fileSize: 0, distrustUncheckpointedBytes: false)
        _ = machine.began(1)
        #expect(!machine.gateKnown)
        let actions = machine.gateChanged(closedBecause: nil)
        #expect(stops(actions).isEmpty)
        #expect(machine.records[1]?.state == .active)
    }

    /// A retry time a download waited for before the gate closed still holds after it opens.
    @Test func aRetryTimeSurvivesTheGate() {
        var waiting = record(1)
        waiting.nextAttemptAt = 5000
        var machine = Machine()
        machine.load([waiting])
        _ = machine.gateChanged(closedBecause: .outsideWindow)
        _ = machine.gateChanged(closedBecause: nil)
        #expect(machine.records[1]?.nextAttemptAt == 5000)
        #expect(machine.startDue(QueueScheduler(), now: 0) == [.wake(at: 5000)])
    }

    @Test func aUserPauseDuringTheGateIsKeptWhenItOpens() throws {
        var machine = Machine()
        machine.load([record(1)])
        _ = machine.gateChanged(closedBecause: .outsideWindow)
        let actions = try machine.pause(.ids([1]))
        #expect(machine.records[1]?.pauseReason == nil)
        #expect(published(actions) == [1: .paused])
        _ = machine.gateChanged(closedBecause: nil)
        #expect(machine.records[1]?.state == .paused)
    }

    @Test func aResumeWhileClosedWaitsForTheGate() throws {
        var machine = Machine()
        machine.load([record(1, state: .paused), record(2, state: .paused, now: true)])
        _ = machine.gateChanged(closedBecause: .metered)
        let actions = try machine.resume(.all)
        #expect(machine.records[1]?.state == .paused)
        #expect(machine.records[1]?.pauseReason == "metered")
        #expect(machine.records[2]?.state == .queued)
        #expect(published(actions) == [1: .paused, 2: .resumed])
        _ = machine.gateChanged(closedBecause: nil)
        #expect(machine.records[1]?.state == .queued)
    }

    @Test func resumeNowPassesTheGateForThoseDownloadsOnly() throws {
        var machine = Machine()
        machine.load([record(1, state: .paused), record(2, state: .paused), record(3)])
        _ = machine.gateChanged(closedBecause: .outsideWindow)
        let actions = try machine.resume(.ids([1]), now: true)
        #expect(machine.records[1]?.state == .queued)
        #expect(machine.records[1]?.bypassesGate == true, "it outlives a pause and a restart, like enqueue --now")
        #expect(published(actions) == [1: .resumed])
        #expect(machine.records[2]?.state == .paused)
        #expect(machine.records[3]?.pauseReason == "outside_window")
        #expect(machine.startDue(QueueScheduler(), now: 0) == [.startTransfer(1)])
    }

    @Test func nowLetsAnExistingDownloadThrough() {
        var machine = Machine()
        machine.load([record(1), record(2, state: .paused)])
        _ = machine.gateChanged(closedBecause: .outsideWindow)
        let actions = machine.expedite([1, 2])
        #expect(machine.records[1]?.state == .queued)
        #expect(machine.records[1]?.bypassesGate == true)
        // A user's pause stays a pause; it passes the gate once resumed.
        #expect(machine.records[2]?.state == .paused)
        #expect(published(actions) == [1: .resumed])
        #expect(machine.expedite([1]) == [])
        #expect(machine.startDue(QueueScheduler(), now: 0) == [.startTransfer(1)])
        _ = try? machine.resume(.ids([2]))
        #expect(machine.records[2]?.state == .queued)
    }

    @Test func aNewDownloadIsAdmittedByTheGate() {
        var machine = Machine()
        _ = machine.gateChanged(closedBecause: .metered)
        #expect(machine.admitted(record(1)).pauseReason == "metered")
        #expect(machine.admitted(record(1)).state == .paused)
        #expect(machine.admitted(record(2, now: true)).state == .queued)
    }

    @Test func aFinishingDownloadCompletesThroughAClosingGate() {
        var machine = started([record(1)], transferring: [1])
        _ = machine.transferEnded(1)
        let actions = machine.gateChanged(closedBecause: .outsideWindow)
        #expect(stops(actions).isEmpty)
        #expect(machine.records[1]?.state == .active)
        #expect(machine.stillActive(1))
    }

    @Test func theGateCombinesWindowAndNetwork() {
        var gate = DownloadGate()
        #expect(gate.closedBecause == nil)
        gate.metered = true
        #expect(gate.closedBecause == .metered)
        gate.outsideWindow = true
        gate.nextWindowChange = 60_000
        #expect(gate.closedBecause == .outsideWindow)
        #expect(gate.windowOpensAt == 60_000)
        gate.outsideWindow = false
        #expect(gate.windowOpensAt == nil)
    }

    @Test func anUnknownMeteredAnswerKeepsTheLastOneAndTheFirstIsAwaited() {
        var gate = DownloadGate()
        gate.awaitingMeteredAnswer = true
        #expect(!gate.isSettled, "the window service's first look must not release metered pauses")
        gate.meteredAnswer(.unanswered)
        #expect(!gate.isSettled, "no answer is not an answer")
        gate.outsideWindow = true
        #expect(gate.isSettled && gate.closedBecause == .outsideWindow, "a closed window holds whatever the network")
        gate.outsideWindow = false
        gate.meteredAnswer(.answered(metered: true))
        #expect(gate.isSettled && gate.closedBecause == .metered)
        gate.meteredAnswer(.unanswered)
        #expect(gate.closedBecause == .metered, "a lost bus keeps a metered network's pauses")
        gate.meteredAnswer(.undetectable)
        #expect(gate.closedBecause == nil)
    }
}
