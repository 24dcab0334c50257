import CPosix
import FoundationEssentials
import SinglecastHTTP
import SinglecastStore
import Synchronization

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// One file for ``DownloadQueue/enqueue(_:)-([DownloadRequest])``: where it comes from and where it goes.
package struct DownloadRequest: Sendable, Hashable {
    package var url: String
    /// An absolute directory, created when missing.
    package var directory: String
    /// The file name (sanitized); `nil` takes it from the URL.
    package var name: String?
    package var headers: [String]
    package var user: String?
    package var password: String?
    package var priority: Int
    /// The episode to link to the download, in the enqueue's own transaction.
    package var episode: Int64?
    /// The type the episode's feed announced for its enclosure (with `episode` only): what the media check holds the
    /// body against at completion.
    package var enclosureType: String?
    /// Pass the download gate (`--now`).
    package var now: Bool
    /// Whether the client chose `directory` (`--to`) rather than taking the default: only a chosen one asks for a
    /// copy of a completed download elsewhere, or conflicts with an unfinished one saving somewhere else.
    package var directoryChosen: Bool

    package init(
        url: String,
        directory: String,
        name: String? = nil,
        headers: [String] = [],
        user: String? = nil,
        password: String? = nil,
        priority: Int = 0,
        episode: Int64? = nil,
        enclosureType: String? = nil,
        now: Bool = false,
        directoryChosen: Bool = true
    ) {
        self.now = now
        self.directoryChosen = directoryChosen
        self.episode = episode
        self.enclosureType = enclosureType
        self.url = url
        self.directory = directory
        self.name = name
        self.headers = headers
        self.user = user
        self.password = password
        self.priority = priority
    }
}

/// Settings of the queue that a reload may change.
package struct QueueSettings: Sendable, Hashable {
    package var scheduler = QueueScheduler()
    package var retry = RetryPolicy()
    package var transfer = TransferOptions()
    /// The configured global speed limit (bytes per second); `limit` overrides it until the next restart.
    package var speedLimit: Int64?
    /// Bytes or seconds between checkpoints (fdatasync of the partial file, offset recorded in the store).
    package var checkpointBytes: Int64 = 8 << 20
    package var checkpointInterval: Duration = .seconds(5)
    /// Program run after each completed download (``CompletionHook``).
    package var onComplete: String?
    /// How completed files are deleted (`use_trash`).
    package var disposal = FileDisposal(trash: nil)

    package init() {}
}

