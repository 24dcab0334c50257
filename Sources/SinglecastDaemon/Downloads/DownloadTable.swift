import FoundationEssentials
import SinglecastStore

/// The queue's downloads in memory, with the indexes the scheduler asks for on every completion.
///
/// With thousands of downloads, scanning and copying every record per completion (for a free file name, for
/// the next to start) made the queue quadratic; these indexes are kept up to date by the one setter instead.
package struct DownloadTable {
    /// A queued download as the scheduler sees it.
    package struct QueuedEntry: Comparable {
        package var id: Int64
        package var priority: Int
        package var position: Int64
        package var notBefore: Int64?
        package var host: String

        /// Start order: priority (high first), then position, then id.
        package static func < (left: QueuedEntry, right: QueuedEntry) -> Bool {
            if left.priority != right.priority { return left.priority > right.priority }
            if left.position != right.position { return left.position < right.position }
            return left.id < right.id
        }
    }

    package private(set) var byID: [Int64: DownloadRecord] = [:]
    /// How many downloads claim each path (see ``claimsPath(_:)``).
    private var claimedPaths: [String: Int] = [:]
    /// Each download's host, parsed once.
    private var hosts: [Int64: String] = [:]
    /// The downloads of each URL: an enqueue looks up every URL it is given, and a scan of every record for each
    /// made an enqueue of 1,000 URLs cost 1,000 passes over the whole history.
    private var idsByURL: [String: URLDownloads] = [:]
    /// Queued downloads by retry time, host and start order (``DownloadQueueIndex``).
    private var queue = DownloadQueueIndex()
    private var queuedCount = 0

    package init() {}

    package var values: Dictionary<Int64, DownloadRecord>.Values { byID.values }

    /// Whether download `id` is in the table, without copying its record as `self[id] != nil` does.
    package func contains(_ id: Int64) -> Bool { byID.index(forKey: id) != nil }

    package subscript(id: Int64) -> DownloadRecord? {
        get { byID[id] }
        set {
            let old = byID[id]
            // Most changes (progress, state, attempts) keep the claim as it was: building and hashing the path twice
            // for each was a few per cent of the queue's CPU on small files.
            if !Self.sameClaim(old, newValue) {
                if let old, Self.claimsPath(old) {
                    let path = old.path
                    let remaining = (claimedPaths[path] ?? 1) - 1
                    claimedPaths[path] = remaining > 0 ? remaining : nil
                }
                if let newValue, Self.claimsPath(newValue) { claimedPaths[newValue.path, default: 0] += 1 }
            }
            if old?.url != newValue?.url {
                if let url = old?.url { idsByURL[url] = idsByURL[url]?.removing(id) }
                if let url = newValue?.url { idsByURL[url] = idsByURL[url]?.adding(id) ?? .one(id) }
                hosts[id] = newValue.map { Self.host(of: $0.url) }
            }
            byID[id] = newValue
            let wasQueued = old?.state == .queued
            if wasQueued { queuedCount -= 1 }
            guard let newValue, newValue.state == .queued else { return }
            queuedCount += 1
            // An entry that no longer matches the download is dropped when it comes up (``isCurrent``).
            if !wasQueued || old?.priority != newValue.priority || old?.position != newValue.position
                || old?.nextAttemptAt != newValue.nextAttemptAt || old?.url != newValue.url
            {
                queue.add(entry(newValue))
                if queue.isWasteful(queued: queuedCount) {
                    queue = DownloadQueueIndex(byID.values.filter { $0.state == .queued }.map(entry))
                }
            }
        }
    }

    /// Every download of `url` (as stored), in no particular order.
    package func downloads(of url: String) -> [DownloadRecord] {
        switch idsByURL[url] {
        case nil: []
        case .one(let id)?: byID[id].map { [$0] } ?? []
        case .many(let ids)?: ids.compactMap { byID[$0] }
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

    private func entry(_ record: DownloadRecord) -> QueuedEntry {
        QueuedEntry(
            id: record.id,
            priority: record.priority,
            position: record.position,
            notBefore: record.nextAttemptAt,
            host: host(of: record.id)
        )
    }

    /// Whether an entry still says what its download is: queued, in the same place, with the same retry time.
    private static func isCurrent(
        _ entry: QueuedEntry,
        _ byID: [Int64: DownloadRecord],
        _ hosts: [Int64: String]
    )
        -> Bool
    {
        guard let record = byID[entry.id] else { return false }
        return record.state == .queued && record.priority == entry.priority && record.position == entry.position
            && record.nextAttemptAt == entry.notBefore && (hosts[entry.id] ?? "") == entry.host
    }

    // MARK: - A pass over the due downloads (``DownloadQueueIndex``)

    /// Entries the queue's index holds, stale ones included: never far above the queued downloads.
    package var queueEntries: Int { queue.count }

    /// Begins a pass: downloads whose retry time came by `now` join the due ones. Returns the entries looked at.
    package mutating func beginDuePass(now: Int64) -> Int {
        let (byID, hosts) = (byID, hosts)
        return queue.beginPass(now: now) { Self.isCurrent($0, byID, hosts) }
    }

    /// The next due download in start order (priority, high first; position; id), skipping hosts found full in
    /// this pass. Answer it with ``takeDue(_:)``, ``hostIsFull(_:)`` or ``passOver(_:)``.
    package mutating func nextDue(examined: inout Int) -> QueuedEntry? {
        let (byID, hosts) = (byID, hosts)
        return queue.next(isCurrent: { Self.isCurrent($0, byID, hosts) }, examined: &examined)
    }

    /// The download starts: it leaves the due ones (its state changes next).
    package mutating func takeDue(_ entry: QueuedEntry) { queue.take(entry) }

    /// The download's host has no free slot: its downloads are not offered again in this pass.
    package mutating func hostIsFull(_ entry: QueuedEntry) { queue.hostIsFull(entry) }

    /// The download may not start now; it is offered again in the next pass.
    package mutating func passOver(_ entry: QueuedEntry) { queue.passOver(entry) }

    /// Ends the pass. Returns when the earliest download still waiting for a retry comes due, if one does.
    package mutating func endDuePass(examined: inout Int) -> Int64? {
        let (byID, hosts) = (byID, hosts)
        let wake = queue.endPass(isCurrent: { Self.isCurrent($0, byID, hosts) }, examined: &examined)
        if queue.isWasteful(queued: queuedCount) {
            queue = DownloadQueueIndex(byID.values.filter { $0.state == .queued }.map(entry))
        }
        return wake
    }

    /// Every download but a completed one claims its path (and `<path>.part`). That includes a cancelled one: it
    /// stays in the table only until its transfer has stopped, and until then the transfer may still write the
    /// partial file, which the cancel then deletes (`delete_partial`). Were the name free meanwhile, a download
    /// queued at that moment could take it and have its own partial file written into or deleted.
    private static func claimsPath(_ record: DownloadRecord) -> Bool {
        record.state != .completed
    }

    /// Whether `old` and `new` claim the same path, or both none.
    private static func sameClaim(_ old: DownloadRecord?, _ new: DownloadRecord?) -> Bool {
        let oldClaims = old.map(claimsPath) ?? false
        let newClaims = new.map(claimsPath) ?? false
        guard oldClaims, newClaims, let old, let new else { return oldClaims == newClaims }
        return old.directory == new.directory && old.fileName == new.fileName
    }

    private static func host(of url: String) -> String { HTTPURL.host(of: url) ?? "" }
}

/// The ids of one URL's downloads. Nearly every URL has one, which then needs no set of its own: sets cost 4 MiB
/// more with 30,000 downloads queued.
private enum URLDownloads {
    case one(Int64)
    case many(Set<Int64>)

    func adding(_ id: Int64) -> URLDownloads {
        switch self {
        case .one(let other):
            return other == id ? self : .many([other, id])
        case .many(var ids):
            ids.insert(id)
            return .many(ids)
        }
    }

    /// Without `id`; `nil` when no download is left.
    func removing(_ id: Int64) -> URLDownloads? {
        switch self {
        case .one(let other): return other == id ? nil : self
        case .many(var ids):
            ids.remove(id)
            if ids.count > 1 { return .many(ids) }
            return ids.first.map { .one($0) }
        }
    }
}
