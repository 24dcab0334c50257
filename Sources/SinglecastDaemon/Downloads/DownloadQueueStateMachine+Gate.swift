import SinglecastStore
import SinglecastSupport

/// The download gate (windows, metered network): what it holds back, and what `--now` lets through.
extension DownloadQueueStateMachine {
    /// Whether the gate paused this download (and its opening resumes it).
    package static func pausedByGate(_ record: DownloadRecord) -> Bool {
        record.state == .paused && record.pauseReason.flatMap(GateReason.init(rawValue:)) != nil
    }

    /// The state of a download that may run: `queued`, or paused with the gate's reason (written into `record`)
    /// while the gate holds it.
    func admission(_ record: inout DownloadRecord) -> Settled {
        if let gate, !record.bypassesGate {
            record.pauseReason = gate.rawValue
            return .paused
        }
        record.pauseReason = nil
        return .queued
    }

    /// How a download let go by a command is announced: resumed, or paused again by the closed gate.
    static func releaseEvent(_ record: DownloadRecord) -> Announcement {
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
        return [.log(.info, Self.gateLine(reason, changed: changed.count)), .persist(changed, .powerLoss)] + actions
            + changed.map { .publish(Self.releaseEvent($0), $0) } + [.reschedule]
    }

    /// `downloads held: the network is metered (3 paused)`, `download gate open (2 downloads resumed)`; no count when
    /// the gate turned with nothing to hold or let go.
    package static func gateLine(_ reason: GateReason?, changed: Int) -> String {
        let count = changed == 1 ? "1 download" : "\(ListSummary.grouped(changed)) downloads"
        guard let reason else { return "download gate open" + (changed > 0 ? " (\(count) resumed)" : "") }
        let why = reason == .metered ? "the network is metered" : "outside the download windows"
        return "downloads held: \(why)" + (changed > 0 ? " (\(count) paused)" : "")
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
}