/// What the download queue needs of an HTTP engine; ``HTTPEngine`` is the real one. Tests drive the queue with an
/// engine that writes scripted bytes, so the races between a transfer and a command run in milliseconds.
package protocol TransferEngine: Sendable {
    /// Runs one transfer into `request.fileDescriptor`; cancelling the calling task stops it.
    func transfer(
        _ request: TransferRequest,
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async -> TransferOutcome
    /// The global speed limit (bytes per second), applied to running transfers too; `nil` removes it.
    func setSpeedLimit(_ bytesPerSecond: Int64?)
}

extension HTTPEngine: TransferEngine {}

/// The persistent download queue: every change is committed to the store before it is acknowledged or
/// announced, and the partial file on disk is the truth for how far a download got.
///
/// An I/O shell around ``DownloadQueueStateMachine``, which owns every download's state and every decision: this
/// actor opens, syncs and renames files, runs transfers on the engine, commits and publishes, in the order the
/// machine's actions say.
package actor DownloadQueue: Service {
    private let store: Store
    private let engine: any TransferEngine
    private let events: EventBus
    private let logger: Logger
    /// Where downloads go unless a request names a directory.
    package nonisolated let defaultDirectory: String
    /// The previous run died on another boot: a partial file's tail past the last checkpoint may hold zeros
    /// the power cut left, so it is cut back to the checkpoint.
    private let distrustUncheckpointedBytes: Bool
    /// Unix milliseconds; injected so that tests can move time by hand.
    private let now: @Sendable () -> Int64
    private var settings: QueueSettings
    /// Runs `on_complete` programs; a service of its own in the daemon's task group, stopped after the queue.
    package nonisolated let hooks: HookRunner
    /// The limit `limit` set (`.some(nil)`: unlimited), kept in the store across restarts; `nil`: the configured one.
    private var speedLimitOverride: Int64??

    private var machine = DownloadQueueStateMachine()
    /// The live side of each transfer holding a slot: its progress and the signal that stops it.
    private var running: [Int64: RunningTransfer] = [:]
    /// Whether ``reportProgress()`` runs: it does while any transfer does.
    private var reportingProgress = false
    /// Checkpoint syncs under way, by download: its attempt waits for one before it ends.
    private var checkpoints: [Int64: Task<Void, Never>] = [:]
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// Signals every published event, so the daemon's status line is rebuilt only when something changed.
    package nonisolated let changes: AsyncStream<Void>
    private let changed: AsyncStream<Void>.Continuation
    /// Signals completed downloads, for retention (a completed file may go over `max_storage`).
    package nonisolated let completions: AsyncStream<Void>
    private let completed: AsyncStream<Void>.Continuation
    /// The same signal for the chapters and transcripts saved beside episodes' files (a stream has one reader).
    package nonisolated let sidecarCompletions: AsyncStream<Void>
    private let sidecarCompleted: AsyncStream<Void>.Continuation
    private var wake = WakeSchedule()
    /// What holds downloads back: the window and the metered network, as their services last said.
    private var gate = DownloadGate()
    private var windows = DownloadWindows()
    /// Whether NetworkManager reports a metered network; `nil` until it says, or when nobody asks it.
    private var metered: Bool?
    /// Completions waiting in the group commit (``commitCompletion(_:)``), by download.
    private var commitWaiters: [Int64: CheckedContinuation<CommitTurn, Never>] = [:]
    /// libmagic's database could not be loaded (logged once): completed downloads are not checked.
    private var mediaCheckUnavailable = false
    /// What the media check holds each download's body against (``AnnouncedTypes``).
    private var announcedTypes = AnnouncedTypes()

    /// The live side of an active download, shared with the engine's progress callback.
    final class RunningTransfer: Sendable {
        let progress = Mutex<(bytes: Int64, total: Int64?)>((0, nil))
        /// The final response's validators, as soon as its headers arrive.
        let validators = Mutex<(etag: String?, lastModified: String?)>((nil, nil))
        /// The engine's task and the partial file it writes, once started; whether a pause or cancel stopped it.
        private let control = Mutex<(task: Task<TransferOutcome, Never>?, fd: Int32?, stopped: Bool)>((nil, nil, false))

        init() {}

        /// The partial file the transfer writes, while it runs.
        var fileDescriptor: Int32? { control.withLock { $0.fd } }

        /// Stops the transfer (it ends as cancelled), or makes it stop as soon as it starts.
        func stop() {
            control.withLock { control in
                control.stopped = true
                return control.task
            }?.cancel()
        }

        func started(_ task: Task<TransferOutcome, Never>, fd: Int32) {
            let stopped = control.withLock { control in
                control.task = task
                control.fd = fd
                return control.stopped
            }
            if stopped { task.cancel() }
        }

        func ended() {
            control.withLock { $0 = (nil, nil, $0.stopped) }
        }
    }

    package init(
        store: Store,
        engine: any TransferEngine,
        events: EventBus,
        logger: Logger,
        settings: QueueSettings,
        defaultDirectory: String,
        distrustUncheckpointedBytes: Bool,
        hookStopTimeout: Duration = .seconds(10),
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds
    ) {
        self.store = store
        self.engine = engine
        self.events = events
        self.logger = logger
        self.settings = settings
        self.defaultDirectory = defaultDirectory
        self.distrustUncheckpointedBytes = distrustUncheckpointedBytes
        self.now = now
        self.hooks = HookRunner(store: store, logger: logger, stopTimeout: hookStopTimeout)
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (completions, completed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (sidecarCompletions, sidecarCompleted) = AsyncStream.makeStream(
            of: Void.self,
            bufferingPolicy: .bufferingNewest(1)
        )
    }

    // MARK: - Service

    package func run() async throws {
        engine.setSpeedLimit(effectiveSpeedLimit)
        // Downloads the gate paused before a restart resume if nobody closes it (and NetworkManager's answer is not
        // awaited).
        if !machine.gateKnown, gate.isSettled { await perform(machine.gateChanged(closedBecause: gate.closedBecause)) }
        wakeup.yield()
        await withDiscardingTaskGroup { group in
            for await _ in wakeups {
                for action in machine.startDue(settings.scheduler, now: now()) {
                    switch action {
                    case .startTransfer(let id):
                        let transfer = RunningTransfer()
                        running[id] = transfer
                        group.addTask { await self.runTransfer(id, transfer) }
                        if !reportingProgress {
                            reportingProgress = true
                            group.addTask { await self.reportProgress() }
                        }
                    case .wake(let at):
                        if wake.request(at) { group.addTask { await self.sleepUntil(at) } }
                    default:
                        preconditionFailure("scheduling asked for \(action)")
                    }
                }
            }
            group.cancelAll()
        }
    }

    /// The wall clock jumped (``WallClockWatch``): retries fall due by it, so the run loop looks again.
    package nonisolated func wallClockMoved() {
        wakeup.yield()
    }

    /// Ends the run loop; active transfers are cancelled and keep their partial files.
    package nonisolated func shutdown() {
        wakeup.finish()
    }

    private func sleepUntil(_ at: Int64) async {
        let delay = max(0, at - now())
        try? await Task.sleep(for: .milliseconds(delay))
        wake.woke(at)
        wakeup.yield()
    }

    /// Start-up, before READY: loads the queue, finishes what a crash interrupted, removes partial files of
    /// cancelled rows. Until it returns, the queue would answer as if it were empty.
    package func recover() async throws {
        var changed: [DownloadRecord] = []
        var removed: [Int64] = []
        var kept: [DownloadRecord] = []
        for stored in try await store.downloads() {
            // Only an unfinished download's files tell anything: thousands of completed ones cost no stat at start-up.
            let unfinished = stored.state != .completed && stored.state != .cancelled
            let partialExists = unfinished && Self.fileSize(stored.partialPath) != nil
            let finalSize = unfinished ? Self.fileSize(stored.path) : nil
            let recovery = DownloadQueueStateMachine.recover(
                stored,
                partialExists: partialExists,
                finalSize: finalSize,
                finalMarked: !partialExists && finalSize != nil
                    && CompletionMark.isOn(stored.path, value: CompletionMark.value(of: stored)),
                now: now()
            )
            switch recovery {
            case .discard(let record):
                Self.discardPartial(of: record, root: defaultDirectory)
                removed.append(record.id)
            case .keep(let record, let wasChanged):
                if wasChanged { changed.append(record) }
                kept.append(record)
            }
        }
        machine.load(kept)
        speedLimitOverride = try await store.speedLimitOverride()
        try await store.deleteDownloads(removed)
        try await store.save(changed)
        let released = try await store.releaseEpisodesOfMissingDownloads(at: now(), reason: "its download was removed")
        if released > 0 {
            logger.notice("released \(ListSummary.count(released, "episode")) from downloads that no longer exist")
        }
        let pendingHooks = try await store.pendingHooks()
        let completed = pendingHooks.compactMap { machine.records[$0] }.filter { $0.state == .completed }
        await hooks.resume(
            pendingHooks,
            completed: Dictionary(uniqueKeysWithValues: completed.map { ($0.id, $0) }),
            program: settings.onComplete
        )
        let pending = kept.count { $0.state == .queued }
        if pending > 0 {
            logger.notice("resuming \(pending == 1 ? "1 unfinished download" : "\(pending) unfinished downloads")")
        }
    }

    // MARK: - Carrying out the machine's actions

    /// Performs actions in order; a store error is logged and the rest goes on, since the next commit or start-up
    /// repairs it.
    private func perform(_ actions: [DownloadQueueStateMachine.Action]) async {
        do throws(DownloadQueueError) {
            try await execute(actions, throwingStoreErrors: false)
        } catch {
            preconditionFailure("store errors were to be logged, yet \(error) was thrown")
        }
    }

    /// Performs a command's actions in order; a store error is thrown to the client, and nothing after it is done.
    private func performCommand(_ actions: [DownloadQueueStateMachine.Action]) async throws(DownloadQueueError) {
        try await execute(actions, throwingStoreErrors: true)
    }

    private func execute(
        _ actions: [DownloadQueueStateMachine.Action],
        throwingStoreErrors: Bool
    ) async throws(DownloadQueueError) {
        for action in actions {
            switch action {
            case .startTransfer, .wake, .reschedule:
                wakeup.yield()  // the run loop starts transfers and sleeps
            case .stopTransfer(let id):
                running[id]?.stop()
            case .persist(let records, let durability):
                guard !records.isEmpty else { continue }
                do {
                    try await store.save(records, durability: durability)
                } catch {
                    if throwingStoreErrors { throw .notSaved(error) }
                    let which = (records.count == 1 ? "download " : "downloads ") + ListSummary.ids(records.map(\.id))
                    logger.error("cannot save \(which): \(error)")
                }
            case .delete(let ids):
                do {
                    try await store.deleteDownloads(ids)
                } catch {
                    let which = (ids.count == 1 ? "download " : "downloads ") + ListSummary.ids(ids)
                    logger.error("cannot remove cancelled \(which): \(error)")
                }
            case .discardPartial(let record):
                Self.discardPartial(of: record, root: defaultDirectory)
            case .publish(let event, let record):
                publish(event, record)
                if event == .completed {
                    completed.yield()
                    sidecarCompleted.yield()
                }
            case .runHook(let record):
                if let program = settings.onComplete { hooks.run(program, for: record) }
            case .log(let level, let message):
                logger.log(level, message)
            }
        }
    }

    // MARK: - One transfer

    private func runTransfer(_ id: Int64, _ transfer: RunningTransfer) async {
        await attempt(id, transfer)
        if running[id] === transfer { running[id] = nil }
        await perform(machine.attemptEnded(id))
    }

    private func attempt(_ id: Int64, _ transfer: RunningTransfer) async {
        guard let partialPath = machine.records[id]?.partialPath else { return }
        // Here, not on a file-sync lane: the queue makes its other calls on the directory's names (renames, unlinks,
        // truncates) here too, and the hop to a lane and back was 15 % of the CPU a 64 KiB download cost. Only syncs,
        // which wait for the disk by design, go to the lanes.
        let (fd, code) = DownloadDirectory.openFile(partialPath, root: defaultDirectory)
        // A pause or cancel may have come before this attempt's task ran.
        let plan = machine.resumePlan(
            id,
            fileSize: fd >= 0 ? Self.fileSize(fd) : 0,
            distrustUncheckpointedBytes: distrustUncheckpointedBytes
        )
        guard case .transfer(let offset, let truncate) = plan else {
            if fd >= 0 { close(fd) }
            return await perform(machine.stopped(id))
        }
        guard fd >= 0 else { return await fail(id, .file(.open, errno: code, path: partialPath)) }
        defer { close(fd) }
        if truncate, let failure = Self.truncate(fd, to: offset, path: partialPath, root: defaultDirectory) {
            return await fail(id, failure)
        }
        transfer.progress.withLock { $0 = (offset, machine.records[id]?.bytesTotal) }
        await perform(machine.began(id, offset: offset, now: now()))
        guard let record = machine.records[id] else { return }
        var request = TransferRequest(
            url: record.url,
            headers: record.headers,
            basicAuthUser: record.authUser,
            basicAuthPassword: record.authPassword,
            resumeOffset: offset,
            etag: record.etag,
            lastModified: record.lastModified,
            expectedTotal: record.bytesTotal,
            fileDescriptor: fd,
            options: settings.transfer
        )
        // A body announced bigger than the file system can hold pauses the download before it fills the disk.
        request.freeSpace = Self.freeSpace(fd)
        let outcome = await runEngine(request, transfer)
        // A checkpoint under way finishes before the file is synced for good, or closed.
        if let checkpoint = checkpoints[id] { await checkpoint.value }
        if offset > 0 { logResume(id, from: offset, outcome) }
        if running[id] === transfer { running[id] = nil }
        await perform(machine.transferEnded(id))
        await finish(id, outcome, fd: fd, partialPath: partialPath)
    }

    /// Says how a resume went, once the answer is known: a server that ignored the range sent the whole file.
    private func logResume(_ id: Int64, from offset: Int64, _ outcome: TransferOutcome) {
        let response: TransferResponse?
        switch outcome {
        case .completed(let answer, _), .rangeNotSatisfiable(let answer), .httpError(let answer): response = answer
        case .failed(_, let answer, _): response = answer
        }
        switch response?.status {
        case 206?: logger.info("download \(id) resumes at byte \(offset)")
        case 200?: logger.info("download \(id): the server ignored the range request, so it started over")
        default: break
        }
    }

    /// Runs the engine's transfer until it ends, or a pause or cancel stops it (``RunningTransfer/stop()``).
    private func runEngine(_ request: TransferRequest, _ transfer: RunningTransfer) async -> TransferOutcome {
        // Detached, as the engine needs nothing of the queue's executor; awaited right here with cancellation passed
        // on, as a child task would be. One task per transfer: a small file's whole download is a few milliseconds.
        let task = Task.detached { [engine] in
            await engine.transfer(request) { progress in
                transfer.progress.withLock { $0 = (progress.bytesInFile, progress.totalLength) }
                if progress.etag != nil || progress.lastModified != nil {
                    transfer.validators.withLock { $0 = (progress.etag, progress.lastModified) }
                }
            }
        }
        transfer.started(task, fd: request.fileDescriptor)
        defer { transfer.ended() }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// While transfers run: every ``DownloadQueueStateMachine/progressInterval`` hands each one's progress to the
    /// machine, which decides on speed, checkpoints and progress events
    /// (``DownloadQueueStateMachine/progressed(_:bytes:total:etag:lastModified:now:checkpointBytes:checkpointInterval:)``).
    /// One timer for all transfers: a small file is done before its first report, and costs none.
    private func reportProgress() async {
        defer { reportingProgress = false }
        let interval = settings.checkpointInterval.components
        let checkpointInterval = interval.seconds * 1000 + interval.attoseconds / 1_000_000_000_000_000
        while !running.isEmpty, (try? await Task.sleep(for: DownloadQueueStateMachine.progressInterval)) != nil {
            for (id, transfer) in running where checkpoints[id] == nil {
                // Only a transfer that is running: its file is open, and it is still the download's attempt.
                guard running[id] === transfer, let fd = transfer.fileDescriptor else { continue }
                let (bytes, total) = transfer.progress.withLock { $0 }
                let (etag, lastModified) = transfer.validators.withLock { $0 }
                let step = machine.progressed(
                    id,
                    bytes: bytes,
                    total: total,
                    etag: etag,
                    lastModified: lastModified,
                    now: now(),
                    checkpointBytes: settings.checkpointBytes,
                    checkpointInterval: checkpointInterval
                )
                switch step {
                case .checkpoint(let bytes):
                    // Off the loop, so that a slow sync delays no other transfer's report.
                    checkpoints[id] = Task { await self.checkpoint(id, fd: fd, bytes: bytes) }
                case .perform(let actions):
                    await perform(actions)
                }
            }
        }
    }

    /// Syncs a running transfer's partial file up to `bytes`, then records the checkpoint.
    private func checkpoint(_ id: Int64, fd: Int32, bytes: Int64) async {
        let synced = await FileSync.data(fd) == 0
        await perform(machine.progressSynced(id, bytes: bytes, synced: synced, now: now()))
        checkpoints[id] = nil
    }

    private func finish(_ id: Int64, _ outcome: TransferOutcome, fd: Int32, partialPath: String) async {
        switch machine.finished(id, outcome, fileSize: Self.fileSize(fd)) {
        case .complete(let bytes):
            // Only a body's own response types it: a 416 that completes a resume describes its error page.
            var contentType: String?
            if case .completed(let response, _) = outcome, (200..<300).contains(response.status) {
                contentType = response.contentType
            }
            await complete(id, fd: fd, bytes: bytes, partialPath: partialPath, contentType: contentType)
        case .startOver(let failure):
            await fail(id, Self.truncate(fd, to: 0, path: partialPath, root: defaultDirectory) ?? failure)
        case .keepThenFail(let failure, let bytes):
            if await FileSync.data(fd) == 0 { machine.kept(id, bytes: bytes) }
            await fail(id, failure)
        case .fail(let failure):
            await fail(id, failure)
        }
    }

    private func fail(_ id: Int64, _ failure: DownloadFailure) async {
        await perform(machine.failed(id, failure, policy: settings.retry, now: now(), random: .random(in: 0...1)))
    }

    private func complete(_ id: Int64, fd: Int32, bytes: Int64, partialPath: String, contentType: String?) async {
        let rejection = await checkMedia(id, fd: fd, contentType: contentType)
        var marked = false
        if rejection == nil, let record = machine.records[id] {
            // Before the sync, which makes the mark durable with the bytes.
            marked = CompletionMark.write(CompletionMark.value(of: record), to: fd)
        }
        let syncError = rejection == nil ? await FileSync.file(fd) : 0
        // A pause or cancel may have come during the check or the sync.
        guard machine.stillActive(id) else { return await perform(machine.stopped(id)) }
        if let rejection {
            // An error page is no start to resume from: the retry the user asks for begins afresh.
            let removal = DownloadDirectory.remove(partialPath, root: defaultDirectory)
            guard removal == 0 || removal == ENOENT else {
                return await fail(id, .file(.remove, errno: removal, path: partialPath))
            }
            machine.partialRemoved(id)
            return await fail(id, rejection)
        }
        guard syncError == 0 else { return await fail(id, .file(.sync, errno: syncError, path: partialPath)) }
        let file = DownloadQueueStateMachine.SyncedFile(id: id, bytes: bytes, partialPath: partialPath, marked: marked)
        switch await commitCompletion(file) {
        case .committed(let completed, let error):
            announcedTypes[id] = nil
            if let error { logger.error("cannot save download \(id): \(error)") }
            await perform(machine.committed(completed, runsHook: settings.onComplete != nil))
        case .stopped:
            await perform(machine.stopped(id))
        case .failed(let failure):
            await fail(id, failure)
        }
    }

    /// The media check of a complete body, before it gets its final name: the failure when media was announced and
    /// text arrived (``MediaCheck``), else `nil`. Nothing is read when nothing media-like was announced.
    private func checkMedia(_ id: Int64, fd: Int32, contentType: String?) async -> DownloadFailure? {
        guard !mediaCheckUnavailable, let record = machine.records[id] else { return nil }
        var enclosureType: String?
        if let announced = announcedTypes[id] {
            enclosureType = announced
        } else {
            do {
                enclosureType = try await store.enclosureType(ofDownload: id)
            } catch {
                logger.warning("download \(id): cannot read its episode's enclosure type: \(error)")
            }
        }
        let announced = MediaCheck.Announcement(
            enclosureType: enclosureType,
            contentType: contentType,
            url: record.finalURL ?? record.url,
            fileName: record.fileName
        )
        guard announced.isMedia else { return nil }
        let detected: String
        switch await MediaSniffer.mimeType(ofFile: fd) {
        case .success(let type):
            detected = type
        case .failure(let error) where error.code == .load || error.code == .open:
            // Never fail downloads for want of libmagic: say so once (checks already under way find out too) and
            // stop checking.
            if !mediaCheckUnavailable {
                mediaCheckUnavailable = true
                logger.warning("\(error.message); completed downloads are not checked for error pages")
            }
            return nil
        case .failure(let error):
            logger.notice("download \(id): not checked for an error page: \(error.message)")
            return nil
        }
        switch MediaCheck.verdict(announced, detected: detected) {
        case .accept:
            return nil
        case .acceptWithNote(let note):
            logger.notice("download \(id): \(note); keeping it")
            return nil
        case .reject(let failure):
            return failure
        }
    }

    /// How a synced file's completion ended in the group commit.
    private enum CompletionOutcome {
        /// Under its final name and committed, with the store's error if the commit failed.
        case committed(DownloadRecord, (any Error)?)
        /// Paused or cancelled while it waited: not renamed.
        case stopped
        case failed(DownloadFailure)
    }

    /// What a completion waiting in the group commit is woken with.
    private enum CommitTurn {
        /// Done by another completion's batch.
        case done(CompletionOutcome)
        /// Commit the batch now: the previous leader is done.
        case lead
    }

    /// Group commit of completions, as ``DownloadQueueStateMachine/commitRequested(_:)`` orders it. The leader
    /// names, renames and commits its batch itself and hands the lead on, so no task outside the queue's task group
    /// does the work.
    ///
    /// A batch costs one save of the chosen names (before the renames, so that a crash after a rename finds the
    /// file under its row's name), one sync per directory (the renames reach the disk before the rows that point at
    /// the new names) and one commit: with many small files finishing at once, a save and a rename per file were
    /// the completion's largest costs after the data itself.
    private func commitCompletion(_ file: DownloadQueueStateMachine.SyncedFile) async -> CompletionOutcome {
        if machine.commitRequested(file) == .wait {
            let turn = await withCheckedContinuation { commitWaiters[file.id] = $0 }
            if case .done(let outcome) = turn { return outcome }
        }
        let batch = machine.commitBatch(leadBy: file)
        var (outcomes, placed) = await place(batch)
        await FileSync.directories(Set(placed.map(\.directory)))
        let (rows, hooks) = machine.rowsToCommit(placed, runsHook: settings.onComplete != nil)
        var failure: (any Error)?
        do {
            try await store.save(rows, pendingHooks: hooks)
        } catch {
            failure = error
        }
        for record in placed { outcomes[record.id] = .committed(record, failure) }
        for member in batch.dropFirst() {
            if let outcome = outcomes[member.id] {
                commitWaiters.removeValue(forKey: member.id)?.resume(returning: .done(outcome))
            }
        }
        if let next = machine.batchCommitted() { commitWaiters.removeValue(forKey: next)?.resume(returning: .lead) }
        guard let outcome = outcomes[file.id] else { preconditionFailure("download \(file.id) left its own batch") }
        return outcome
    }

    /// Names a batch's files, saves the names, and renames each file into place.
    ///
    /// - Returns: How the members that did not reach their final name ended, and the completed records of those
    ///   that did, in the batch's order.
    private func place(
        _ batch: [DownloadQueueStateMachine.SyncedFile]
    ) async -> (outcomes: [Int64: CompletionOutcome], placed: [DownloadRecord]) {
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        let (named, stopped, actions) = machine.nameBatch(batch, exists: exists)
        var outcomes: [Int64: CompletionOutcome] = [:]
        for id in stopped { outcomes[id] = .stopped }
        await perform(actions)
        var placed: [DownloadRecord] = []
        for file in named {
            guard let path = machine.records[file.id]?.path else { preconditionFailure("download \(file.id) vanished") }
            var step = DownloadQueueStateMachine.RenameStep.rename(to: path, [])
            while case .rename(let path, let actions) = step {
                await perform(actions)
                // Atomic, and never over a file that appeared after the check: the final name shows either nothing
                // or the complete file, and someone else's file stays.
                let code = DownloadDirectory.renameNoReplace(file.partialPath, to: path, root: defaultDirectory)
                let result: DownloadQueueStateMachine.RenameResult =
                    code == 0 ? .renamed : code == EEXIST ? .nameTaken : .failed(errno: code)
                step = machine.renamed(
                    file.id,
                    result,
                    bytes: file.bytes,
                    partialPath: file.partialPath,
                    now: now(),
                    exists: exists
                )
            }
            switch step {
            case .commit(let record): placed.append(record)
            case .fail(let failure): outcomes[file.id] = .failed(failure)
            case .rename: preconditionFailure("download \(file.id): the rename loop ended on a rename")
            }
        }
        return (outcomes, placed)
    }

    // MARK: - Commands

    /// Checks requests a client made, every one: their directories, credentials, headers and URLs. Nothing is queued
    /// yet; ``enqueue(_:)`` checks directories and URLs again.
    package func check(_ requests: [DownloadRequest]) throws(DownloadQueueError) {
        for request in requests where !request.directory.hasPrefix("/") {
            throw .invalid("'directory' must be an absolute path, got '\(request.directory)'", parameter: "directory")
        }
        // A path is a C string to the kernel: "/a\0b" would silently mean "/a", and every file name there would
        // look taken to the collision check, which then never ends.
        for request in requests {
            for (name, value) in [
                ("directory", request.directory), ("user", request.user), ("password", request.password),
            ] {
                if value?.utf8.contains(0) == true {
                    throw .invalid("'\(name)' must not contain NUL characters", parameter: name)
                }
            }
        }
        for header in requests.flatMap(\.headers) {
            if let problem = RequestHeader.problem(header) {
                throw .invalid("header '\(header)' is not of the form 'Name: value': \(problem)", parameter: "headers")
            }
        }
        for request in requests { try checkURL(request.url) }
    }

    /// Queues files that may go to different directories (a podcast's episodes to its folders) in one transaction;
    /// committed before it returns.
    ///
    /// - Returns: One entry per request, in their order.
    package func enqueue(_ requests: [DownloadRequest]) async throws(DownloadQueueError) -> [EnqueuedDownload] {
        // Every URL is checked before a directory is created: a refused request leaves nothing behind.
        let urls = try requests.map { request throws(DownloadQueueError) in try validatedURL(request.url) }
        for directory in Set(requests.map(\.directory)) {
            guard directory.hasPrefix("/"), !directory.utf8.contains(0) else {
                throw .invalid(
                    "'directory' must be an absolute path without NUL characters, got '\(directory)'",
                    parameter: "directory"
                )
            }
            let (fd, code) = DownloadDirectory.open(directory, root: defaultDirectory, create: true)
            guard fd >= 0 else {
                throw .invalid(
                    "cannot create the directory '\(directory)': \(String(cString: strerror(code)))",
                    parameter: "directory"
                )
            }
            close(fd)
        }
        // A URL already downloaded, its file still there, is answered with that download; one queued elsewhere is
        // refused. Episodes are placed by their podcast, which decides on their downloads itself.
        var done: [Int: DownloadRecord] = [:]
        for index in requests.indices where requests[index].episode == nil {
            let request = requests[index]
            let wanted = DownloadQueueStateMachine.Repeat(
                url: urls[index].string,
                directory: request.directoryChosen ? request.directory : nil,
                name: request.name.map { FileNaming.sanitize($0) }
            )
            done[index] = try machine.existing(for: wanted) { FileManager.default.fileExists(atPath: $0.path) }
        }
        let fresh = requests.indices.filter { done[$0] == nil }
        // A large batch lists each directory once instead of asking for two paths per download.
        let listings: [String: Set<String>]? =
            fresh.count < 32
            ? nil
            : Dictionary(
                uniqueKeysWithValues: Set(fresh.map { requests[$0].directory }).map { directory in
                    (directory, Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []))
                }
            )
        let wanted = fresh.map { index in
            (
                directory: requests[index].directory,
                name: requests[index].name.map { FileNaming.sanitize($0) } ?? FileNaming.name(for: urls[index].url)
            )
        }
        let paths = machine.reserveNames(wanted) { directory, name in
            listings?[directory].map { $0.contains(name) }
                ?? FileManager.default.fileExists(atPath: directory + "/" + name)
        }
        let added = now()
        let newRecords = fresh.indices.map { slot in
            let index = fresh[slot]
            let (request, url, directory) = (requests[index], urls[index], wanted[slot].directory)
            var record = DownloadRecord(
                url: url.string,
                directory: directory,
                fileName: DownloadDirectory.relative(paths[slot], below: directory)
                    ?? DownloadDirectory.baseName(paths[slot]),
                priority: request.priority,
                addedAt: added,
                headers: request.headers,
                // Credentials written into the URL are moved out of it, so that no listing shows them.
                authUser: request.user ?? url.user,
                authPassword: request.user != nil ? request.password : url.password
            )
            record.bypassesGate = request.now
            // Stored as the closed gate makes it (paused with its reason), so no second commit is needed.
            return machine.admitted(record)
        }
        let stored: [EnqueueOutcome]
        do {
            stored = try await store.enqueue(newRecords, linking: fresh.map { requests[$0].episode })
        } catch {
            await perform(machine.enqueued([], reserved: paths))
            throw .notSaved(error)
        }
        // Kept before the machine hears of the downloads, since it may start them at once. What cancels and clears
        // left is swept before these are added (the machine has none of them yet).
        announcedTypes.sweep(keeping: machine.records.contains)
        for (slot, index) in fresh.enumerated() {
            let id = stored[slot].record.id
            if stored[slot].existing {
                // Linked to one more episode, or none: what its episodes announced is the store's to say.
                if requests[index].episode != nil { announcedTypes[id] = nil }
            } else {
                // An empty type is none, as the store reads it.
                let type = requests[index].enclosureType.flatMap { $0.isEmpty ? nil : $0 }
                announcedTypes[id] = .some(requests[index].episode == nil ? nil : type)
            }
        }
        await perform(machine.enqueued(stored.filter { !$0.existing }.map(\.record), reserved: paths))
        var outcomes = done.mapValues { EnqueueOutcome(record: $0, existing: true) }
        for (slot, index) in fresh.enumerated() { outcomes[index] = stored[slot] }
        let answers = requests.indices.compactMap { outcomes[$0] }
        // `--now` naming a download that already exists lets that one through too.
        let expedited = zip(requests, answers).filter { $0.now && $1.existing }.map { $1.record.id }
        if !expedited.isEmpty { try await performCommand(machine.expedite(expedited)) }
        return answers.map {
            // The table's state: the stored row of an existing download may be behind (active is not stored).
            let current = machine.records[$0.record.id] ?? $0.record
            return EnqueuedDownload(
                id: $0.record.id,
                url: $0.record.url,
                existing: $0.existing,
                file: $0.record.path,
                state: current.state,
                pauseReason: current.state == .paused ? current.pauseReason : nil
            )
        }
    }

    private func validatedURL(_ text: String) throws(DownloadQueueError) -> HTTPURL {
        let url: HTTPURL
        // Only a refusal shows the URL: redacting 10,000 good ones was 5 % of such an enqueue.
        var shown: String { HTTPURL.shown(text) }
        do throws(HTTPURL.Problem) {
            url = try HTTPURL(text)
        } catch {
            switch error {
            case .unparsable:
                throw .invalid("'\(shown)' is not a valid URL", parameter: "urls")
            case .scheme(let scheme):
                throw .invalid(
                    "'\(shown)' uses the scheme '\(scheme)'; only http and https URLs can be downloaded",
                    parameter: "urls"
                )
            case .noHost:
                throw .invalid("'\(shown)' names no host", parameter: "urls")
            }
        }
        try checkScheme(url.string)
        return url
    }

    /// ``validatedURL(_:)`` without its result: a URL of the plain shape nearly every one has (``HTTPURL/isPlain(_:)``)
    /// needs no full parse, which an enqueue would make twice per URL.
    private func checkURL(_ text: String) throws(DownloadQueueError) {
        guard HTTPURL.isPlain(text) else {
            _ = try validatedURL(text)
            return
        }
        try checkScheme(text)
    }

    /// `require_https`, for a valid URL.
    private func checkScheme(_ url: String) throws(DownloadQueueError) {
        if settings.transfer.requireHTTPS && !HTTPURL.isHTTPS(url) {
            throw .invalid(
                "'\(HTTPURL.shown(url))' is plain http, and require_https is on; use an https URL",
                parameter: "urls"
            )
        }
    }

    /// The listed downloads in ``DownloadQueueStateMachine/orderedRecords()``'s order.
    ///
    /// - Parameter only: When given, only these downloads.
    package func list(state: DownloadRecord.State?, only: Set<Int64>? = nil) -> [DownloadSnapshot] {
        let busyHosts = machine.busyHosts(settings.scheduler)
        return machine.orderedRecords().compactMap { record in
            guard state == nil || record.state == state, only?.contains(record.id) ?? true else { return nil }
            return snapshot(record, busyHosts: busyHosts)
        }
    }

    package func show(_ id: Int64) async throws(DownloadQueueError) -> DownloadSnapshot {
        guard machine.isVisible(id), let record = machine.records[id] else {
            throw await explained(.unknownDownload(id))
        }
        return snapshot(record)
    }

    /// `error`, when it is about a number that is no download but is an episode, saying so: both are small
    /// integers, and `pause 29` meant for episode 29 must not look like a typo.
    private func explained(_ error: DownloadQueueError) async -> DownloadQueueError {
        guard case .unknownDownload(let id) = error.code,
            let found = try? await store.episodeWithPodcast(id)
        else { return error }
        let download: EpisodeMention.Download =
            switch found.episode.downloadID {
            case let download? where machine.isVisible(download): .listed(download)
            case .some: .unlisted
            case nil: .none
            }
        return .unknownDownload(id, episode: EpisodeMention(found.episode, podcast: found.podcast, download: download))
    }

    /// `--now` for downloads that exist already (an episode's): they pass the download gate from now on.
    package func expedite(_ ids: [Int64]) async throws(DownloadQueueError) {
        try await performCommand(machine.expedite(ids))
    }

    // MARK: - The gate

    /// The window service's news: whether downloads are outside every window, and when that changes next (Unix
    /// milliseconds).
    package func setWindow(_ windows: DownloadWindows, outside: Bool, nextChange: Int64?) async {
        self.windows = windows
        gate.outsideWindow = outside
        gate.nextWindowChange = nextChange
        await applyGate()
    }

    /// The metered monitor's news (``DownloadGate/meteredAnswer(_:)``); `status` shows the answer, none when
    /// nothing can be metered.
    package func setMetered(_ news: MeteredNews) async {
        switch news {
        case .answered(let answer): metered = answer
        case .undetectable: metered = nil
        case .unanswered: break
        }
        gate.meteredAnswer(news)
        await applyGate()
    }

    /// With `metered = pause`, called before the first ``setWindow(_:outside:nextChange:)``: downloads a metered
    /// network paused stay paused until NetworkManager's first answer.
    package func awaitMeteredAnswer() {
        gate.awaitingMeteredAnswer = true
    }

    private func applyGate() async {
        guard gate.isSettled else { return }
        let before = machine.gate
        await perform(machine.gateChanged(closedBecause: gate.closedBecause))
        if machine.gate != before { changed.yield() }
    }

    /// The gate as `status` shows it.
    private var gateState: QueueCounts.Gate {
        QueueCounts.Gate(
            closedBecause: gate.closedBecause,
            windows: windows,
            nextWindowChange: gate.nextWindowChange,
            metered: metered
        )
    }

    /// - Returns: The downloads it paused.
    package func pause(_ selection: DownloadQueueStateMachine.Selection) async throws(DownloadQueueError) -> [Int64] {
        try await command(machine.pause(selection))
    }

    /// What a resume did: the downloads it resumed, and those of them the closed gate keeps paused, with why.
    package struct Resumed: Sendable, Hashable {
        package var changed: [Int64]
        package var held: [Int64]
        package var gate: GateReason?
    }

    /// - Parameter now: Pass the download gate, for these downloads only (`resume --now`).
    package func resume(
        _ selection: DownloadQueueStateMachine.Selection,
        now: Bool = false
    ) async throws(DownloadQueueError) -> Resumed {
        let changed = try await command(machine.resume(selection, now: now))
        // A resume the closed gate turned into a wait says so: "Resumed" alone would be a lie.
        let held = changed.filter { machine.records[$0].map(DownloadQueueStateMachine.pausedByGate) == true }
        return Resumed(changed: changed, held: held, gate: held.isEmpty ? nil : machine.gate)
    }

    /// - Returns: The downloads it queued again.
    package func retry(_ selection: DownloadQueueStateMachine.Selection) async throws(DownloadQueueError) -> [Int64] {
        try await command(machine.retry(selection))
    }

    /// - Returns: The downloads it cancelled.
    package func cancel(_ ids: [Int64], deletePartial: Bool) async throws(DownloadQueueError) -> [Int64] {
        try await command(machine.cancel(ids, deletePartial: deletePartial))
    }

    /// - Returns: The moved download's new priority, when the move changed it.
    package func move(
        _ id: Int64,
        to placement: DownloadQueueStateMachine.Placement
    ) async throws(DownloadQueueError) -> Int? {
        let before = machine.records[id]?.priority
        let actions: [DownloadQueueStateMachine.Action]
        do {
            actions = try machine.move(id, to: placement)
        } catch {
            throw await explained(error)
        }
        try await performCommand(actions)
        let after = machine.records[id]?.priority
        return after != before ? after : nil
    }

    /// Takes finished downloads in `states` off the list.
    ///
    /// - Returns: The downloads it cleared.
    package func clear(
        _ states: Set<DownloadRecord.State>,
        deletePartial: Bool
    ) async throws(DownloadQueueError) -> [Int64] {
        let clearing = machine.clear(states)
        let unlisted: Set<Int64>
        do {
            unlisted = try await store.clearDownloads(clearing.unlist)
            try await store.deleteDownloads(clearing.delete)
        } catch {
            machine.clearNotSaved(clearing.records)
            throw .notSaved(error)
        }
        let cleared = clearing.records
        await perform(machine.cleared(cleared, unlisted: unlisted, deletePartial: deletePartial))
        return cleared.map(\.id)
    }

    /// The downloads among `ids` that still exist, as clients see them.
    package func infos(_ ids: [Int64]) -> [Int64: DownloadSnapshot] {
        var found: [Int64: DownloadSnapshot] = [:]
        for id in ids {
            if let record = machine.records[id], record.state != .cancelled { found[id] = snapshot(record) }
        }
        return found
    }

    /// How files are deleted (`use_trash`), for retention, which deletes its files inside the store's transaction.
    package var fileDisposal: FileDisposal { settings.disposal }

    /// Completed downloads by id, for retention.
    package func completedDownloads() -> [Int64: DownloadSnapshot] {
        var found: [Int64: DownloadSnapshot] = [:]
        for record in machine.records.values where record.state == .completed { found[record.id] = snapshot(record) }
        return found
    }

    /// What ``discard(_:deleteFiles:reason:)`` did with completed downloads' files.
    package struct Discarded: Sendable {
        /// The files deleted (their downloads forgotten).
        package var deleted: [FileDisposal.Disposed] = []
        /// Downloads whose file ``FileDisposal`` refused to delete (changed, replaced, outside the download
        /// directory, or a Trash that cannot take it), with why: they stay, with their episodes' links, so the file is
        /// still tracked.
        package var refused: [Int64: String] = [:]
    }

    /// Removes downloads for good: unfinished ones are cancelled (partial files deleted), completed ones are
    /// forgotten and, with `deleteFiles`, their files deleted as ``QueueSettings/disposal`` says. Used when an
    /// episode leaves the kept set or its podcast is unsubscribed.
    ///
    /// Files go first; only then are the rows deleted, together with every episode link to them (marked deleted for
    /// `reason`), in one transaction. A refused file keeps its download; a crash after the files went leaves rows
    /// whose files are gone, which the next discard forgets.
    ///
    /// - Parameter episodes: The episode of each download, by download id, recorded with a file that goes to the Trash.
    package func discard(
        _ ids: [Int64],
        deleteFiles: Bool,
        reason: String,
        episodes: [Int64: Int64] = [:]
    ) async throws(DownloadQueueError) -> Discarded {
        let discarding = try machine.discard(ids, deleteFiles: deleteFiles)
        try await performCommand(discarding.cancel)
        var outcome = Discarded()
        var forgotten = discarding.forget
        for record in discarding.dispose {
            switch settings.disposal.dispose(
                record.path,
                size: record.bytesDone,
                inside: defaultDirectory,
                now: now(),
                episode: episodes[record.id]
            ) {
            case .success(let disposed):
                outcome.deleted.append(disposed)
                forgotten.append(record)
            case .failure(let refusal) where refusal.gone:
                logger.notice("download \(record.id): \(refusal); forgetting it")
                forgotten.append(record)
            case .failure(let refusal):
                logger.warning("download \(record.id): \(refusal)")
                outcome.refused[record.id] = refusal.reason
            }
        }
        guard !forgotten.isEmpty else { return outcome }
        do {
            try await store.forgetDownloads(forgotten.map(\.id), releasingEpisodesAt: now(), reason: reason)
        } catch {
            throw .notSaved(error)
        }
        await perform(machine.forgotten(forgotten))
        return outcome
    }

    /// Records `path` (`size` bytes, put back from the Trash) as the completed download of `url` for `episode`, in one
    /// transaction with the episode's link, so that `episodes`, `show` and retention see it as before it went.
    ///
    /// - Returns: The download's id (an unfinished download of the same URL, when there is one).
    package func adoptRestored(
        url: String,
        path: String,
        size: Int64,
        episode: Int64
    ) async throws(DownloadQueueError) -> Int64 {
        let at = now()
        let directory = DownloadDirectory.parent(of: path)
        var record = DownloadRecord(
            url: url,
            directory: directory,
            fileName: DownloadDirectory.baseName(path),
            addedAt: at
        )
        record.state = .completed
        record.bytesDone = size
        record.bytesTotal = size
        record.completedAt = at
        let stored: [EnqueueOutcome]
        do {
            stored = try await store.enqueue([record], linking: [episode])
        } catch {
            throw .notSaved(error)
        }
        await perform(machine.enqueued(stored.filter { !$0.existing }.map(\.record), reserved: []))
        announcedTypes[stored[0].record.id] = nil
        return stored[0].record.id
    }

    /// A change of the global speed limit.
    package enum LimitChange: Sendable, Hashable {
        /// Bytes per second; `nil` or 0 means unlimited.
        case set(Int64?)
        /// Forget the limit set at runtime: the configured `speed_limit` applies again.
        case reset
    }

    /// Sets (or with no `change` only reports) the global speed limit. Saved before it applies: a limit that a
    /// restart would forget is not set.
    ///
    /// - Returns: The limit in force, bytes per second; `nil` = unlimited.
    package func limit(_ change: LimitChange?) async throws(DownloadQueueError) -> Int64? {
        if let change {
            let wanted: Int64??
            switch change {
            case .reset: wanted = nil
            case .set(let rate): wanted = .some(rate.flatMap { $0 > 0 ? $0 : nil })
            }
            do {
                try await store.setSpeedLimitOverride(wanted)
            } catch {
                throw .notSaved(error)
            }
            speedLimitOverride = wanted
            engine.setSpeedLimit(effectiveSpeedLimit)
        }
        return effectiveSpeedLimit
    }

    private var effectiveSpeedLimit: Int64? {
        if let override = speedLimitOverride { return override }
        return settings.speedLimit
    }

    /// Applies reloaded settings to downloads that start from now on.
    package func update(_ newSettings: QueueSettings) {
        settings = newSettings
        engine.setSpeedLimit(effectiveSpeedLimit)
        wakeup.yield()
    }

    package func counts() -> QueueCounts {
        var counts = QueueCounts(rateLimit: effectiveSpeedLimit, gate: gateState)
        for record in machine.records.values where record.listed {
            switch record.state {
            case .active: counts.active += 1
            case .queued: counts.queued += 1
            case .paused: counts.paused += 1
            case .failed: counts.failed += 1
            case .completed: counts.completed += 1
            case .cancelled: break
            }
        }
        counts.rate = machine.totalRate
        return counts
    }

    // MARK: - Helpers

    /// Performs a selection command's actions and answers with the downloads it changed: those its first action,
    /// the commit, saves.
    /// - Parameter made: The state machine's answer to the command; an id it does not know is explained.
    private func command(
        _ made: @autoclosure () throws(DownloadQueueError) -> [DownloadQueueStateMachine.Action]
    ) async throws(DownloadQueueError) -> [Int64] {
        let actions: [DownloadQueueStateMachine.Action]
        do {
            actions = try made()
        } catch {
            throw await explained(error)
        }
        guard case .persist(let changed, _)? = actions.first else { preconditionFailure("a command commits first") }
        try await performCommand(actions)
        return changed.map(\.id)
    }

    private func publish(_ event: DownloadQueueStateMachine.Announcement, _ record: DownloadRecord) {
        changed.yield()
        // Building the event stats the partial file: not worth it for nobody.
        guard events.isWanted(event) else { return }
        events.downloadChanged(event, snapshot(record))
    }

    /// The record with what only the running queue knows: the transfer's bytes, its pace, when the gate lets it go.
    /// - Parameter busyHosts: ``DownloadQueueStateMachine/busyHosts(_:)``, when the caller has it already.
    private func snapshot(_ record: DownloadRecord, busyHosts: Set<String>? = nil) -> DownloadSnapshot {
        let transfer = running[record.id]
        let live = transfer?.progress.withLock { $0 }
        let bytes =
            live?.bytes
            ?? (record.state == .completed ? record.bytesTotal ?? record.bytesDone : Self.partialSize(record))
        let total = live?.total ?? record.bytesTotal
        // Whole bytes per second and whole seconds: the fractions are noise, and JSON readers get plain numbers.
        let speed = machine.pace(of: record.id)?.rate.rounded()
        var eta: Double?
        if let speed, speed >= Self.slowestRate, let total {
            eta = (Double(max(0, total.saturatingSubtract(bytes))) / speed).rounded(.up)
        }
        return DownloadSnapshot(
            record: record,
            bytesDone: bytes,
            bytesTotal: total,
            speed: record.state == .active ? speed : nil,
            etaSeconds: record.state == .active ? eta : nil,
            stalledSince: machine.stalledSince(record.id, now: now()),
            resumesAt: record.state == .paused && record.pauseReason == GateReason.outsideWindow.rawValue
                ? gate.windowOpensAt : nil,
            waitingForHost: record.state == .queued
                ? machine.waitingForHost(
                    record.id,
                    busyHosts: busyHosts ?? machine.busyHosts(settings.scheduler),
                    now: now()
                ) : nil
        )
    }

    /// Cuts the partial file back to `offset` before a resume or restart.
    ///
    /// A cut that failed must not leave bytes that a later attempt would resume from as if they were good: the file
    /// is removed, so the retry starts from nothing; when even that fails the download fails for good.
    private static func truncate(_ fd: Int32, to offset: Int64, path: String, root: String) -> DownloadFailure? {
        guard ftruncate(fd, off_t(offset)) != 0 else { return nil }
        let code = errno
        let removal = DownloadDirectory.remove(path, root: root)
        guard removal == 0 else { return .file(.remove, errno: removal, path: path) }
        return .file(.truncate, errno: code, path: path)
    }

    /// The system's wall clock in Unix milliseconds.

    /// Below this (bytes per second) a transfer's speed is 0 and it has no ETA.
    private static let slowestRate = DownloadQueueStateMachine.slowestRate

    private static func fileSize(_ fd: Int32) -> Int64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
    }

    private static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    /// Removes the partial file of a download being forgotten when asked to, or when it is empty (a 404 leaves
    /// one): with the row gone nothing could resume it.
    private static func discardPartial(of record: DownloadRecord, root: String) {
        if record.deletePartial || fileSize(record.partialPath) == 0 {
            DownloadDirectory.remove(record.partialPath, root: root)
        }
    }

    /// Bytes an unprivileged writer may still use on the file system of `fd` (`statvfs`); `nil` when unknown.
    private static func freeSpace(_ fd: Int32) -> Int64? {
        var info = statvfs()
        guard fstatvfs(fd, &info) == 0 else { return nil }
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return overflow ? Int64.max : Int64(clamping: bytes)
    }

    private static func partialSize(_ record: DownloadRecord) -> Int64 {
        fileSize(record.partialPath) ?? record.bytesDone
    }
}
