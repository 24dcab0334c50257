import CPosix
import FoundationEssentials
import SinglecastHTTP
import SinglecastProtocol
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

    package init(
        url: String,
        directory: String,
        name: String? = nil,
        headers: [String] = [],
        user: String? = nil,
        password: String? = nil,
        priority: Int = 0,
        episode: Int64? = nil
    ) {
        self.episode = episode
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

    package init() {}
}

/// The persistent download queue: every change is committed to the store before it is acknowledged or
/// announced, and the partial file on disk is the truth for how far a download got.
package actor DownloadQueue: Service {
    private let store: Store
    private let engine: HTTPEngine
    private let events: EventBus
    private let logger: Logger
    private let defaultDirectory: String
    /// The previous run died on another boot: a partial file's tail past the last checkpoint may hold zeros
    /// the power cut left, so it is cut back to the checkpoint.
    private let distrustUncheckpointedBytes: Bool
    private var settings: QueueSettings
    private let hooks: HookRunner
    private var speedLimitOverride: Int64??

    private var records = DownloadTable()
    private var transfers: [Int64: RunningTransfer] = [:]
    /// Downloads whose transfer gave up its slot and is still syncing, renaming or recording its outcome. None of
    /// them may start again until that ends: a pause and a resume meanwhile would run a second transfer of the
    /// same download, and the two would rename one partial file.
    private var finishing: Set<Int64> = []
    /// Paths chosen by enqueues that are waiting for their commit: the table learns of those downloads only after
    /// it, and another enqueue runs on the actor meanwhile.
    private var reservedPaths: Set<String> = []
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// Signals every published event, so the daemon's status line is rebuilt only when something changed.
    package nonisolated let changes: AsyncStream<Void>
    private let changed: AsyncStream<Void>.Continuation
    private var wake = WakeSchedule()
    /// Completions waiting for the next group commit, and whether one is running.
    private var completionBatch: [(record: DownloadRecord, done: CheckedContinuation<(any Error)?, Never>)] = []
    private var flushingCompletions = false

    /// The live side of an active download, shared with the engine's progress callback.
    final class RunningTransfer: Sendable {
        let stop = Completion()
        let host: String
        let progress = Mutex<(bytes: Int64, total: Int64?)>((0, nil))
        /// The final response's validators, as soon as its headers arrive.
        let validators = Mutex<(etag: String?, lastModified: String?)>((nil, nil))
        let rate = Mutex<Double>(0)
        /// Unix milliseconds of the last progress, for `stalled_since`.
        let lastProgressAt = Mutex<Int64>(DownloadQueue.now())

        init(host: String) { self.host = host }
    }

    package init(
        store: Store,
        engine: HTTPEngine,
        events: EventBus,
        logger: Logger,
        settings: QueueSettings,
        defaultDirectory: String,
        distrustUncheckpointedBytes: Bool
    ) {
        self.store = store
        self.engine = engine
        self.events = events
        self.logger = logger
        self.settings = settings
        self.defaultDirectory = defaultDirectory
        self.distrustUncheckpointedBytes = distrustUncheckpointedBytes
        self.hooks = HookRunner(store: store, logger: logger)
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: - Service

    package func run() async throws {
        engine.setSpeedLimit(effectiveSpeedLimit)
        wakeup.yield()
        await withDiscardingTaskGroup { group in
            for await _ in wakeups {
                let (start, wakeAt) = selectToStart()
                for id in start {
                    guard let transfer = beginTransfer(id) else { continue }
                    group.addTask { await self.runTransfer(id, transfer) }
                }
                if let wakeAt, wake.request(wakeAt) { group.addTask { await self.sleepUntil(wakeAt) } }
            }
            group.cancelAll()
        }
    }

    /// Ends the run loop; active transfers are cancelled and keep their partial files.
    package nonisolated func shutdown() {
        wakeup.finish()
    }

    private func sleepUntil(_ at: Int64) async {
        let delay = max(0, at - Self.now())
        try? await Task.sleep(for: .milliseconds(delay))
        wake.woke(at)
        wakeup.yield()
    }

    /// Start-up, before READY: loads the queue, finishes what a crash interrupted, removes partial files of
    /// cancelled rows. Until it returns, the queue would answer as if it were empty.
    package func recover() async throws {
        var changed: [DownloadRecord] = []
        var removed: [Int64] = []
        for var record in try await store.downloads() {
            switch record.state {
            case .cancelled:
                Self.discardPartial(of: record)
                removed.append(record.id)
                continue
            case .active:
                record.state = .queued
                changed.append(record)
            case .queued, .paused, .failed, .completed:
                break
            }
            if record.state != .completed, !FileManager.default.fileExists(atPath: record.partialPath),
                let total = record.bytesTotal, Self.fileSize(record.path) == total, record.bytesDone == total
            {
                // Renamed into place, then the daemon died before the row said so.
                record.state = .completed
                record.completedAt = record.completedAt ?? Self.now()
                record.partialName = nil
                changed.append(record)
            } else if record.state != .completed, let partialName = record.partialName, partialName.hasSuffix(".part") {
                // The daemon died between choosing a new final name and the rename: the bytes are still in the
                // partial file under its old name, which becomes the download's name again. The next completion
                // chooses afresh; until then `file` + ".part" is where the bytes are, as everywhere else.
                record.fileName = String(partialName.dropLast(".part".count))
                record.partialName = nil
                changed.append(record)
            }
            records[record.id] = record
        }
        try await store.deleteDownloads(removed)
        try await store.save(changed)
        let pendingHooks = try await store.pendingHooks()
        let completed = pendingHooks.compactMap { records[$0] }.filter { $0.state == .completed }
        await hooks.resume(
            pendingHooks,
            completed: Dictionary(uniqueKeysWithValues: completed.map { ($0.id, $0) }),
            program: settings.onComplete
        )
        let pending = records.values.count { $0.state == .queued || $0.state == .active }
        if pending > 0 { logger.notice("resuming \(pending) unfinished download(s)") }
    }

    // MARK: - Scheduling

    /// Runs on every wake-up; the queue order is kept by ``DownloadTable`` rather than sorted each time.
    private func selectToStart() -> (start: [Int64], wakeAt: Int64?) {
        let candidates = records.queued().compactMap { entry in
            finishing.contains(entry.id)
                ? nil : QueueScheduler.Candidate(id: entry.id, host: entry.host, notBefore: entry.notBefore)
        }
        return settings.scheduler.select(
            candidates: candidates,
            activeHosts: transfers.values.map(\.host),
            now: Self.now()
        )
    }

    /// Active first, then queued by priority (high first) and position, then the rest by id.
    private func orderedRecords() -> [DownloadRecord] {
        // Small keys are sorted, not the records: moving whole records around was a tenth of a `downloads` call.
        typealias Key = (rank: Int, priority: Int, position: Int64, id: Int64)
        let keys: [Key] = records.values.compactMap { record in
            guard record.listed else { return nil }
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

    private func beginTransfer(_ id: Int64) -> RunningTransfer? {
        guard var record = records[id], record.state == .queued, transfers[id] == nil, !finishing.contains(id) else {
            return nil
        }
        record.state = .active
        record.nextAttemptAt = nil
        records[id] = record
        let transfer = RunningTransfer(host: records.host(of: id))
        transfers[id] = transfer
        return transfer
    }

    // MARK: - One transfer

    private func runTransfer(_ id: Int64, _ transfer: RunningTransfer) async {
        defer { releaseSlot(id, transfer) }
        guard let partialPath = records[id]?.partialPath else { return }
        let (fd, code) = await FileSync.openPartial(partialPath)
        // A pause or cancel may have come while the file was opened.
        guard var record = records[id], record.state == .active else {
            if fd >= 0 { close(fd) }
            return await concludeStopped(id)
        }
        guard fd >= 0 else {
            await fail(id, .file(.open, errno: code, path: record.partialPath))
            return
        }
        defer { close(fd) }

        var offset = Self.fileSize(fd)
        if distrustUncheckpointedBytes && offset > record.bytesDone {
            offset = record.bytesDone
            if let failure = Self.truncate(fd, to: offset, record) { return await fail(id, failure) }
        }
        let validator = record.etag ?? record.lastModified
        if offset > 0 && validator == nil && record.bytesTotal == nil {
            // Nothing would tell us whether the server's file is still the one these bytes came from.
            offset = 0
            if let failure = Self.truncate(fd, to: 0, record) { return await fail(id, failure) }
        }
        transfer.progress.withLock { $0 = (offset, record.bytesTotal) }
        // Not saved here: a crash makes an active download queued again anyway, and the attempt count goes to
        // the store with the next checkpoint, failure or completion. Waiting for a commit here would leave the
        // transfer slot idle behind other downloads' syncs.
        record.attempts += 1
        record.state = .active
        records[id] = record
        publish(.started, record)

        let request = TransferRequest(
            url: record.url,
            headers: record.headers,
            basicAuthUser: record.authUser,
            basicAuthPassword: record.authPassword,
            resumeOffset: offset,
            validator: validator,
            expectedTotal: record.bytesTotal,
            fileDescriptor: fd,
            options: settings.transfer
        )
        let outcome: TransferOutcome = await withTaskGroup(of: TransferOutcome?.self) { group in
            group.addTask { [engine] in
                await engine.transfer(request) { progress in
                    transfer.progress.withLock { $0 = (progress.bytesInFile, progress.totalLength) }
                    if progress.etag != nil || progress.lastModified != nil {
                        transfer.validators.withLock { $0 = (progress.etag, progress.lastModified) }
                    }
                }
            }
            group.addTask {
                try? await transfer.stop.wait()
                return nil
            }
            group.addTask { await self.report(id, transfer, fd: fd) }
            var result: TransferOutcome?
            while let next = await group.next() {
                if let next {
                    result = next
                    break
                }
                group.cancelAll()  // stopped by pause or cancel: the transfer ends as cancelled
            }
            group.cancelAll()
            return result ?? .failed(TransferError(code: .cancelled, message: "stopped"), response: nil, bytesInFile: 0)
        }
        if offset > 0 { logResume(id, from: offset, outcome) }
        // The network part is over: the next download may start while this one syncs and commits, so that
        // durability costs latency per file, not throughput.
        releaseSlot(id, transfer)
        finishing.insert(id)
        await finish(id, outcome, fd: fd)
        finishing.remove(id)
        // A cancel that came while finishing left the removal to this transfer (finish() concludes a cancel it
        // sees, but one may arrive during its last commit).
        if records[id]?.state == .cancelled { await concludeStopped(id) }
        wakeup.yield()  // a resume meanwhile may start it again now
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

    private func releaseSlot(_ id: Int64, _ transfer: RunningTransfer) {
        guard transfers[id] === transfer else { return }
        transfers[id] = nil
        wakeup.yield()
    }

    /// While a transfer runs: speed, throttled progress events (at most 4 a second) and checkpoints.
    private func report(_ id: Int64, _ transfer: RunningTransfer, fd: Int32) async -> TransferOutcome? {
        var lastBytes = transfer.progress.withLock { $0.bytes }
        var lastCheckpointBytes = lastBytes
        var lastCheckpoint = ContinuousClock.now
        var lastPublished: Int64 = -1
        var lastPublishedAt = ContinuousClock.now
        // Cancelled when the transfer ends: a last checkpoint then would only delay the completion by a sync.
        while (try? await Task.sleep(for: .milliseconds(250))) != nil {
            let (bytes, total) = transfer.progress.withLock { $0 }
            let instant = Double(max(0, bytes - lastBytes)) * 4
            // The average decays towards zero while nothing arrives; below a byte a second it is zero, not 1e-15.
            transfer.rate.withLock {
                let smoothed = $0 == 0 ? instant : $0 * 0.7 + instant * 0.3
                $0 = smoothed < Self.slowestRate ? 0 : smoothed
            }
            if bytes != lastBytes { transfer.lastProgressAt.withLock { $0 = Self.now() } }
            lastBytes = bytes
            guard var record = records[id], record.state == .active else { continue }
            // What identifies the server's file is saved at once: without it a resume after kill -9 could not
            // be validated and would start over.
            var learned = false
            if let total, record.bytesTotal != total {
                record.bytesTotal = total
                learned = true
            }
            let (etag, lastModified) = transfer.validators.withLock { $0 }
            if (etag != nil && etag != record.etag) || (lastModified != nil && lastModified != record.lastModified) {
                record.etag = etag
                record.lastModified = lastModified
                learned = true
            }
            records[id] = record
            if learned || bytes - lastCheckpointBytes >= settings.checkpointBytes
                || ContinuousClock.now - lastCheckpoint >= settings.checkpointInterval
            {
                // The offset is recorded only after the bytes before it are on disk. A power cut may roll the
                // row back to an older checkpoint, which is safe: it only means re-fetching more.
                if await FileSync.data(fd) == 0 {
                    records[id]?.bytesDone = bytes
                    lastCheckpointBytes = bytes
                    lastCheckpoint = .now
                    if let current = records[id] { await persist(current, durability: .processCrash) }
                }
            }
            // Re-read after the await: a pause or cancel may have changed the download meanwhile.
            guard let current = records[id], current.state == .active else { continue }
            // A stalled transfer still reports every few seconds, so that watchers see its speed fall and the stall.
            if bytes != lastPublished || ContinuousClock.now - lastPublishedAt >= Self.stalledAfter {
                lastPublished = bytes
                lastPublishedAt = .now
                publish(.progress, current)
            }
        }
        return nil
    }

    private func finish(_ id: Int64, _ outcome: TransferOutcome, fd: Int32) async {
        guard var record = records[id] else { return }
        func absorb(_ response: TransferResponse?) {
            guard let response else { return }
            record.finalURL = response.finalURL
            if let etag = response.etag { record.etag = etag }
            if let modified = response.lastModified { record.lastModified = modified }
            if let total = response.totalLength { record.bytesTotal = total }
        }
        /// The bytes kept cannot be resumed from: the next attempt starts from nothing.
        func startOver(forgettingValidators: Bool) -> DownloadFailure? {
            record.bytesDone = 0
            if forgettingValidators {
                record.etag = nil
                record.lastModified = nil
            }
            records[id] = record
            return Self.truncate(fd, to: 0, record)
        }
        switch outcome {
        case .completed(let response, let bytes):
            absorb(response)
            records[id] = record
            if let total = record.bytesTotal, total != bytes {
                let failure = startOver(forgettingValidators: false)
                return await fail(id, failure ?? .lengthMismatch(received: bytes, announced: total))
            }
            await complete(id, fd: fd, bytes: bytes)
        case .rangeNotSatisfiable(let response):
            absorb(response)
            let size = Self.fileSize(fd)
            if let total = record.bytesTotal, total == size {
                records[id] = record
                return await complete(id, fd: fd, bytes: size)
            }
            let failure = startOver(forgettingValidators: true)
            await fail(id, failure ?? .rangeNotSatisfiable(offset: size))
        case .httpError(let response):
            absorb(response)
            records[id] = record
            await fail(id, .httpStatus(response.status, url: response.finalURL, retryAfter: response.retryAfter))
        case .failed(let error, let response, let bytes):
            absorb(response)
            var failure = DownloadFailure.transfer(error)
            if error.code == .rangeMismatch {
                failure = startOver(forgettingValidators: true) ?? failure
            } else if await FileSync.data(fd) == 0 {
                // Re-read: a pause or cancel may have come during the sync.
                guard var current = records[id] else { return }
                current.finalURL = record.finalURL
                current.etag = record.etag
                current.lastModified = record.lastModified
                current.bytesTotal = record.bytesTotal
                current.bytesDone = min(bytes, Self.fileSize(fd))
                record = current
                records[id] = record
            } else {
                records[id] = record
            }
            if error.code == .cancelled { return await concludeStopped(id) }
            await fail(id, failure)
        }
    }

    /// Records a transfer's failure and what ``RetryPolicy/decide(_:attempts:now:random:)`` makes of it: a retry
    /// time, failed, or paused.
    private func fail(_ id: Int64, _ failure: DownloadFailure) async {
        guard var record = records[id] else { return }
        guard record.state == .active else { return await concludeStopped(id) }
        let error = failure.info
        let decision = settings.retry.decide(
            failure,
            attempts: record.attempts,
            now: Self.now(),
            random: Double.random(in: 0...1)
        )
        record.errorCode = error.code
        record.errorMessage = error.message
        record.errorHTTPStatus = error.httpStatus
        switch decision {
        case .retry(let at):
            record.state = .queued
            record.nextAttemptAt = at
            logger.info("download \(id) failed (\(error.message)); retrying")
        case .fail:
            record.state = .failed
            logger.warning("download \(id) failed: \(error.message)")
        case .pause(let reason):
            record.state = .paused
            record.pauseReason = reason
            logger.warning("download \(id) paused: \(error.message)")
        }
        records[id] = record
        await persist(record)
        switch record.state {
        case .queued: publish(.retrying, record)
        case .failed: publish(.failed, record)
        case .paused: publish(.paused, record)
        default: break
        }
    }

    /// A transfer stopped by pause, cancel or shutdown: record the checkpoint; pause and cancel already set the state.
    private func concludeStopped(_ id: Int64) async {
        guard var record = records[id] else { return }
        if record.state == .active { record.state = .queued }  // shutdown: resume at the next start
        if record.state == .cancelled {
            Self.discardPartial(of: record)
            records[id] = nil
            do {
                try await store.deleteDownloads([id])
            } catch {
                logger.error("cannot remove download \(id): \(error)")
            }
            publish(.removed, record)
            return
        }
        records[id] = record
        await persist(record)
    }

    private func complete(_ id: Int64, fd: Int32, bytes: Int64) async {
        let syncError = await FileSync.file(fd)
        // A pause or cancel may have come during the sync.
        guard var record = records[id], record.state == .active else { return await concludeStopped(id) }
        guard syncError == 0 else { return await fail(id, .file(.sync, errno: syncError, path: record.partialPath)) }
        // Where the bytes are now: the partial file keeps its name until the rename, whatever the final name becomes.
        let partialPath = record.partialPath
        let partialName = String(partialPath.dropFirst(record.directory.count + 1))
        var appeared: Set<String> = []
        while true {
            // Taken: an existing file, a `.part` kept by a cancel without delete_partial, or the name another
            // unfinished download will use.
            let name = FileNaming.unique(record.fileName) { candidate in
                let path = record.directory + "/" + candidate
                return appeared.contains(candidate) || records.isClaimed(path, byOtherThan: id)
                    || FileManager.default.fileExists(atPath: path)
                    || (path + ".part" != partialPath && FileManager.default.fileExists(atPath: path + ".part"))
            }
            // The chosen name and the full size go to the row before the rename, so that a crash right after it
            // finds the file under the row's name and marks it completed instead of downloading it again; the
            // partial file's own name goes with them, for a crash right before it (``recover()``).
            if name + ".part" != partialName { record.partialName = partialName }
            record.fileName = name
            record.bytesDone = bytes
            record.bytesTotal = bytes
            records[id] = record
            await persist(record, durability: .processCrash)
            // Atomic, and never over a file that appeared after the check: the final name shows either nothing or
            // the complete file, and someone else's file stays.
            if cposix_rename_noreplace(partialPath, record.path) == 0 { break }
            let code = errno
            guard code == EEXIST else { return await fail(id, .file(.rename, errno: code, path: record.path)) }
            logger.info("download \(id): \(record.path) appeared while it was being completed; taking another name")
            appeared.insert(name)
        }
        record.partialName = nil
        record.state = .completed
        record.completedAt = Self.now()
        record.nextAttemptAt = nil
        record.errorCode = nil
        record.errorMessage = nil
        record.errorHTTPStatus = nil
        if let error = await commitCompletion(record) {
            logger.error("cannot save download \(id): \(error)")
        }
        // A cancel that came meanwhile removes the entry (or already has); the file is complete and stays.
        // Anything else (a pause) yields to the completion.
        guard let current = records[id] else { return }
        if current.state == .cancelled { return await concludeStopped(id) }
        let overridden = current.state != .active
        records[id] = record
        if overridden { await persist(record) }
        logger.info("download \(id) completed: \(record.path) (\(bytes) bytes)")
        publish(.completed, record)
        if let program = settings.onComplete { hooks.run(program, for: record) }
    }

    /// Group commit of completions: those that finish while a batch is being synced wait and go together in the
    /// next one, so N files finishing at once cost one fsync per directory and one SQLite commit, not N of each.
    /// Returns the store's error, if the commit failed.
    private func commitCompletion(_ record: DownloadRecord) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            completionBatch.append((record, continuation))
            if !flushingCompletions {
                flushingCompletions = true
                Task { await self.flushCompletions() }
            }
        }
    }

    private func flushCompletions() async {
        while !completionBatch.isEmpty {
            let batch = completionBatch
            completionBatch = []
            // The renames reach the disk before the rows that point at the new names.
            await FileSync.directories(Set(batch.map(\.record.directory)))
            var failure: (any Error)?
            do {
                // A hook due is recorded with its completion, so that a crash before it starts still runs it.
                let hooks = settings.onComplete == nil ? [] : batch.map(\.record.id)
                try await store.save(batch.map(\.record), pendingHooks: hooks)
            } catch {
                failure = error
            }
            for entry in batch { entry.done.resume(returning: failure) }
        }
        flushingCompletions = false
    }

    private func persist(_ record: DownloadRecord, durability: Durability = .powerLoss) async {
        do {
            try await store.save([record], durability: durability)
        } catch {
            logger.error("cannot save download \(record.id): \(error)")
        }
    }

    // MARK: - Commands

    /// Validates and queues URLs; committed before it returns.
    package func enqueue(_ params: EnqueueParams) async throws -> EnqueueResult {
        try await enqueue(requests(for: params))
    }

    /// The requests `enqueue` params ask for, every one validated; nothing is queued yet.
    package func requests(for params: EnqueueParams) throws -> [DownloadRequest] {
        guard !params.urls.isEmpty else {
            throw RPCError.invalidParams("'urls' must hold at least one URL", parameter: "urls")
        }
        if params.name != nil && params.urls.count != 1 {
            throw RPCError.invalidParams("'name' can only be given with exactly one URL", parameter: "name")
        }
        if (params.user == nil) != (params.password == nil) {
            throw RPCError.invalidParams("'user' and 'password' go together", parameter: "user")
        }
        let directory = params.directory ?? defaultDirectory
        guard directory.hasPrefix("/") else {
            throw RPCError.invalidParams(
                "'directory' must be an absolute path, got '\(directory)'",
                parameter: "directory"
            )
        }
        // A path is a C string to the kernel: "/a\0b" would silently mean "/a", and every file name there would
        // look taken to the collision check, which then never ends.
        for (name, value) in [("directory", directory), ("user", params.user), ("password", params.password)] {
            if value?.utf8.contains(0) == true {
                throw RPCError.invalidParams("'\(name)' must not contain NUL characters", parameter: name)
            }
        }
        for header in params.headers ?? [] {
            guard let colon = header.firstIndex(of: ":"),
                !header[..<colon].trimmingWhitespace().isEmpty,
                !header.containsLineBreak, !header.utf8.contains(0)
            else {
                throw RPCError.invalidParams(
                    "header '\(header)' is not of the form 'Name: value'",
                    parameter: "headers"
                )
            }
        }
        let requests = params.urls.map { url in
            DownloadRequest(
                url: url,
                directory: directory,
                name: params.name,
                headers: params.headers ?? [],
                user: params.user,
                password: params.password,
                priority: params.priority ?? 0
            )
        }
        for request in requests { _ = try validatedURL(request.url) }
        return requests
    }

    /// Queues files that may go to different directories (a podcast's episodes to its folders) in one transaction;
    /// committed before it returns.
    ///
    /// - Returns: One entry per request, in their order.
    package func enqueue(_ requests: [DownloadRequest]) async throws -> EnqueueResult {
        // Every URL is checked before a directory is created: a refused request leaves nothing behind.
        let urls = try requests.map { try validatedURL($0.url) }
        for directory in Set(requests.map(\.directory)) {
            guard directory.hasPrefix("/"), !directory.utf8.contains(0) else {
                throw RPCError.invalidParams(
                    "'directory' must be an absolute path without NUL characters, got '\(directory)'",
                    parameter: "directory"
                )
            }
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw RPCError.invalidParams(
                    "cannot create the directory '\(directory)': \(describeFileError(error))",
                    parameter: "directory"
                )
            }
        }
        let now = Self.now()
        var taken: Set<String> = []
        var newRecords: [DownloadRecord] = []
        // A large batch lists each directory once instead of asking for two paths per download.
        let listings: [String: Set<String>]? =
            requests.count < 32
            ? nil
            : Dictionary(
                uniqueKeysWithValues: Set(requests.map(\.directory)).map { directory in
                    (directory, Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []))
                }
            )
        for (request, url) in zip(requests, urls) {
            let directory = request.directory
            var name = request.name.map { FileNaming.sanitize($0) } ?? FileNaming.name(for: url.url)
            let listing = listings?[directory]
            // A leftover `<name>.part` (kept by `cancel` without delete_partial) also takes the name: the new
            // download would resume into it or truncate it.
            name = FileNaming.unique(name) { candidate in
                let path = directory + "/" + candidate
                if taken.contains(path) || reservedPaths.contains(path) || records.isClaimed(path, byOtherThan: nil) {
                    return true
                }
                if let listing { return listing.contains(candidate) || listing.contains(candidate + ".part") }
                return FileManager.default.fileExists(atPath: path)
                    || FileManager.default.fileExists(atPath: path + ".part")
            }
            taken.insert(directory + "/" + name)
            newRecords.append(
                DownloadRecord(
                    url: url.string,
                    directory: directory,
                    fileName: name,
                    priority: request.priority,
                    addedAt: now,
                    headers: request.headers,
                    // Credentials written into the URL are moved out of it, so that no listing shows them.
                    authUser: request.user ?? url.user,
                    authPassword: request.user != nil ? request.password : url.password
                )
            )
        }
        let reserved = Set(newRecords.map(\.path))
        reservedPaths.formUnion(reserved)
        defer { reservedPaths.subtract(reserved) }  // by then the table has the new downloads
        let outcomes: [EnqueueOutcome]
        do {
            outcomes = try await store.enqueue(newRecords, linking: requests.map(\.episode))
        } catch {
            throw RPCError.internalError("the queue could not be saved: \(error)")
        }
        for outcome in outcomes where !outcome.existing {
            records[outcome.record.id] = outcome.record
            publish(.added, outcome.record)
        }
        wakeup.yield()
        return EnqueueResult(
            downloads: outcomes.map {
                // The table's state: the stored row of an existing download may be behind (active is not stored).
                let state = records[$0.record.id]?.state ?? $0.record.state
                return .init(
                    id: $0.record.id,
                    url: $0.record.url,
                    existing: $0.existing,
                    file: $0.record.path,
                    state: DownloadState(state)
                )
            }
        )
    }

    private func validatedURL(_ text: String) throws -> HTTPURL {
        let url: HTTPURL
        let shown = HTTPURL.shown(text)
        do {
            url = try HTTPURL(text)
        } catch .unparsable {
            throw RPCError.invalidParams("'\(shown)' is not a valid URL", parameter: "urls")
        } catch .scheme(let scheme) {
            throw RPCError.invalidParams(
                "'\(shown)' uses the scheme '\(scheme)'; only http and https URLs can be downloaded",
                parameter: "urls"
            )
        } catch .noHost {
            throw RPCError.invalidParams("'\(shown)' names no host", parameter: "urls")
        }
        if settings.transfer.requireHTTPS && !url.string.hasPrefix("https:") {
            throw RPCError.invalidParams(
                "'\(shown)' is plain http, and require_https is on; use an https URL",
                parameter: "urls"
            )
        }
        return url
    }

    package func list(state: DownloadState?) -> DownloadsResult {
        DownloadsResult(
            downloads: orderedRecords().compactMap { record in
                let info = info(record)
                return state == nil || info.state == state ? info : nil
            }
        )
    }

    package func show(_ id: Int64) throws -> DownloadInfo {
        guard let record = records[id], record.state != .cancelled, record.listed else { throw Self.unknown(id) }
        return info(record)
    }

    package func pause(_ selection: SelectionParams) async throws -> ChangedResult {
        let running = { (record: DownloadRecord) in record.state == .queued || record.state == .active }
        let changed = try await apply(selection, to: running) {
            $0.state = .paused
            $0.pauseReason = nil
        }
        for record in changed {
            transfers[record.id]?.stop.succeed()
            publish(.paused, record)
        }
        return ChangedResult(changed: changed.map(\.id))
    }

    package func resume(_ selection: SelectionParams) async throws -> ChangedResult {
        let paused = { (record: DownloadRecord) in record.state == .paused }
        let changed = try await apply(selection, to: paused) {
            $0.state = .queued
            $0.pauseReason = nil
            $0.nextAttemptAt = nil
        }
        for record in changed { publish(.resumed, record) }
        wakeup.yield()
        return ChangedResult(changed: changed.map(\.id))
    }

    package func retry(_ selection: SelectionParams) async throws -> ChangedResult {
        let eligible = { (record: DownloadRecord) in
            record.state == .failed || (record.state == .queued && record.nextAttemptAt != nil)
        }
        let changed = try await apply(selection, to: eligible) {
            $0.state = .queued
            $0.attempts = 0
            $0.nextAttemptAt = nil
        }
        for record in changed { publish(.resumed, record) }
        wakeup.yield()
        return ChangedResult(changed: changed.map(\.id))
    }

    package func cancel(_ selection: SelectionParams) async throws -> ChangedResult {
        guard selection.all != true else {
            throw RPCError.invalidParams("'cancel' takes ids, not 'all'", parameter: "all")
        }
        // Committed as "cancelled" first: if the daemon dies before the partial file is gone, the next start
        // finishes the job.
        let unfinished = { (record: DownloadRecord) in record.state != .completed && record.state != .cancelled }
        let changed = try await apply(selection, to: unfinished) {
            $0.state = .cancelled
            $0.deletePartial = selection.deletePartial ?? false
        }
        var idle: [DownloadRecord] = []
        for record in changed {
            if let transfer = transfers[record.id] {
                transfer.stop.succeed()  // the transfer's end removes it
            } else if finishing.contains(record.id) {
                // The transfer's end removes it.
            } else {
                idle.append(record)
            }
        }
        // Those without a transfer go at once, in one transaction rather than one each.
        for record in idle {
            Self.discardPartial(of: record)
            records[record.id] = nil
        }
        do {
            try await store.deleteDownloads(idle.map(\.id))
        } catch {
            logger.error("cannot remove \(idle.count) cancelled download(s): \(error)")
        }
        for record in idle { publish(.removed, record) }
        return ChangedResult(changed: changed.map(\.id))
    }

    package func move(_ params: MoveParams) async throws -> ChangedResult {
        let choices = [params.top == true, params.bottom == true, params.before != nil].filter { $0 }.count
        guard choices == 1 else {
            throw RPCError.invalidParams("'move' takes exactly one of 'top', 'bottom' or 'before'", parameter: "top")
        }
        guard let moving = records[params.id], moving.state != .cancelled, moving.listed else {
            throw Self.unknown(params.id)
        }
        guard moving.state == .queued || moving.state == .paused || moving.state == .active else {
            throw RPCError(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: download \(params.id) is \(moving.state.rawValue); only unfinished downloads "
                    + "have a place in the queue.",
                reason: "not_movable",
                details: ["id": String(params.id), "state": moving.state.rawValue]
            )
        }
        var order = orderedRecords().filter { $0.state == .queued || $0.state == .paused || $0.state == .active }
            .map(\.id)
        order.removeAll { $0 == params.id }
        if params.top == true {
            order.insert(params.id, at: 0)
        } else if params.bottom == true {
            order.append(params.id)
        } else if let before = params.before {
            guard let index = order.firstIndex(of: before) else { throw Self.unknown(before) }
            order.insert(params.id, at: index)
        }
        var changed: [DownloadRecord] = []
        for (index, id) in order.enumerated() {
            guard var record = records[id] else { continue }
            if params.top == true && id == params.id, let first = order.dropFirst().first, let other = records[first] {
                record.priority = max(record.priority, other.priority)
            }
            let position = Int64(index + 1)
            if record.position != position || id == params.id {
                record.position = position
                records[id] = record
                changed.append(record)
            }
        }
        try await save(changed)
        wakeup.yield()
        return ChangedResult(changed: [params.id])
    }

    package func clear(_ params: ClearParams) async throws -> ChangedResult {
        var states: Set<DownloadRecord.State> = []
        if params.completed == true { states.insert(.completed) }
        if params.failed == true { states.insert(.failed) }
        guard !states.isEmpty else {
            throw RPCError.invalidParams("'clear' needs 'completed', 'failed' or both", parameter: "completed")
        }
        let cleared = records.values.filter { $0.listed && states.contains($0.state) }
        // A completed download an episode points at stays, off the list: the episode keeps its file, and its
        // podcast's keep and unsubscribe --delete-files still find it.
        let unlisted: Set<Int64>
        do {
            unlisted = try await store.clearDownloads(cleared.filter { $0.state == .completed }.map(\.id))
            try await store.deleteDownloads(cleared.filter { $0.state != .completed }.map(\.id))
        } catch {
            throw RPCError.internalError("the queue could not be saved: \(error)")
        }
        for var record in cleared {
            if unlisted.contains(record.id) {
                records[record.id]?.listed = false
            } else {
                records[record.id] = nil
            }
            if record.state == .failed {
                record.deletePartial = params.deletePartial ?? false
                Self.discardPartial(of: record)
            }
            publish(.removed, record)
        }
        return ChangedResult(changed: cleared.map(\.id).sorted())
    }

    /// The downloads among `ids` that still exist, as clients see them.
    package func infos(_ ids: [Int64]) -> [Int64: DownloadInfo] {
        var found: [Int64: DownloadInfo] = [:]
        for id in ids {
            if let record = records[id], record.state != .cancelled { found[id] = info(record) }
        }
        return found
    }

    /// Removes downloads for good: unfinished ones are cancelled (partial files deleted), completed ones are
    /// forgotten and, with `deleteFiles`, their files deleted. Used when an episode leaves the kept set or its
    /// podcast is unsubscribed.
    ///
    /// - Returns: The files deleted.
    package func discard(_ ids: [Int64], deleteFiles: Bool) async throws -> [String] {
        let existing = ids.filter { records[$0] != nil && records[$0]?.state != .cancelled }
        let unfinished = existing.filter { records[$0]?.state != .completed }
        if !unfinished.isEmpty {
            _ = try await cancel(SelectionParams(ids: unfinished, deletePartial: true))
        }
        let completed = existing.compactMap { id in records[id].flatMap { $0.state == .completed ? $0 : nil } }
        guard !completed.isEmpty else { return [] }
        do {
            try await store.deleteDownloads(completed.map(\.id))
        } catch {
            throw RPCError.internalError("the queue could not be saved: \(error)")
        }
        var deleted: [String] = []
        for record in completed {
            if records[record.id]?.state == .completed { records[record.id] = nil }
            if deleteFiles && unlink(record.path) == 0 { deleted.append(record.path) }
            publish(.removed, record)
        }
        return deleted
    }

    /// Sets (or with `nil` params only reports) the global speed limit; 0 means unlimited.
    package func limit(_ params: LimitParams?) -> LimitParams {
        if let params {
            let rate = params.rate.flatMap { $0 > 0 ? $0 : nil }
            speedLimitOverride = .some(rate)
            engine.setSpeedLimit(rate)
        }
        return LimitParams(rate: effectiveSpeedLimit)
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

    package func counts() -> DownloadCounts {
        var counts = DownloadCounts(
            active: 0,
            queued: 0,
            paused: 0,
            failed: 0,
            completed: 0,
            rate: 0,
            rateLimit: effectiveSpeedLimit
        )
        for record in records.values where record.listed {
            switch record.state {
            case .active: counts.active += 1
            case .queued: counts.queued += 1
            case .paused: counts.paused += 1
            case .failed: counts.failed += 1
            case .completed: counts.completed += 1
            case .cancelled: break
            }
        }
        counts.rate = transfers.values.reduce(0) { $0 + $1.rate.withLock { $0 } }
        return counts
    }

    // MARK: - Helpers

    private func save(_ changed: [DownloadRecord]) async throws {
        do {
            try await store.save(changed)
        } catch {
            throw RPCError.internalError("the queue could not be saved: \(error)")
        }
    }

    /// Applies `change` to the selected downloads that are `eligible` (others are left alone), commits them in one
    /// transaction, and returns them as changed.
    private func apply(
        _ selection: SelectionParams,
        to eligible: (DownloadRecord) -> Bool,
        _ change: (inout DownloadRecord) -> Void
    ) async throws -> [DownloadRecord] {
        var changed: [DownloadRecord] = []
        for id in try select(selection, where: eligible) {
            guard var record = records[id], eligible(record) else { continue }
            change(&record)
            records[id] = record
            changed.append(record)
        }
        try await save(changed)
        return changed
    }

    private func select(_ selection: SelectionParams, where eligible: (DownloadRecord) -> Bool) throws -> [Int64] {
        if selection.all == true {
            guard selection.ids?.isEmpty ?? true else {
                throw RPCError.invalidParams("give either 'ids' or 'all', not both", parameter: "ids")
            }
            return records.values.filter { $0.listed && eligible($0) }.map(\.id).sorted()
        }
        guard let ids = selection.ids, !ids.isEmpty else {
            throw RPCError.invalidParams("'ids' must name at least one download", parameter: "ids")
        }
        for id in ids where records[id] == nil || records[id]?.state == .cancelled || records[id]?.listed == false {
            throw Self.unknown(id)
        }
        return ids
    }

    private func publish(_ event: DownloadEvent, _ record: DownloadRecord) {
        changed.yield()
        // Building the event stats the partial file: not worth it for nobody.
        guard events.isWatched(.downloads) else { return }
        events.publish(.downloads, method: event.rawValue, params: DownloadEventParams(download: info(record)))
    }

    private func info(_ record: DownloadRecord) -> DownloadInfo {
        let transfer = transfers[record.id]
        let live = transfer?.progress.withLock { $0 }
        let bytes =
            live?.bytes
            ?? (record.state == .completed ? record.bytesTotal ?? record.bytesDone : Self.partialSize(record))
        let total = live?.total ?? record.bytesTotal
        // Whole bytes per second and whole seconds: the fractions are noise, and JSON readers get plain numbers.
        let speed = transfer?.rate.withLock { $0.rounded() }
        var eta: Double?
        if let speed, speed >= Self.slowestRate, let total {
            eta = (Double(max(0, total - bytes)) / speed).rounded(.up)
        }
        var stalledSince: String?
        if record.state == .active, let since = transfer?.lastProgressAt.withLock({ $0 }),
            Self.now() - since >= Self.stalledAfter.components.seconds * 1000
        {
            stalledSince = Self.iso8601(since)
        }
        return DownloadInfo(
            id: record.id,
            url: record.url,
            finalURL: record.finalURL,
            file: record.path,
            state: DownloadState(record.state),
            pauseReason: record.pauseReason,
            priority: record.priority,
            position: record.position,
            bytesDone: bytes,
            bytesTotal: total,
            speed: record.state == .active ? speed : nil,
            etaSeconds: record.state == .active ? eta : nil,
            attempts: record.attempts,
            lastError: record.errorCode.map {
                DownloadErrorInfo(code: $0, message: record.errorMessage ?? "", httpStatus: record.errorHTTPStatus)
            },
            nextRetryAt: record.nextAttemptAt.map { Self.iso8601($0) },
            addedAt: Self.iso8601(record.addedAt),
            completedAt: record.completedAt.map { Self.iso8601($0) },
            headerNames: record.headers.compactMap {
                $0.split(separator: ":").first.map { $0.trimmingWhitespace() }
            },
            hasCredentials: record.authUser != nil,
            stalledSince: stalledSince
        )
    }

    private static func unknown(_ id: Int64) -> RPCError {
        RPCError(
            code: RPCError.invalidParamsCode,
            message: "Invalid params: there is no download \(id); 'singlecastctl downloads' lists them.",
            reason: "unknown_download",
            details: ["id": String(id)]
        )
    }

    /// Cuts the partial file back to `offset` before a resume or restart.
    ///
    /// A cut that failed must not leave bytes that a later attempt would resume from as if they were good: the file
    /// is removed, so the retry starts from nothing; when even that fails the download fails for good.
    private static func truncate(_ fd: Int32, to offset: Int64, _ record: DownloadRecord) -> DownloadFailure? {
        guard ftruncate(fd, off_t(offset)) != 0 else { return nil }
        let code = errno
        guard unlink(record.partialPath) == 0 else { return .file(.remove, errno: errno, path: record.partialPath) }
        return .file(.truncate, errno: code, path: record.partialPath)
    }

    static func now() -> Int64 { Int64(Date.now.timeIntervalSince1970 * 1000) }

    /// Below this (bytes per second) a transfer's speed is 0 and it has no ETA.
    private static let slowestRate = 1.0
    /// A transfer that received nothing for this long is `stalled_since` the last byte.
    private static let stalledAfter = Duration.seconds(5)

    private static func iso8601(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000).formatted(.iso8601)
    }

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
    private static func discardPartial(of record: DownloadRecord) {
        if record.deletePartial || fileSize(record.partialPath) == 0 { unlink(record.partialPath) }
    }

    private static func partialSize(_ record: DownloadRecord) -> Int64 {
        fileSize(record.partialPath) ?? record.bytesDone
    }

}

extension DownloadState {
    /// Every stored state has its wire name; none is silently shown as another.
    init(_ state: DownloadRecord.State) {
        switch state {
        case .queued: self = .queued
        case .active: self = .active
        case .paused: self = .paused
        case .failed: self = .failed
        case .completed: self = .completed
        case .cancelled: self = .cancelled
        }
    }
}
