import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

/// Every decision about a download's life, without I/O.
///
/// ``DownloadQueue`` feeds it events (a command, a transfer that opened, ended or was stopped, a name chosen, a
/// completion committed) and performs the ``Action``s it returns, in their order: commits before announcements,
/// transfers started or stopped, partial files discarded. What is true of a download lives here in one place: its
/// ``Live`` state, and its record in the ``DownloadTable``, whose `state` is derived from it. Time and chance come in
/// as arguments, so the races between a transfer and a client's command are unit tests.
package struct DownloadQueueStateMachine {
    /// What happened to a download, for watchers; the queue names it on the wire (`download.added`, …).
    package enum Announcement: Equatable, Sendable, CaseIterable {
        case added
        case started
        /// At most 4 a second per download.
        case progress
        case paused
        case resumed
        case retrying
        case completed
        case failed
        case removed
    }

    package enum Action: Equatable, Sendable {
        /// Open the partial file of this `active` download and run its transfer.
        case startTransfer(Int64)
        /// Stop the running transfer; its end comes back as ``DownloadQueueStateMachine/stopped(_:)``.
        case stopTransfer(Int64)
        case persist([DownloadRecord], Durability)
        /// Forget rows (a failure is logged, not thrown: the next start removes cancelled rows anyway).
        case delete([Int64])
        /// Remove the partial file when the record asks for it, or when it is empty.
        case discardPartial(DownloadRecord)
        case publish(Announcement, DownloadRecord)
        case runHook(DownloadRecord)
        case log(LogLevel, String)
        /// Look for downloads to start now.
        case reschedule
        /// Look again at this time (Unix milliseconds): a retry comes due.
        case wake(at: Int64)
    }

    /// The stored shape of each download; its `state` is always its ``Live/stored`` (``put(_:)``).
    package private(set) var records = DownloadTable()
    /// Each download's state; the one truth of it.
    package private(set) var lives: [Int64: Live] = [:]
    /// Why downloads are held back now (outside every window, a metered network); `nil` while they may run.
    ///
    /// This and the other state below are written only by the machine's own files (its `+Concern` extensions, which
    /// is why they are not private); the records and their states only through the setters below.
    package internal(set) var gate: GateReason?
    /// Whether ``gateChanged(closedBecause:)`` was called since start-up.
    package internal(set) var gateKnown = false
    /// Paths chosen by enqueues waiting for their commit: the table learns of those downloads only after it.
    var reservedPaths: Set<String> = []
    /// The group commit of completions: whether a batch is being committed, and the completions waiting for the
    /// next one, in the order they came.
    var committingBatch = false
    var waitingCommits: [SyncedFile] = []
    /// Queued entries ``startDue(_:now:)`` has looked at since start-up: the work a start costs, for tests.
    package private(set) var queueEntriesExamined = 0
    /// The downloads holding a transfer slot (``Live/holdsSlot``), kept by ``set(_:_:)``: a start counts them
    /// without walking every download.
    private var slotHolders: Set<Int64> = []

    package init() {}

    // MARK: - The one setter of each download's state

    /// Writes a record's stored fields; its state stays what its ``Live`` says, whatever the copy held.
    mutating func put(_ record: DownloadRecord) {
        var record = record
        if let live = lives[record.id] { record.state = live.stored }
        records[record.id] = record
    }

    /// Makes a download `live`, and its record's state with it.
    mutating func set(_ id: Int64, _ live: Live) {
        lives[id] = live
        if live.holdsSlot { slotHolders.insert(id) } else { slotHolders.remove(id) }
        if records[id]?.state != live.stored { records[id]?.state = live.stored }
    }

    /// A command or an outcome makes a download `state`; an attempt of it winds down first.
    mutating func settle(_ id: Int64, _ state: Settled) {
        switch lives[id] {
        case .idle?, nil: set(id, .idle(state))
        case .opening?, .transferring?: set(id, .windingDown(state, holdsSlot: true))
        case .finishing?: set(id, .windingDown(state, holdsSlot: false))
        case .windingDown(_, let holdsSlot)?: set(id, .windingDown(state, holdsSlot: holdsSlot))
        }
    }

    /// The download leaves the table.
    mutating func remove(_ id: Int64) {
        records[id] = nil
        lives[id] = nil
        slotHolders.remove(id)
    }

    /// The pace of a transferring download.
    package func pace(of id: Int64) -> Pace? {
        guard case .transferring(let pace)? = lives[id] else { return nil }
        return pace
    }

    /// Bytes per second of every transfer together.
    package var totalRate: Double {
        lives.values.reduce(0) { sum, live in
            guard case .transferring(let pace) = live else { return sum }
            return sum + pace.rate
        }
    }

    // MARK: - Start-up

    /// What start-up makes of a stored download.
    package enum Recovery: Equatable, Sendable {
        /// A cancel the daemon did not finish: remove the partial file (as the cancel asked) and the row.
        case discard(DownloadRecord)
        case keep(DownloadRecord, changed: Bool)
    }

    /// Decides what a stored download becomes at start-up, given what is on disk.
    ///
    /// - Parameters:
    ///   - partialExists: Whether `<file>.part` exists.
    ///   - finalSize: The size of the file under the download's final name, if one exists.
    ///   - finalMarked: Whether that file carries this download's ``CompletionMark``.
    package static func recover(
        _ stored: DownloadRecord,
        partialExists: Bool,
        finalSize: Int64?,
        finalMarked: Bool,
        now: Int64
    ) -> Recovery {
        var record = stored
        var changed = false
        switch record.state {
        case .cancelled: return .discard(record)
        case .active:
            record.state = .queued
            changed = true
        case .queued, .paused, .failed, .completed: break
        }
        guard record.state != .completed else { return .keep(record, changed: changed) }
        if !partialExists, let size = finalSize,
            finalMarked || (record.bytesTotal == size && record.bytesDone == size)
        {
            // Renamed into place, then the daemon died before the row said so. A marked file's size was not saved
            // before the rename (``nameBatch(_:exists:)``): the file has it.
            record.bytesDone = size
            record.bytesTotal = size
            record.state = .completed
            record.completedAt = record.completedAt ?? now
            record.partialName = nil
            changed = true
        } else if let partialName = record.partialName, partialName.hasSuffix(".part") {
            // The daemon died between choosing a new final name and the rename: the bytes are still in the partial
            // file under its old name, which becomes the download's name again. The next completion chooses afresh.
            record.fileName = String(partialName.dropLast(".part".count))
            record.partialName = nil
            changed = true
        }
        return .keep(record, changed: changed)
    }

    /// Takes the recovered downloads into the table.
    package mutating func load(_ recovered: [DownloadRecord]) {
        for record in recovered { join(record) }
    }

    /// A download joins the table, with no attempt; ``recover(_:partialExists:finalSize:now:)`` made an active one
    /// queued already, and a new one is never active.
    mutating func join(_ record: DownloadRecord) {
        lives[record.id] = .idle(Settled(record.state) ?? .queued)
        slotHolders.remove(record.id)
        put(record)
    }

    // MARK: - Scheduling

    /// Starts what the scheduler allows: each download chosen becomes `active` and holds a slot until its transfer
    /// ends.
    ///
    /// The table gives the due downloads in start order, host by host (``DownloadTable/nextDue(examined:)``), so a
    /// start looks at what it starts and the hosts it finds full, not at every queued download.
    package mutating func startDue(_ scheduler: QueueScheduler, now: Int64) -> [Action] {
        // While the gate is closed only `--now` downloads are queued (``admit(_:)``); the check is the last guard.
        let gated = gate != nil
        var running = slotHolders.count
        var perHost = slotsPerHost
        var actions: [Action] = []
        queueEntriesExamined += records.beginDuePass(now: now)
        while scheduler.admits(running: running), let entry = records.nextDue(examined: &queueEntriesExamined) {
            guard scheduler.admits(onHost: perHost[entry.host, default: 0]) else {
                records.hostIsFull(entry)
                continue
            }
            guard lives[entry.id] == .idle(.queued), !gated || records[entry.id]?.bypassesGate == true else {
                records.passOver(entry)
                continue
            }
            records.takeDue(entry)
            records[entry.id]?.nextAttemptAt = nil
            set(entry.id, .opening)
            running += 1
            perHost[entry.host, default: 0] += 1
            actions.append(.startTransfer(entry.id))
        }
        if let wakeAt = records.endDuePass(examined: &queueEntriesExamined), wakeAt > now {
            actions.append(.wake(at: wakeAt))
        }
        return actions
    }

    /// The transfer slots held, by host.
    private var slotsPerHost: [String: Int] {
        var perHost: [String: Int] = [:]
        for id in slotHolders { perHost[records.host(of: id), default: 0] += 1 }
        return perHost
    }

    /// The hosts whose per-host slots are all taken: a due download of theirs waits for one of them to end.
    package func busyHosts(_ scheduler: QueueScheduler) -> Set<String> {
        Set(
            slotsPerHost.compactMap { host, count in count >= scheduler.maximumPerHost && !host.isEmpty ? host : nil }
        )
    }

    /// The busy host (``busyHosts(_:)``) a queued download waits on, when it is due: its retry time, if any, passed.
    package func waitingForHost(_ id: Int64, busyHosts: Set<String>, now: Int64) -> String? {
        guard lives[id] == .idle(.queued), let record = records[id], (record.nextAttemptAt ?? now) <= now else {
            return nil
        }
        let host = records.host(of: id)
        return busyHosts.contains(host) ? host : nil
    }

    /// Whether a download holds a transfer slot (opening or transferring).
    package func holdsSlot(_ id: Int64) -> Bool {
        lives[id]?.holdsSlot == true
    }

    // MARK: - One transfer

    /// How a transfer resumes from the partial file it opened.
    package enum ResumePlan: Equatable, Sendable {
        /// Send a request from `offset`, after cutting the file back to it when `truncate` says so.
        case transfer(offset: Int64, truncate: Bool)
        /// A pause or cancel came while the file was opened: nothing is sent.
        case stopped
    }

    /// The partial file is open and holds `fileSize` bytes.
    ///
    /// - Parameter distrustUncheckpointedBytes: The previous run died on another boot, so bytes past the last
    ///   checkpoint may be zeros a power cut left.
    package func resumePlan(_ id: Int64, fileSize: Int64, distrustUncheckpointedBytes: Bool) -> ResumePlan {
        guard let record = records[id], lives[id] == .opening else { return .stopped }
        var offset = fileSize
        var truncate = false
        if distrustUncheckpointedBytes && offset > record.bytesDone {
            offset = record.bytesDone
            truncate = true
        }
        if offset > 0 && record.etag == nil && record.lastModified == nil && record.bytesTotal == nil {
            // Nothing would tell whether the server's file is still the one these bytes came from.
            offset = 0
            truncate = true
        }
        return .transfer(offset: offset, truncate: truncate)
    }

    /// The request is about to be sent: one more attempt.
    ///
    /// Not persisted here: a crash makes an active download queued again anyway, and the attempt count goes to the
    /// store with the next checkpoint, failure or completion. Waiting for a commit here would leave the slot idle.
    ///
    /// - Parameters:
    ///   - offset: The bytes already in the partial file.
    ///   - now: Unix milliseconds.
    package mutating func began(_ id: Int64, offset: Int64 = 0, now: Int64 = 0) -> [Action] {
        guard lives[id] == .opening, var record = records[id] else {
            preconditionFailure("download \(id) began a transfer it had not opened")
        }
        record.attempts += 1
        put(record)
        set(id, .transferring(Pace(bytes: offset, now: now)))
        return [.publish(.started, record)]
    }

    /// What a running transfer learned of the server's file (its size, its validators).
    ///
    /// - Returns: Whether anything is new; then it is saved at once, since without it a resume after `kill -9`
    ///   could not be validated and would start over.
    package mutating func learned(_ id: Int64, total: Int64?, etag: String?, lastModified: String?) -> Bool {
        guard var record = records[id], lives[id]?.isActive == true else { return false }
        var learned = false
        if let total, record.bytesTotal != total {
            record.bytesTotal = total
            learned = true
        }
        if (etag != nil && etag != record.etag) || (lastModified != nil && lastModified != record.lastModified) {
            record.etag = etag
            record.lastModified = lastModified
            learned = true
        }
        put(record)
        return learned
    }

    /// The bytes before `bytes` are on disk (`fdatasync`): the offset is recorded. A power cut may roll the row back
    /// to an older checkpoint, which only means fetching more again.
    package mutating func checkpointed(_ id: Int64, bytes: Int64) -> [Action] {
        guard var record = records[id] else { return [] }
        record.bytesDone = bytes
        put(record)
        return [.persist([record], .processCrash)]
    }

    // MARK: - Progress

    /// A transfer's pace between its progress reports.
    package struct Pace: Equatable, Sendable {
        /// Bytes per second, smoothed; 0 below ``DownloadQueueStateMachine/slowestRate``.
        package var rate: Double = 0
        /// Unix milliseconds of the last byte that arrived (or of the start).
        package var lastProgressAt: Int64
        var bytes: Int64
        /// Unix milliseconds of the last report (or of the start): the speed is over the time since.
        var reportedAt: Int64
        var checkpointBytes: Int64
        var checkpointAt: Int64
        var publishedBytes: Int64 = -1
        var publishedAt: Int64

        init(bytes: Int64, now: Int64) {
            self.bytes = bytes
            reportedAt = now
            lastProgressAt = now
            checkpointBytes = bytes
            checkpointAt = now
            publishedAt = now
        }
    }

    /// How often running transfers' progress is looked at; a transfer's first look comes sooner, as the queue looks
    /// at all of them together.
    package static let progressInterval = Duration.milliseconds(250)
    /// Below this (bytes per second) a transfer's speed is 0 and it has no ETA.
    package static let slowestRate = 1.0
    /// A transfer that received nothing for this long (milliseconds) is stalled since its last byte, and still
    /// publishes its progress this often.
    package static let stalledAfter: Int64 = 5_000

    /// What the queue does with a progress report.
    package enum ProgressStep: Equatable, Sendable {
        /// `fdatasync` the partial file, then report ``progressSynced(_:bytes:synced:now:)``: the offset is recorded
        /// only after the bytes before it are on disk.
        case checkpoint(bytes: Int64)
        case perform([Action])
    }

    /// A running transfer's progress, every ``progressInterval``: its speed, its size and validators (saved at once
    /// when new, since without them a resume after `kill -9` could not be validated), a checkpoint every
    /// `checkpointBytes` or `checkpointInterval` milliseconds, and a progress event when bytes arrived (at most 4 a
    /// second) or, for a stalled transfer, every ``stalledAfter``.
    package mutating func progressed(
        _ id: Int64,
        bytes: Int64,
        total: Int64?,
        etag: String?,
        lastModified: String?,
        now: Int64,
        checkpointBytes: Int64,
        checkpointInterval: Int64
    ) -> ProgressStep {
        guard var pace = pace(of: id) else { return .perform([]) }
        // Over the time that really passed: reports come late behind a busy queue, and early after a start.
        let seconds = Double(max(1, now - pace.reportedAt)) / 1000
        let instant = Double(max(0, bytes - pace.bytes)) / seconds
        pace.reportedAt = now
        // The average decays towards zero while nothing arrives; below a byte a second it is zero, not 1e-15.
        let smoothed = pace.rate == 0 ? instant : pace.rate * 0.7 + instant * 0.3
        pace.rate = smoothed < Self.slowestRate ? 0 : smoothed
        if bytes != pace.bytes { pace.lastProgressAt = now }
        pace.bytes = bytes
        set(id, .transferring(pace))
        let learned = learned(id, total: total, etag: etag, lastModified: lastModified)
        if learned || bytes - pace.checkpointBytes >= checkpointBytes || now - pace.checkpointAt >= checkpointInterval {
            return .checkpoint(bytes: bytes)
        }
        return .perform(progressDue(id, now: now))
    }

    /// The partial file was synced up to `bytes` (or the sync failed): the checkpoint is recorded, then progress
    /// published when due.
    package mutating func progressSynced(_ id: Int64, bytes: Int64, synced: Bool, now: Int64) -> [Action] {
        var actions: [Action] = []
        if synced, var pace = pace(of: id) {
            pace.checkpointBytes = bytes
            pace.checkpointAt = now
            set(id, .transferring(pace))
            actions = checkpointed(id, bytes: bytes)
        } else if synced, case .windingDown(_, holdsSlot: true)? = lives[id] {
            // A pause or cancel came during the sync: the bytes are on disk all the same.
            actions = checkpointed(id, bytes: bytes)
        }
        return actions + progressDue(id, now: now)
    }

    /// A progress event, when bytes arrived since the last one or the transfer is stalled; none once a pause or
    /// cancel came.
    private mutating func progressDue(_ id: Int64, now: Int64) -> [Action] {
        guard let record = records[id], var pace = pace(of: id) else { return [] }
        guard pace.bytes != pace.publishedBytes || now - pace.publishedAt >= Self.stalledAfter else { return [] }
        pace.publishedBytes = pace.bytes
        pace.publishedAt = now
        set(id, .transferring(pace))
        return [.publish(.progress, record)]
    }

    /// Since when an active transfer received nothing (Unix milliseconds), once that is ``stalledAfter`` or longer.
    package func stalledSince(_ id: Int64, now: Int64) -> Int64? {
        guard let since = pace(of: id)?.lastProgressAt, now - since >= Self.stalledAfter else { return nil }
        return since
    }

    /// The network part is over: the slot goes to the next download while this one syncs and commits, so that
    /// durability costs latency per file, not throughput.
    package mutating func transferEnded(_ id: Int64) -> [Action] {
        switch lives[id] {
        case .opening?, .transferring?: set(id, .finishing(collisions: []))
        case .windingDown(let state, holdsSlot: true)?: set(id, .windingDown(state, holdsSlot: false))
        case .idle?, .finishing?, .windingDown(_, holdsSlot: false)?, nil:
            preconditionFailure("download \(id) ended a transfer it was not running")
        }
        return [.reschedule]
    }

    /// What to do with a transfer's outcome.
    package enum FinishStep: Equatable, Sendable {
        /// The body is complete: sync, choose the final name, rename, commit.
        case complete(bytes: Int64)
        /// The bytes kept are unusable: cut the partial file to nothing, then fail with this.
        case startOver(DownloadFailure)
        /// Keep what arrived: sync the partial file, record `bytes` as done (``kept(_:bytes:)``), then fail with
        /// this, or conclude the stop when the transfer was stopped.
        case keepThenFail(DownloadFailure, bytes: Int64)
        case fail(DownloadFailure)
    }

    /// A transfer ended with `outcome`; the partial file holds `fileSize` bytes.
    package mutating func finished(_ id: Int64, _ outcome: TransferOutcome, fileSize: Int64) -> FinishStep {
        guard var record = records[id] else { preconditionFailure("download \(id) finished without a record") }
        func absorb(_ response: TransferResponse?) {
            guard let response else { return }
            // Without credentials a redirect wrote into it (HTTPURL's rule), since `show` prints it. The request's own
            // URL, which libcurl reports when nothing redirected, is in that form already (HTTPURL is idempotent).
            record.finalURL =
                response.finalURL == record.url
                ? record.url : (try? HTTPURL(response.finalURL))?.string ?? HTTPURL.shown(response.finalURL)
            if let etag = response.etag { record.etag = etag }
            if let modified = response.lastModified { record.lastModified = modified }
            if let total = response.totalLength { record.bytesTotal = total }
        }
        func startOver(forgettingValidators: Bool) {
            record.bytesDone = 0
            if forgettingValidators {
                record.etag = nil
                record.lastModified = nil
            }
        }
        defer { put(record) }
        switch outcome {
        case .completed(let response, let bytes):
            absorb(response)
            if let total = record.bytesTotal, total != bytes {
                startOver(forgettingValidators: false)
                return .startOver(.lengthMismatch(received: bytes, announced: total))
            }
            return .complete(bytes: bytes)
        case .rangeNotSatisfiable(let response):
            absorb(response)
            if let total = record.bytesTotal, total == fileSize { return .complete(bytes: fileSize) }
            startOver(forgettingValidators: true)
            return .startOver(.rangeNotSatisfiable(offset: fileSize))
        case .httpError(let response):
            absorb(response)
            return .fail(.httpStatus(response.status, url: response.finalURL, retryAfter: response.retryAfter))
        case .failed(let error, let response, let bytes):
            absorb(response)
            if error.code == .rangeMismatch {
                startOver(forgettingValidators: true)
                return .startOver(.transfer(error))
            }
            return .keepThenFail(.transfer(error), bytes: min(bytes, fileSize))
        }
    }

    /// The partial file was synced after a failed or stopped transfer: `bytes` are done.
    package mutating func kept(_ id: Int64, bytes: Int64) {
        guard var record = records[id] else { return }
        record.bytesDone = bytes
        put(record)
    }

    /// The partial file was removed (its bytes were not the media announced): the next attempt starts from nothing,
    /// and learns the size and validators afresh.
    package mutating func partialRemoved(_ id: Int64) {
        guard var record = records[id] else { return }
        record.bytesDone = 0
        record.bytesTotal = nil
        record.etag = nil
        record.lastModified = nil
        put(record)
    }

    /// A transfer failed: records what ``RetryPolicy/decide(_:attempts:now:random:)`` makes of it (a retry time,
    /// failed, or paused). A download that a command stopped meanwhile, or whose transfer the shutdown stopped,
    /// concludes that stop instead.
    package mutating func failed(
        _ id: Int64,
        _ failure: DownloadFailure,
        policy: RetryPolicy,
        now: Int64,
        random: Double
    ) -> [Action] {
        guard var record = records[id] else { return [] }
        guard lives[id]?.isActive == true else { return stopped(id) }
        // Stopped by the shutdown (a pause or cancel settled it already): no failure, it resumes at the next start.
        if case .transfer(let error) = failure, error.code == .cancelled { return stopped(id) }
        let error = failure.info
        record.errorCode = error.code
        record.errorMessage = error.message
        record.errorHTTPStatus = error.httpStatus
        let event: Announcement
        let log: Action
        let state: Settled
        switch policy.decide(failure, attempts: record.attempts, now: now, random: random) {
        case .retry(let at):
            record.nextAttemptAt = at
            state = admission(&record)
            let attempt = "attempt \(record.attempts) of \(policy.maximumAttempts)"
            let wait = DurationText.text(seconds: Double(max(0, at - now)) / 1000)
            (event, log) = (
                .retrying, .log(.info, "download \(id): \(attempt) failed, next in \(wait): \(error.message)")
            )
        case .fail:
            state = .failed
            (event, log) = (.failed, .log(.warning, Self.failedLine(id, attempts: record.attempts, error.message)))
        case .pause(let reason):
            state = .paused
            record.pauseReason = reason
            (event, log) = (.paused, .log(.warning, "download \(id) paused: \(error.message)"))
        }
        put(record)
        settle(id, state)
        guard let settled = records[id] else { return [] }
        // A failure for good leaves no 0-byte `<name>.part` behind in the folder (a 404 opened one); bytes stay for a
        // `retry`. Before the commit, so that nothing can start the download again in between.
        let discard: [Action] = state == .failed ? [.discardPartial(settled)] : []
        return [log] + discard + [.persist([settled], .powerLoss), .publish(event, settled)]
    }

    /// `download 4 failed after 3 attempts: …`; a download that failed at its first attempt (a 404 is not tried
    /// again) says just `failed`.
    package static func failedLine(_ id: Int64, attempts: Int, _ message: String) -> String {
        attempts > 1
            ? "download \(id) failed after \(attempts) attempts: \(message)" : "download \(id) failed: \(message)"
    }

    /// A transfer stopped by a pause, a cancel or the shutdown: records the checkpoint. A cancelled download leaves
    /// the table (its partial file removed when the cancel asked); one still active (shutdown) resumes at the next
    /// start.
    package mutating func stopped(_ id: Int64) -> [Action] {
        guard let live = lives[id], records[id] != nil else { return [] }
        if live.stored == .cancelled, let record = records[id] {
            remove(id)
            return [.discardPartial(record), .delete([id]), .publish(.removed, record)]
        }
        if live.isActive { settle(id, .queued) }
        guard let record = records[id] else { return [] }
        return [.persist([record], .powerLoss)]
    }

    /// The attempt is over, whatever became of it: the download may start again. A cancel that came during the
    /// last commit left the removal to this moment.
    package mutating func attemptEnded(_ id: Int64) -> [Action] {
        var actions: [Action] = []
        switch lives[id] {
        case .windingDown(.cancelled, _)?: actions = stopped(id)
        case .windingDown(let state, _)?: set(id, .idle(state))
        // Every way out of an attempt settles it first; one that did not is stored as queued, as a restart would.
        case .opening?, .transferring?, .finishing?: set(id, .idle(.queued))
        case .idle?, nil: break
        }
        return actions + [.reschedule]
    }

    // MARK: - Reading

    /// Active first, then queued and paused by priority (high first) and position, then failed and completed ones
    /// newest first.
    package func orderedRecords() -> [DownloadRecord] {
        // Small keys are sorted, not the records: moving whole records around was a tenth of a `downloads` call.
        typealias Key = (rank: Int, priority: Int, position: Int64, order: Int64, id: Int64)
        let keys: [Key] = records.values.compactMap { record in
            // A cancelled download stays in the table only until its transfer stops; clients see it as removed.
            guard record.listed, record.state != .cancelled else { return nil }
            let rank = Self.rank(record.state)
            // Only unfinished downloads are ordered by priority (high first: `~` reverses the order and, unlike a
            // minus, cannot overflow) and position. Finished ones come newest first, as a listener looks for what
            // just ended: a completed one by when it completed, a failed one (its failure time is not kept) by when
            // it was added.
            guard rank > 2 else { return (rank, ~record.priority, record.position, record.id, record.id) }
            return (rank, 0, ~(record.completedAt ?? record.addedAt), ~record.id, record.id)
        }
        return keys.sorted { $0 < $1 }.compactMap { records[$0.id] }
    }

    private static func rank(_ state: DownloadRecord.State) -> Int {
        switch state {
        case .active: 0
        case .queued: 1
        case .paused: 2
        case .failed: 3
        case .completed: 4
        case .cancelled: 5
        }
    }
}
