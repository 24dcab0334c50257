import SinglecastStore

/// Enqueues and the commands of clients: pause, resume, retry, cancel, move, clear, and discards.
extension DownloadQueueStateMachine {
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
    ///
    /// - Parameter now: `resume --now`: these downloads pass the gate from now on, as if queued with `--now`.
    package mutating func resume(_ selection: Selection, now: Bool = false) throws(DownloadQueueError) -> [Action] {
        let paused = { (record: DownloadRecord) in record.state == .paused }
        let changed = try change(selection, where: paused) { [self] in
            $0.pauseReason = nil
            $0.nextAttemptAt = nil
            if now { $0.bypassesGate = true }
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

    /// The queue runs by priority first, so a place among downloads of another priority is reached by taking theirs:
    /// `top` raises it to the first one's when lower, `bottom` lowers it to the last one's when higher, `before`
    /// takes that download's. Without it the positions change and the order does not; a client sees the priority
    /// change in the moved download's record.
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
        var priority = moving.priority
        switch placement {
        case .top: priority = max(priority, order.dropFirst().first.flatMap { records[$0]?.priority } ?? priority)
        case .bottom: priority = min(priority, order.dropLast().last.flatMap { records[$0]?.priority } ?? priority)
        case .before(let other): priority = records[other]?.priority ?? priority
        }
        var changed: [DownloadRecord] = []
        for (index, current) in order.enumerated() {
            guard var record = records[current] else { continue }
            if current == id { record.priority = priority }
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
        for var record in chosen {
            record.listed = false
            put(record)
        }
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
        for id in cleared.map(\.id) {
            guard var record = records[id] else { continue }
            record.listed = true
            put(record)
        }
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
}
