/// The queued downloads in the order the scheduler takes them, kept up to date by ``DownloadTable``'s setter.
///
/// A start used to sort and walk every queued download: with 20,000 queued against a host that refused them, each
/// failure (a new retry time, so a new order) cost a sort, and each start a walk past every download whose retry
/// was not due and every one whose host was full. Here downloads waiting for a retry sit in a heap by due time, and
/// due ones in a heap per host by start order; a heap of each host's first due download gives the next to start.
/// A start looks at the downloads it starts, the hosts it finds full and the entries that went stale since.
///
/// Entries are not removed when a download changes or leaves the queue (that would need a search); a changed one
/// gets a new entry, and an entry no longer matching its download is dropped when it comes to the top. When stale
/// entries outnumber live ones the heaps are rebuilt, so memory stays proportional to the queue.
struct DownloadQueueIndex {
    typealias Entry = DownloadTable.QueuedEntry

    /// An entry waiting for its retry time, earliest first.
    private struct Waiting: Comparable {
        var entry: Entry
        static func < (left: Waiting, right: Waiting) -> Bool {
            (left.entry.notBefore ?? 0, left.entry.id) < (right.entry.notBefore ?? 0, right.entry.id)
        }
    }

    private var waiting = BinaryHeap<Waiting>()
    /// Due entries of each host, in start order; a host without any has no heap.
    private var due: [String: BinaryHeap<Entry>] = [:]
    /// A record of each host's first due entry, in start order; one whose host's first entry changed since is stale.
    private var heads = BinaryHeap<Entry>()
    /// Entries in `waiting` and `due`, stale ones included.
    private(set) var count = 0
    /// What the pass under way put aside, given back by ``endPass()``.
    private var fullHosts: [Entry] = []
    private var passedOver: [Entry] = []
    private(set) var inPass = false

    init(_ entries: [Entry] = []) {
        for entry in entries { add(entry) }
    }

    /// Whether stale entries outnumber the `queued` downloads enough to rebuild.
    func isWasteful(queued: Int) -> Bool {
        !inPass && (count > 2 * queued + 64 || heads.count > 2 * due.count + 64)
    }

    mutating func add(_ entry: Entry) {
        count += 1
        if entry.notBefore != nil {
            waiting.insert(Waiting(entry: entry))
        } else {
            makeDue(entry)
        }
    }

    private mutating func makeDue(_ entry: Entry) {
        let first = due[entry.host]?.min
        due[entry.host, default: BinaryHeap()].insert(entry)
        if first.map({ entry < $0 }) ?? true { heads.insert(entry) }
    }

    /// Takes the host's first due entry out.
    private mutating func popFirst(of host: String) {
        guard var heap = due[host] else { return }
        due[host] = nil  // so the heap is not copied on write
        heap.popMin()
        count -= 1
        if let next = heap.min {
            heads.insert(next)
            due[host] = heap
        }
    }

    /// Starts a pass: entries whose retry time came move to their host's heap, stale ones are dropped.
    ///
    /// - Returns: The entries looked at.
    mutating func beginPass(now: Int64, isCurrent: (Entry) -> Bool) -> Int {
        precondition(!inPass, "a pass over the queue began inside another")
        inPass = true
        var examined = 0
        while let first = waiting.min, (first.entry.notBefore ?? 0) <= now {
            waiting.popMin()
            examined += 1
            if isCurrent(first.entry) {
                makeDue(first.entry)
            } else {
                count -= 1
            }
        }
        return examined
    }

    /// The next due entry in start order, among hosts not put aside in this pass; stale entries on the way are
    /// dropped and counted in `examined`. The caller answers each entry with ``take(_:)``, ``hostIsFull(_:)`` or
    /// ``passOver(_:)``; unanswered, its host would be forgotten until its first entry changes.
    mutating func next(isCurrent: (Entry) -> Bool, examined: inout Int) -> Entry? {
        while let head = heads.popMin() {
            examined += 1
            guard due[head.host]?.min == head else { continue }  // the host's first entry changed since
            guard isCurrent(head) else {
                popFirst(of: head.host)
                continue
            }
            return head
        }
        return nil
    }

    /// The entry ``next(isCurrent:examined:)`` gave starts: it leaves the index.
    mutating func take(_ entry: Entry) {
        popFirst(of: entry.host)
    }

    /// The entry's host has no free slot: none of its entries is offered again in this pass.
    mutating func hostIsFull(_ entry: Entry) {
        fullHosts.append(entry)
    }

    /// The entry cannot start now but stays queued: the pass goes on to the host's next entry.
    mutating func passOver(_ entry: Entry) {
        popFirst(of: entry.host)
        count += 1  // still counted: it comes back at the end of the pass
        passedOver.append(entry)
    }

    /// Ends the pass: what was put aside is offered again next time.
    ///
    /// - Returns: The earliest retry time of a download still waiting for one, after dropping stale entries from the
    ///   top of that heap (counted in `examined`).
    mutating func endPass(isCurrent: (Entry) -> Bool, examined: inout Int) -> Int64? {
        for entry in fullHosts { heads.insert(entry) }
        for entry in passedOver {
            count -= 1
            add(entry)
        }
        fullHosts = []
        passedOver = []
        inPass = false
        while let first = waiting.min, !isCurrent(first.entry) {
            waiting.popMin()
            count -= 1
            examined += 1
        }
        return waiting.min?.entry.notBefore
    }
}
