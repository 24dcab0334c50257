import Foundation
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
    /// How many downloads still use each path: unfinished ones will end up there, and a cancelled one stays in the
    /// table only while its transfer winds down, still writing `<path>.part` and perhaps about to delete it.
    private var pathUsers: [String: Int] = [:]
    /// Each download's host, parsed once.
    private var hosts: [Int64: String] = [:]
    /// Queued downloads in start order; `nil` when a change may have reordered them.
    private var queueOrder: [QueuedEntry]?

    package init() {}

    package var values: Dictionary<Int64, DownloadRecord>.Values { byID.values }

    package subscript(id: Int64) -> DownloadRecord? {
        get { byID[id] }
        set {
            let old = byID[id]
            if let old, Self.usesPath(old) {
                let path = old.path
                let remaining = (pathUsers[path] ?? 1) - 1
                pathUsers[path] = remaining > 0 ? remaining : nil
            }
            if let newValue, Self.usesPath(newValue) { pathUsers[newValue.path, default: 0] += 1 }
            let wasQueued = old?.state == .queued
            if let newValue, newValue.state == .queued {
                if !wasQueued || old?.priority != newValue.priority || old?.position != newValue.position
                    || old?.nextAttemptAt != newValue.nextAttemptAt
                {
                    queueOrder = nil
                }
            } else if wasQueued {
                queueOrder?.removeAll { $0.id == id }
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

    /// Whether a download other than `id` still uses `path`: an unfinished one will end up there, or a cancelled one
    /// is still stopping.
    package func isClaimed(_ path: String, byOtherThan id: Int64?) -> Bool {
        let claims = pathUsers[path] ?? 0
        guard let id, let own = byID[id], Self.usesPath(own), own.path == path else { return claims > 0 }
        return claims > 1
    }

    /// Queued downloads by priority (high first), then position, then id.
    package mutating func queued() -> [QueuedEntry] {
        if let queueOrder { return queueOrder }
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

    /// Every state but completed: a cancelled download leaves the table when its transfer has ended.
    private static func usesPath(_ record: DownloadRecord) -> Bool {
        record.state != .completed
    }

    private static func host(of url: String) -> String { URL(string: url)?.host?.lowercased() ?? "" }
}
