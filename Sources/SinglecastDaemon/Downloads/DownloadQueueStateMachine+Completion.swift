import SinglecastStore
import SinglecastSupport

/// A complete body becomes a file under its final name, and its completion is committed with others.
extension DownloadQueueStateMachine {
    /// Whether the download is still to be completed after its file was synced (a pause or cancel may have come).
    package func stillActive(_ id: Int64) -> Bool { lives[id]?.isActive == true }

    /// Chooses the final name of a complete download and records it, with the size and the partial file's own name,
    /// before the rename: a crash right after the rename then finds the file under the row's name, one right before
    /// it finds the bytes under the partial name (``recover(_:partialExists:finalSize:finalMarked:now:)``).
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
        let partialName =
            DownloadDirectory.relative(partialPath, below: record.directory) ?? DownloadDirectory.baseName(partialPath)
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
        actions.append(
            .log(.info, "download \(record.id) completed: \(record.path) (\(ListSummary.grouped(size)) bytes)")
        )
        actions.append(.publish(.completed, record))
        if runsHook { actions.append(.runHook(record)) }
        return actions
    }

    // MARK: - Group commit

    /// A download whose complete body is synced, waiting in the group commit to be named, renamed and committed.
    package struct SyncedFile: Equatable, Sendable {
        package var id: Int64
        package var bytes: Int64
        /// Where the bytes are now.
        package var partialPath: String
        /// Whether the file carries its download's ``CompletionMark``, synced with it.
        package var marked: Bool

        package init(id: Int64, bytes: Int64, partialPath: String, marked: Bool = false) {
            self.id = id
            self.bytes = bytes
            self.partialPath = partialPath
            self.marked = marked
        }
    }

    /// A completion's place in the group commit.
    package enum CommitTurn: Equatable, Sendable {
        /// Commit a batch now (``commitBatch(leadBy:)``).
        case lead
        /// Wait: the batch being committed ends by handing the lead on (``batchCommitted()``), and the next one
        /// commits this completion, either led by it or by one that came earlier.
        case wait
    }

    /// A completion's file is synced and is to be named, renamed and committed. Completions that arrive while a
    /// batch is being committed wait, and go together in the next batch: N files finishing at once cost one save of
    /// their names, one sync per directory and one SQLite commit, not N of each.
    package mutating func commitRequested(_ file: SyncedFile) -> CommitTurn {
        if committingBatch {
            waitingCommits.append(file)
            return .wait
        }
        committingBatch = true
        return .lead
    }

    /// The batch the leader commits: itself and every completion waiting by now.
    package mutating func commitBatch(leadBy leader: SyncedFile) -> [SyncedFile] {
        let batch = [leader] + waitingCommits.filter { $0.id != leader.id }
        waitingCommits = []
        return batch
    }

    /// Chooses the final names of a batch's files (``chooseName(_:bytes:partialPath:exists:)``), each seeing the
    /// names chosen before it, and saves them in one transaction before any rename.
    ///
    /// A marked file (``SyncedFile/marked``) that keeps the name its row has is not saved: after a crash start-up
    /// knows it by its mark under that name, and its size is saved with the completion. Most batches then save
    /// nothing before their renames.
    ///
    /// A download paused or cancelled while it waited for the batch is left out (`stopped`): its bytes stay in the
    /// partial file, as when the command comes during the file's sync. Asked with no await since the check.
    ///
    /// - Returns: The files to rename to their records' paths, those stopped, and the actions to perform before the
    ///   renames (one save of the chosen names that need it).
    package mutating func nameBatch(
        _ batch: [SyncedFile],
        exists: (String) -> Bool
    ) -> (named: [SyncedFile], stopped: [Int64], actions: [Action]) {
        var named: [SyncedFile] = []
        var stopped: [Int64] = []
        var toSave: [DownloadRecord] = []
        for file in batch {
            guard stillActive(file.id) else {
                stopped.append(file.id)
                continue
            }
            let stored = records[file.id]
            let record = chooseName(file.id, bytes: file.bytes, partialPath: file.partialPath, exists: exists)
            if !file.marked || record.fileName != stored?.fileName || record.partialName != stored?.partialName {
                toSave.append(record)
            }
            named.append(file)
        }
        return (named, stopped, toSave.isEmpty ? [] : [.persist(toSave, .processCrash)])
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
}
