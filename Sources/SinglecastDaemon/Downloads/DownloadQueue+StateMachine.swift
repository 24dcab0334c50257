import SinglecastHTTP
import SinglecastStore

/// Every decision about a download's life, without I/O.
///
/// ``DownloadQueue`` feeds it events (a command, a transfer that opened, ended or was stopped, a name chosen, a
/// completion committed) and performs the ``Action``s it returns, in their order: commits before announcements,
/// transfers started or stopped, partial files discarded. What is true of a download lives here in one place: its
/// ``Live`` state, and its record in the ``DownloadTable``, whose `state` is derived from it. Time and chance come in
/// as arguments, so the races between a transfer and a client's command are unit tests.
package struct DownloadQueueStateMachine {
    /// A download's state in the machine, carrying what exists only in that state: a pace only while bytes arrive,
    /// the names a rename found taken only while finishing. Its record's stored state is ``stored``.
    package enum Live: Equatable, Sendable {
        /// No attempt of it exists; it is stored as this (never `active`).
        case idle(Settled)
        /// Active: holds a transfer slot while its partial file is opened.
        case opening
        /// Active: holds a slot; bytes arrive at this pace.
        case transferring(Pace)
        /// Active: gave its slot back and is syncing, naming, renaming or committing. Holds the paths a rename found
        /// taken meanwhile, so that a second try never picks one again.
        case finishing(collisions: Set<String>)
        /// A command or an outcome settled it while its attempt still winds down (`holdsSlot` while the transfer is
        /// still stopping). It must not start again until the attempt ends: a pause and a resume meanwhile would run
        /// a second transfer that renames the same partial file.
        case windingDown(Settled, holdsSlot: Bool)

        /// How the record stores it.
        package var stored: DownloadRecord.State {
            switch self {
            case .idle(let state), .windingDown(let state, _): state.stored
            case .opening, .transferring, .finishing: .active
            }
        }

        /// Whether it holds a transfer slot (opening or transferring, or its stopped transfer still winding down).
        package var holdsSlot: Bool {
            switch self {
            case .opening, .transferring, .windingDown(_, holdsSlot: true): true
            case .idle, .finishing, .windingDown(_, holdsSlot: false): false
            }
        }

        /// Whether it is `active`: an attempt of it runs and no command or outcome settled it.
        package var isActive: Bool { stored == .active }
    }

    /// Every stored state but `active`, which only an attempt is.
    package enum Settled: Equatable, Sendable {
        case queued, paused, failed, completed, cancelled

        init?(_ state: DownloadRecord.State) {
            switch state {
            case .queued: self = .queued
            case .paused: self = .paused
            case .failed: self = .failed
            case .completed: self = .completed
            case .cancelled: self = .cancelled
            case .active: return nil
            }
        }

        var stored: DownloadRecord.State {
            switch self {
            case .queued: .queued
            case .paused: .paused
            case .failed: .failed
            case .completed: .completed
            case .cancelled: .cancelled
            }
        }
    }

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
    package private(set) var gate: GateReason?
    /// Whether ``gateChanged(closedBecause:)`` was called since start-up.
    package private(set) var gateKnown = false
    /// Paths chosen by enqueues waiting for their commit: the table learns of those downloads only after it.
    private var reservedPaths: Set<String> = []
    /// The group commit of completions: whether a batch is being committed, and the completions waiting for the
    /// next one, in the order they came.
    private var committingBatch = false
    private var waitingCommits: [DownloadRecord] = []

    package init() {}

    // MARK: - The one setter of each download's state

    /// Writes a record's stored fields; its state stays what its ``Live`` says, whatever the copy held.
    private mutating func put(_ record: DownloadRecord) {
        var record = record
        if let live = lives[record.id] { record.state = live.stored }
        records[record.id] = record
    }

    /// Makes a download `live`, and its record's state with it.
    private mutating func set(_ id: Int64, _ live: Live) {
        lives[id] = live
        if records[id]?.state != live.stored { records[id]?.state = live.stored }
    }

    /// A command or an outcome makes a download `state`; an attempt of it winds down first.
    private mutating func settle(_ id: Int64, _ state: Settled) {
        switch lives[id] {
        case .idle?, nil: set(id, .idle(state))
        case .opening?, .transferring?: set(id, .windingDown(state, holdsSlot: true))
        case .finishing?: set(id, .windingDown(state, holdsSlot: false))
        case .windingDown(_, let holdsSlot)?: set(id, .windingDown(state, holdsSlot: holdsSlot))
        }
    }

    /// The download leaves the table.
    private mutating func remove(_ id: Int64) {
        records[id] = nil
        lives[id] = nil
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
    package static func recover(
        _ stored: DownloadRecord,
        partialExists: Bool,
        finalSize: Int64?,
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
        if !partialExists, let total = record.bytesTotal, finalSize == total, record.bytesDone == total {
            // Renamed into place, then the daemon died before the row said so.
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
    private mutating func join(_ record: DownloadRecord) {
        lives[record.id] = .idle(Settled(record.state) ?? .queued)
        put(record)
    }

    // MARK: - Scheduling

    /// Starts what the scheduler allows: each download chosen becomes `active` and holds a slot until its transfer
    /// ends.
    package mutating func startDue(_ scheduler: QueueScheduler, now: Int64) -> [Action] {
        // While the gate is closed only `--now` downloads are queued (``admit(_:)``); the check is the last guard.
        let gated = gate != nil
        let candidates = records.queued().compactMap { entry in
            lives[entry.id] == .idle(.queued) && !(gated && records[entry.id]?.bypassesGate != true)
                ? QueueScheduler.Candidate(id: entry.id, host: entry.host, notBefore: entry.notBefore) : nil
        }
        let activeHosts = lives.compactMap { id, live in live.holdsSlot ? records.host(of: id) : nil }
        let (start, wakeAt) = scheduler.select(candidates: candidates, activeHosts: activeHosts, now: now)
        var actions: [Action] = []
        for id in start {
            guard lives[id] == .idle(.queued) else { continue }
            records[id]?.nextAttemptAt = nil
            set(id, .opening)
            actions.append(.startTransfer(id))
        }
        if let wakeAt { actions.append(.wake(at: wakeAt)) }
        return actions
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
        var checkpointBytes: Int64
        var checkpointAt: Int64
        var publishedBytes: Int64 = -1
        var publishedAt: Int64

        init(bytes: Int64, now: Int64) {
            self.bytes = bytes
            lastProgressAt = now
            checkpointBytes = bytes
            checkpointAt = now
            publishedAt = now
        }
    }

    /// How often a running transfer's progress is looked at.
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
        let seconds =
            Double(Self.progressInterval.components.attoseconds) / 1e18
            + Double(Self.progressInterval.components.seconds)
        let instant = Double(max(0, bytes - pace.bytes)) / seconds
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
            // Without credentials a redirect wrote into it (HTTPURL's rule), since `show` prints it.
            record.finalURL = (try? HTTPURL(response.finalURL))?.string ?? HTTPURL.shown(response.finalURL)
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
    /// failed, or paused). A download that a command stopped meanwhile concludes that stop instead.
    package mutating func failed(
        _ id: Int64,
        _ failure: DownloadFailure,
        policy: RetryPolicy,
        now: Int64,
        random: Double
    ) -> [Action] {
        guard var record = records[id] else { return [] }
        guard lives[id]?.isActive == true else { return stopped(id) }
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
            (event, log) = (.retrying, .log(.info, "download \(id) failed (\(error.message)); retrying"))
        case .fail:
            state = .failed
            (event, log) = (.failed, .log(.warning, "download \(id) failed: \(error.message)"))
        case .pause(let reason):
            state = .paused
            record.pauseReason = reason
            (event, log) = (.paused, .log(.warning, "download \(id) paused: \(error.message)"))
        }
        put(record)
        settle(id, state)
        guard let settled = records[id] else { return [] }
        return [log, .persist([settled], .powerLoss), .publish(event, settled)]
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

    // MARK: - Completion

    /// Whether the download is still to be completed after its file was synced (a pause or cancel may have come).
    package func stillActive(_ id: Int64) -> Bool { lives[id]?.isActive == true }

    /// Chooses the final name of a complete download and records it, with the size and the partial file's own name,
    /// before the rename: a crash right after the rename then finds the file under the row's name, one right before
    /// it finds the bytes under the partial name (``recover(_:partialExists:finalSize:now:)``).
    ///
    /// - Parameters:
    ///   - partialPath: Where the bytes are now.
    ///   - exists: Whether a file exists at a path. A name is taken by an existing file, by a `<name>.part` a cancel
    ///     kept, or by the name another unfinished download will use.
    /// - Returns: The record to persist (``Action/persist(_:_:)``) before renaming to its path.
    package mutating func chooseName(
        _ id: Int64,
        bytes: Int64,
        partialPath: String,
        exists: (String) -> Bool
    ) -> DownloadRecord {
        guard var record = records[id] else { preconditionFailure("download \(id) named without a record") }
        let partialName = String(partialPath.dropFirst(record.directory.count + 1))
        // Counted from the name the download had (its partial file's), so that a second try after a file appeared
        // at the last moment gives "a (3).bin", not "a (2) (2).bin".
        let wanted = partialName.hasSuffix(".part") ? String(partialName.dropLast(".part".count)) : record.fileName
        var collisions: Set<String> = []
        if case .finishing(let taken)? = lives[id] { collisions = taken }
        let name = FileNaming.unique(wanted) { candidate in
            let path = record.directory + "/" + candidate
            return collisions.contains(path) || records.isClaimed(path, byOtherThan: id) || exists(path)
                || (path + ".part" != partialPath && exists(path + ".part"))
        }
        if name + ".part" != partialName { record.partialName = partialName }
        record.fileName = name
        record.bytesDone = bytes
        record.bytesTotal = bytes
        put(record)
        return record
    }

    /// What the queue does next to put a complete download's file in place.
    package enum RenameStep: Equatable, Sendable {
        /// Perform the actions (the record with its chosen name is saved first), then rename the partial file to
        /// `path`, never over an existing file, and report with ``renamed(_:_:bytes:partialPath:now:exists:)``.
        case rename(to: String, [Action])
        /// The file is in place: commit this record (``commitRequested(_:)``).
        case commit(DownloadRecord)
        case fail(DownloadFailure)
    }

    /// How a rename without replacing went.
    package enum RenameResult: Equatable, Sendable {
        case renamed
        /// A file appeared under the name after it was chosen.
        case nameTaken
        case failed(errno: Int32)
    }

    /// The body of a download is complete and synced: its final name is chosen (``chooseName(_:bytes:partialPath:exists:)``)
    /// and saved before the rename.
    package mutating func nameFile(
        _ id: Int64,
        bytes: Int64,
        partialPath: String,
        exists: (String) -> Bool
    ) -> RenameStep {
        let record = chooseName(id, bytes: bytes, partialPath: partialPath, exists: exists)
        return .rename(to: record.path, [.persist([record], .processCrash)])
    }

    /// The rename to the chosen name ended. A file that appeared there meanwhile stays (it is someone else's), and
    /// another name is chosen: the taken one is remembered while the download finishes, so that the next try never
    /// picks it again even if it vanished.
    package mutating func renamed(
        _ id: Int64,
        _ result: RenameResult,
        bytes: Int64,
        partialPath: String,
        now: Int64,
        exists: (String) -> Bool
    ) -> RenameStep {
        guard let record = records[id] else { preconditionFailure("download \(id) renamed without a record") }
        switch result {
        case .renamed:
            return .commit(completedRecord(id, now: now))
        case .failed(let code):
            return .fail(.file(.rename, errno: code, path: record.path))
        case .nameTaken:
            let taken = record.path
            if case .finishing(var collisions)? = lives[id] {
                collisions.insert(taken)
                set(id, .finishing(collisions: collisions))
            }
            let log = Action.log(
                .info,
                "download \(id): \(taken) appeared while it was being completed; taking another name"
            )
            let next = nameFile(id, bytes: bytes, partialPath: partialPath) { $0 == taken || exists($0) }
            guard case .rename(let path, let actions) = next else { return next }
            return .rename(to: path, [log] + actions)
        }
    }

    /// The file is in place under its final name: the record as it will be committed (not yet in the table).
    package func completedRecord(_ id: Int64, now: Int64) -> DownloadRecord {
        guard let record = records[id] else { preconditionFailure("download \(id) completed without a record") }
        return Self.completed(record, at: now)
    }

    private static func completed(_ unfinished: DownloadRecord, at now: Int64) -> DownloadRecord {
        var record = unfinished
        record.partialName = nil
        record.state = .completed
        record.completedAt = now
        record.nextAttemptAt = nil
        record.errorCode = nil
        record.errorMessage = nil
        record.errorHTTPStatus = nil
        return record
    }

    /// The completion is committed. A cancel that came meanwhile removes the entry (the complete file stays); any
    /// other command yields to the completion, which is then saved again over what the command saved (a pause, a
    /// `move`, a `--now` wrote the row as the table had it: unfinished).
    package mutating func committed(_ committed: DownloadRecord, runsHook: Bool) -> [Action] {
        guard let current = records[committed.id], let live = lives[committed.id] else { return [] }
        if live.stored == .cancelled { return stopped(committed.id) }
        var record = committed
        // What a command changed that still means something for a completed download.
        record.priority = current.priority
        record.position = current.position
        record.bypassesGate = current.bypassesGate
        put(record)
        settle(record.id, .completed)
        record.state = .completed
        var actions: [Action] = []
        if !live.isActive || Self.completed(current, at: committed.completedAt ?? 0) != committed {
            actions.append(.persist([record], .powerLoss))
        }
        let size = record.bytesTotal ?? record.bytesDone
        actions.append(.log(.info, "download \(record.id) completed: \(record.path) (\(size) bytes)"))
        actions.append(.publish(.completed, record))
        if runsHook { actions.append(.runHook(record)) }
        return actions
    }

    // MARK: - Group commit

    /// A completion's place in the group commit.
    package enum CommitTurn: Equatable, Sendable {
        /// Commit a batch now (``commitBatch(leadBy:)``).
        case lead
        /// Wait: the batch being committed ends by handing the lead on (``batchCommitted()``), and the next one
        /// commits this completion, either led by it or by one that came earlier.
        case wait
    }

    /// A completion's file is in place and its record (``completedRecord(_:now:)``) is to be committed. Completions
    /// that arrive while a batch is being synced and committed wait, and go together in the next batch: N files
    /// finishing at once cost one sync per directory and one SQLite commit, not N of each.
    package mutating func commitRequested(_ record: DownloadRecord) -> CommitTurn {
        if committingBatch {
            waitingCommits.append(record)
            return .wait
        }
        committingBatch = true
        return .lead
    }

    /// The batch the leader commits: itself and every completion waiting by now.
    package mutating func commitBatch(leadBy leader: DownloadRecord) -> [DownloadRecord] {
        let batch = [leader] + waitingCommits.filter { $0.id != leader.id }
        waitingCommits = []
        return batch
    }

    /// The rows a batch writes once its directories are synced, and the downloads whose hook is due with them.
    ///
    /// A cancel answered meanwhile was committed first and holds: its row is not written back as completed (the file
    /// stays under its final name, the download goes). Asked with no await before the save is submitted, so a
    /// cancel arriving later is committed after it. A hook due is recorded with its completion, so that a crash
    /// before it starts still runs it.
    package func rowsToCommit(_ batch: [DownloadRecord], runsHook: Bool) -> (rows: [DownloadRecord], hooks: [Int64]) {
        let rows = batch.filter { records[$0.id]?.state != .cancelled }
        return (rows, runsHook ? rows.map(\.id) : [])
    }

    /// A batch is committed: the lead goes to the first completion that came meanwhile (`nil`: nobody waits, and the
    /// next completion leads).
    package mutating func batchCommitted() -> Int64? {
        guard let next = waitingCommits.first else {
            committingBatch = false
            return nil
        }
        return next.id
    }

    // MARK: - Enqueue

    /// Chooses free names for new downloads and reserves them until ``enqueued(_:reserved:)``.
    ///
    /// - Parameter exists: Whether a file of this name exists in the directory (a leftover `<name>.part` kept by a
    ///   cancel also takes the name: the new download would resume into it or truncate it).
    /// - Returns: The paths chosen, in the order asked.
    package mutating func reserveNames(
        _ wanted: [(directory: String, name: String)],
        exists: (_ directory: String, _ name: String) -> Bool
    ) -> [String] {
        var taken: Set<String> = []
        var paths: [String] = []
        for (directory, wantedName) in wanted {
            let name = FileNaming.unique(wantedName) { candidate in
                let path = directory + "/" + candidate
                if taken.contains(path) || reservedPaths.contains(path) || records.isClaimed(path, byOtherThan: nil) {
                    return true
                }
                return exists(directory, candidate) || exists(directory, candidate + ".part")
            }
            taken.insert(directory + "/" + name)
            paths.append(directory + "/" + name)
        }
        reservedPaths.formUnion(taken)
        return paths
    }

    /// The enqueue's commit ended (or failed): its names are no longer reserved, and the new downloads join.
    ///
    /// They were stored as the gate was when the enqueue began (``admitted(_:)``); one the gate turned for during
    /// the commit follows the gate as it is now, and is saved again.
    package mutating func enqueued(_ added: [DownloadRecord], reserved: [String]) -> [Action] {
        reservedPaths.subtract(reserved)
        var readmitted: [DownloadRecord] = []
        for var record in added {
            if record.state == .queued || Self.pausedByGate(record) {
                let before = record
                record.state = admission(&record).stored
                if record != before { readmitted.append(record) }
            }
            join(record)
        }
        let saved: [Action] = readmitted.isEmpty ? [] : [.persist(readmitted, .powerLoss)]
        return saved + added.compactMap { records[$0.id].map { .publish(.added, $0) } } + [.reschedule]
    }

    // MARK: - Commands

    /// The downloads a command names: every listed one, or these ids (each must exist).
    package enum Selection: Equatable, Sendable {
        case all
        case ids([Int64])
    }

    /// Whether clients see this download (a cancelled one is on its way out; an unlisted one was cleared).
    package func isVisible(_ id: Int64) -> Bool {
        guard let record = records[id] else { return false }
        return record.state != .cancelled && record.listed
    }

    private func select(
        _ selection: Selection,
        where eligible: (DownloadRecord) -> Bool
    ) throws(DownloadQueueError) -> [Int64] {
        switch selection {
        case .all:
            return records.values.filter { $0.listed && eligible($0) }.map(\.id).sorted()
        case .ids(let ids):
            for id in ids where !isVisible(id) { throw .unknownDownload(id) }
            return ids
        }
    }

    /// Applies `change` to the selected downloads that are `eligible` (others are left alone); each becomes the
    /// state it returns.
    private mutating func change(
        _ selection: Selection,
        where eligible: (DownloadRecord) -> Bool,
        _ change: (inout DownloadRecord) -> Settled
    ) throws(DownloadQueueError) -> [DownloadRecord] {
        var changed: [DownloadRecord] = []
        for id in try select(selection, where: eligible) {
            guard var record = records[id], eligible(record) else { continue }
            let state = change(&record)
            put(record)
            settle(id, state)
            if let settled = records[id] { changed.append(settled) }
        }
        return changed
    }

    /// A user's pause; it also takes over a download the gate paused, which then stays paused when the gate opens.
    package mutating func pause(_ selection: Selection) throws(DownloadQueueError) -> [Action] {
        let running = { (record: DownloadRecord) in
            record.state == .queued || record.state == .active || Self.pausedByGate(record)
        }
        let changed = try change(selection, where: running) {
            $0.pauseReason = nil
            return .paused
        }
        var actions: [Action] = [.persist(changed, .powerLoss)]
        for record in changed {
            if holdsSlot(record.id) { actions.append(.stopTransfer(record.id)) }
            actions.append(.publish(.paused, record))
        }
        return actions
    }

    /// While the gate is closed a resumed download waits for it (paused with the gate's reason) unless it was queued
    /// with `--now`: resuming means "run when allowed", and `--now` is how to say "run anyway".
    package mutating func resume(_ selection: Selection) throws(DownloadQueueError) -> [Action] {
        let paused = { (record: DownloadRecord) in record.state == .paused }
        let changed = try change(selection, where: paused) { [self] in
            $0.pauseReason = nil
            $0.nextAttemptAt = nil
            return admission(&$0)
        }
        return [.persist(changed, .powerLoss)] + changed.map { .publish(Self.releaseEvent($0), $0) } + [.reschedule]
    }

    package mutating func retry(_ selection: Selection) throws(DownloadQueueError) -> [Action] {
        let eligible = { (record: DownloadRecord) in
            record.state == .failed || (record.state == .queued && record.nextAttemptAt != nil)
        }
        let changed = try change(selection, where: eligible) { [self] in
            $0.attempts = 0
            $0.nextAttemptAt = nil
            return admission(&$0)
        }
        return [.persist(changed, .powerLoss)] + changed.map { .publish(Self.releaseEvent($0), $0) } + [.reschedule]
    }

    // MARK: - The gate

    /// Whether the gate paused this download (and its opening resumes it).
    package static func pausedByGate(_ record: DownloadRecord) -> Bool {
        record.state == .paused && record.pauseReason.flatMap(GateReason.init(rawValue:)) != nil
    }

    /// The state of a download that may run: `queued`, or paused with the gate's reason (written into `record`)
    /// while the gate holds it.
    private func admission(_ record: inout DownloadRecord) -> Settled {
        if let gate, !record.bypassesGate {
            record.pauseReason = gate.rawValue
            return .paused
        }
        record.pauseReason = nil
        return .queued
    }

    /// How a download let go by a command is announced: resumed, or paused again by the closed gate.
    private static func releaseEvent(_ record: DownloadRecord) -> Announcement {
        record.state == .paused ? .paused : .resumed
    }

    /// The state a new download is stored with: `queued`, or paused by the closed gate.
    package func admitted(_ record: DownloadRecord) -> DownloadRecord {
        var record = record
        record.state = admission(&record).stored
        return record
    }

    /// The gate closed (with a reason), changed its reason, or opened (`nil`).
    ///
    /// Closing stops running transfers (their partial files stay, and resume with a Range request) and pauses them
    /// and the queued downloads with the reason; `--now` downloads and those finishing (their bytes are all there)
    /// go on. Opening resumes exactly the downloads the gate paused: never one a user paused or `disk_full` paused,
    /// and a retry time a download was waiting for still holds.
    package mutating func gateChanged(closedBecause reason: GateReason?) -> [Action] {
        // The first call always looks at every download: rows the gate paused before a restart resume if it is open.
        guard !gateKnown || reason != gate else { return [] }
        let turned = !gateKnown ? reason != nil : reason != gate
        gateKnown = true
        gate = reason
        var changed: [DownloadRecord] = []
        var actions: [Action] = []
        for var record in records.values where !record.bypassesGate {
            guard let live = lives[record.id] else { continue }
            let held: Bool
            switch live {
            case .idle(.queued), .windingDown(.queued, _): held = true
            // An open gate has nothing to do with a running download (the first look may come while some run); one
            // finishing has all its bytes and goes on.
            case .opening, .transferring: held = reason != nil
            case .finishing: held = false
            case .idle(.paused), .windingDown(.paused, _): held = Self.pausedByGate(record)
            case .idle, .windingDown: held = false
            }
            guard held else { continue }
            let before = record
            let state = admission(&record)
            // A queued download stays queued when the gate opens: neither a write nor a `download.resumed` for it.
            guard record != before || state.stored != before.state else { continue }
            put(record)
            settle(record.id, state)
            if let settled = records[record.id] { changed.append(settled) }
            if live.isActive && live.holdsSlot { actions.append(.stopTransfer(record.id)) }
        }
        changed.sort { $0.id < $1.id }
        guard turned || !changed.isEmpty else { return [.reschedule] }
        let message =
            reason.map {
                "downloads held: \($0 == .metered ? "the network is metered" : "outside the download windows")"
            }
            ?? "downloads may run again"
        return [.log(.info, "\(message) (\(changed.count) download(s))"), .persist(changed, .powerLoss)] + actions
            + changed.map { .publish(Self.releaseEvent($0), $0) } + [.reschedule]
    }

    /// `--now` for downloads that already existed: they pass the gate from now on, and one the gate paused runs.
    package mutating func expedite(_ ids: [Int64]) -> [Action] {
        var changed: [DownloadRecord] = []
        for id in ids {
            guard var record = records[id], !record.bypassesGate, record.state != .completed,
                record.state != .cancelled
            else { continue }
            record.bypassesGate = true
            let released = Self.pausedByGate(record) ? admission(&record) : nil
            put(record)
            if let released { settle(id, released) }
            if let settled = records[id] { changed.append(settled) }
        }
        guard !changed.isEmpty else { return [] }
        return [.persist(changed, .powerLoss)] + changed.filter { $0.state == .queued }.map { .publish(.resumed, $0) }
            + [.reschedule]
    }

    /// Committed as `cancelled` first, so that a daemon dying before the partial file is gone finishes the job at
    /// the next start. A download with a transfer is removed when that transfer ends; the others go at once, in one
    /// transaction.
    package mutating func cancel(_ ids: [Int64], deletePartial: Bool) throws(DownloadQueueError) -> [Action] {
        let unfinished = { (record: DownloadRecord) in record.state != .completed && record.state != .cancelled }
        var stopping: Set<Int64> = []
        let changed = try change(.ids(ids), where: unfinished) { [self] in
            $0.deletePartial = deletePartial
            if holdsSlot($0.id) { stopping.insert($0.id) }
            return .cancelled
        }
        var actions: [Action] = [.persist(changed, .powerLoss)]
        var idle: [DownloadRecord] = []
        for record in changed {
            switch lives[record.id] {
            case .windingDown?:
                // A running transfer is stopped; the end of any attempt removes it.
                if stopping.contains(record.id) { actions.append(.stopTransfer(record.id)) }
            case .idle?, .opening?, .transferring?, .finishing?, nil: idle.append(record)
            }
        }
        for record in idle { remove(record.id) }
        actions += idle.map { .discardPartial($0) }
        if !idle.isEmpty { actions.append(.delete(idle.map(\.id))) }
        actions += idle.map { .publish(.removed, $0) }
        return actions
    }

    /// Where a download goes in the queue.
    package enum Placement: Equatable, Sendable {
        case top
        case bottom
        case before(Int64)
    }

    package mutating func move(_ id: Int64, to placement: Placement) throws(DownloadQueueError) -> [Action] {
        guard isVisible(id), let moving = records[id] else { throw .unknownDownload(id) }
        let unfinished = { (state: DownloadRecord.State) in state == .queued || state == .paused || state == .active }
        guard unfinished(moving.state) else { throw .notMovable(id, moving.state) }
        var order = orderedRecords().filter { unfinished($0.state) }.map(\.id)
        order.removeAll { $0 == id }
        switch placement {
        case .top: order.insert(id, at: 0)
        case .bottom: order.append(id)
        case .before(let other):
            guard let index = order.firstIndex(of: other) else { throw .unknownDownload(other) }
            order.insert(id, at: index)
        }
        var changed: [DownloadRecord] = []
        for (index, current) in order.enumerated() {
            guard var record = records[current] else { continue }
            if placement == .top && current == id, let first = order.dropFirst().first, let next = records[first] {
                record.priority = max(record.priority, next.priority)
            }
            let position = Int64(index + 1)
            if record.position != position || current == id {
                record.position = position
                put(record)
                changed.append(record)
            }
        }
        return [.persist(changed, .powerLoss), .reschedule]
    }

    /// `clear`: the finished downloads in `states` leave the list now, before their rows are cleared, so that no
    /// command (a `retry` from another client) can take one up meanwhile. One whose attempt is still winding down
    /// goes too: nothing of that attempt reads its record again.
    ///
    /// - Returns: The downloads taken off and what the store does with them; ``cleared(_:unlisted:deletePartial:)``
    ///   or ``clearNotSaved(_:)`` concludes them.
    package mutating func clear(_ states: Set<DownloadRecord.State>) -> Clearing {
        let chosen = records.values.filter { $0.listed && states.contains($0.state) }.sorted { $0.id < $1.id }
        for record in chosen { records[record.id]?.listed = false }
        return Clearing(
            records: chosen,
            unlist: chosen.filter { $0.state == .completed }.map(\.id),
            delete: chosen.filter { $0.state != .completed }.map(\.id)
        )
    }

    /// What a `clear` asks of the store, in one go.
    package struct Clearing: Equatable, Sendable {
        /// The downloads taken off the list.
        package var records: [DownloadRecord]
        /// Completed ones: their rows are cleared, and stay (unlisted) while an episode points at their file.
        package var unlist: [Int64]
        /// The others: their rows are deleted.
        package var delete: [Int64]
    }

    /// What a discard (an episode leaving the kept set, an unsubscribe) does.
    package struct Discarding: Equatable, Sendable {
        /// The cancel of the unfinished ones, their partial files deleted: a command's actions, committed first.
        package var cancel: [Action]
        /// Completed ones whose files are deleted first (``FileDisposal``); each then forgotten unless refused.
        package var dispose: [DownloadRecord]
        /// Completed ones forgotten with their files kept.
        package var forget: [DownloadRecord]
    }

    /// Removes downloads for good: unfinished ones are cancelled, completed ones forgotten, their files deleted
    /// first with `deleteFiles`. A download being cancelled already, or gone, is left alone.
    package mutating func discard(_ ids: [Int64], deleteFiles: Bool) throws(DownloadQueueError) -> Discarding {
        let existing = ids.compactMap { id in records[id].flatMap { $0.state == .cancelled ? nil : $0 } }
        let unfinished = existing.filter { $0.state != .completed }.map(\.id)
        let completed = existing.filter { $0.state == .completed }
        return Discarding(
            cancel: unfinished.isEmpty ? [] : try cancel(unfinished, deletePartial: true),
            dispose: deleteFiles ? completed : [],
            forget: deleteFiles ? [] : completed
        )
    }

    /// The store did not clear the downloads: they are listed again.
    package mutating func clearNotSaved(_ cleared: [DownloadRecord]) {
        for record in cleared where records[record.id] != nil { records[record.id]?.listed = true }
    }

    /// The downloads left the list: `unlisted` ones stay in the table off the list (an episode points at their file,
    /// so its podcast's keep and `unsubscribe --delete-files` still find it), the others are gone.
    package mutating func cleared(
        _ cleared: [DownloadRecord],
        unlisted: Set<Int64>,
        deletePartial: Bool
    ) -> [Action] {
        var actions: [Action] = []
        for var record in cleared {
            if !unlisted.contains(record.id) { remove(record.id) }
            if record.state == .failed {
                record.deletePartial = deletePartial
                actions.append(.discardPartial(record))
            }
            actions.append(.publish(.removed, record))
        }
        return actions
    }

    /// Completed downloads forgotten (their rows deleted by the caller): they leave the table.
    package mutating func forgotten(_ completed: [DownloadRecord]) -> [Action] {
        for record in completed where records[record.id]?.state == .completed { remove(record.id) }
        return completed.map { .publish(.removed, $0) }
    }

    // MARK: - Reading

    /// Active first, then queued by priority (high first) and position, then the rest by id.
    package func orderedRecords() -> [DownloadRecord] {
        // Small keys are sorted, not the records: moving whole records around was a tenth of a `downloads` call.
        typealias Key = (rank: Int, priority: Int, position: Int64, id: Int64)
        let keys: [Key] = records.values.compactMap { record in
            // A cancelled download stays in the table only until its transfer stops; clients see it as removed.
            guard record.listed, record.state != .cancelled else { return nil }
            let rank = Self.rank(record.state)
            // Only unfinished downloads are ordered by priority (high first: `~` reverses the order and, unlike a
            // minus, cannot overflow) and position; the rest by id.
            return rank <= 2 ? (rank, ~record.priority, record.position, record.id) : (rank, 0, 0, record.id)
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

/// Why the download queue refused a command. The control server maps it to a JSON-RPC error in one place.
package struct DownloadQueueError: Error, Equatable, Sendable {
    package enum Code: Equatable, Sendable {
        /// A parameter is wrong; `parameter` names it.
        case invalid(parameter: String)
        case unknownDownload(Int64)
        /// Only unfinished downloads have a place in the queue.
        case notMovable(Int64, DownloadRecord.State)
        /// The store could not save the change.
        case notSaved
    }

    package var code: Code
    /// What is wrong, as a clause that the protocol layer frames ("'ids' must name at least one download").
    package var message: String

    static func invalid(_ message: String, parameter: String) -> Self {
        Self(code: .invalid(parameter: parameter), message: message)
    }

    static func unknownDownload(_ id: Int64) -> Self {
        Self(code: .unknownDownload(id), message: "there is no download \(id)")
    }

    static func notMovable(_ id: Int64, _ state: DownloadRecord.State) -> Self {
        Self(code: .notMovable(id, state), message: "download \(id) is \(state.rawValue)")
    }

    static func notSaved(_ error: any Error) -> Self {
        Self(code: .notSaved, message: "the queue could not be saved: \(error)")
    }
}
