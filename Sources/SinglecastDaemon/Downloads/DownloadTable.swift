import FoundationEssentials
import SinglecastStore

/// The queue's downloads in memory, with the indexes the scheduler asks for on every completion.
///
/// With thousands of downloads, scanning and copying every record per completion (for a free file name, for
/// the next to start) made the queue quadratic; these indexes are kept up to date by the one setter instead.
package struct DownloadTable {
    /// A queued download as the scheduler sees it.
    package struct QueuedEntry: Equatable {
        package var id: Int64
        package var priority: Int
        package var position: Int64
        package var notBefore: Int64?
        package var host: String
    }

    package private(set) var byID: [Int64: DownloadRecord] = [:]
    /// How many downloads claim each path (see ``claimsPath(_:)``).
    private var claimedPaths: [String: Int] = [:]
    /// Each download's host, parsed once.
    private var hosts: [Int64: String] = [:]
    /// Queued downloads in start order; `nil` when a change may have reordered them.
    private var queueOrder: [QueuedEntry]?
    /// Downloads that left the queue since ``queueOrder`` was last read; taken out of it all at once then, since
    /// removing each one as it left made `pause --all` of 10,000 downloads quadratic.
    private var departed: Set<Int64> = []

    package init() {}

    package var values: Dictionary<Int64, DownloadRecord>.Values { byID.values }

    package subscript(id: Int64) -> DownloadRecord? {
        get { byID[id] }
        set {
            let old = byID[id]
            if let old, Self.claimsPath(old) {
                let path = old.path
                let remaining = (claimedPaths[path] ?? 1) - 1
                claimedPaths[path] = remaining > 0 ? remaining : nil
            }
            if let newValue, Self.claimsPath(newValue) { claimedPaths[newValue.path, default: 0] += 1 }
            let wasQueued = old?.state == .queued
            if let newValue, newValue.state == .queued {
                if !wasQueued || old?.priority != newValue.priority || old?.position != newValue.position
                    || old?.nextAttemptAt != newValue.nextAttemptAt
                {
                    queueOrder = nil
                }
            } else if wasQueued, queueOrder != nil {
                departed.insert(id)
            }
            if let newValue {
                if old?.url != newValue.url { hosts[id] = Self.host(of: newValue.url) }
            } else {
                hosts[id] = nil
            }
            byID[id] = newValue
        }
    }

    /// The lower-cased host of a download's URL (`""` when it has none).
    package func host(of id: Int64) -> String { hosts[id] ?? "" }

    /// Whether a download other than `id` claims `path` (see ``claimsPath(_:)``).
    package func isClaimed(_ path: String, byOtherThan id: Int64?) -> Bool {
        let claims = claimedPaths[path] ?? 0
        guard let id, let own = byID[id], Self.claimsPath(own), own.path == path else { return claims > 0 }
        return claims > 1
    }

    /// Queued downloads by priority (high first), then position, then id.
    package mutating func queued() -> [QueuedEntry] {
        if var order = queueOrder {
            if !departed.isEmpty {
                order.removeAll { departed.contains($0.id) }
                departed = []
                queueOrder = order
            }
            return order
        }
        departed = []
        var entries: [QueuedEntry] = []
        for record in byID.values where record.state == .queued {
            entries.append(
                QueuedEntry(
                    id: record.id,
                    priority: record.priority,
                    position: record.position,
                    notBefore: record.nextAttemptAt,
                    host: host(of: record.id)
                )
            )
        }
        entries.sort { left, right in
            if left.priority != right.priority { return left.priority > right.priority }
            if left.position != right.position { return left.position < right.position }
            return left.id < right.id
        }
        queueOrder = entries
        return entries
    }

    /// Every download but a completed one claims its path (and `<path>.part`). That includes a cancelled one: it
    /// stays in the table only until its transfer has stopped, and until then the transfer may still write the
    /// partial file, which the cancel then deletes (`delete_partial`). Were the name free meanwhile, a download
    /// queued at that moment could take it and have its own partial file written into or deleted.
    private static func claimsPath(_ record: DownloadRecord) -> Bool {
        record.state != .completed
    }

    private static func host(of url: String) -> String { HTTPURL.host(of: url) ?? "" }
}
