// singlecastd's shape without its bookkeeping, for bench/downloads' "shape floor" line.
//
// The same threads and hand-offs as the daemon's downloads, and the same durable writes, in the same order:
// - one libcurl multi handle on a thread of its own; each transfer's body written with `pwrite`;
// - an actor that owns the transfer slots and the files' names (it opens each partial file and renames it), and
//   gives a transfer's slot to the next download as soon as the transfer ends;
// - each file's `fsync` on one of 8 serial Dispatch queues taken in turn, never on the actor;
// - SQLite on a serial queue of its own (WAL): every URL's row inserted and committed before the first transfer;
//   then the group commit, whose first completion to arrive leads: it saves its batch's names
//   (`synchronous = NORMAL`), renames each file, syncs the directory on a sync queue and commits the rows
//   (`synchronous = FULL`), then hands the lead to the next completion waiting.
// No state machine, no download records, no events, no JSON: what is left when singlecast's own work per download is
// taken away but its shape is kept. bench/durable-fetch.c is the same work with neither the shape nor the store.
//
// Usage: shape-floor DIR DATABASE PARALLEL URL-LIST   (one URL per line; the file name is the URL's last segment)
// Built by bench/downloads: swiftc -O -parse-as-library -I Sources/CCurl -I Sources/CSQLite bench/shape-floor.swift

import CCurl
import CSQLite
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One libcurl multi handle on its own thread; `fetch` hands it a URL and a file and waits for the end.
final class Engine: Sendable {
    private struct Job {
        let url: String
        let target: WriteTarget
        let done: CheckedContinuation<Bool, Never>
    }

    /// Where one transfer's body goes.
    final class WriteTarget: @unchecked Sendable {
        let fd: Int32
        var offset: off_t = 0
        var failed = false
        init(fd: Int32) { self.fd = fd }
    }

    private nonisolated(unsafe) let multi: UnsafeMutableRawPointer
    private let jobs = Mutex<[Job]>([])

    init() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
    }

    func fetch(_ url: String, into fd: Int32) async -> Bool {
        await withCheckedContinuation { done in
            let wasEmpty = jobs.withLock { jobs in
                jobs.append(Job(url: url, target: WriteTarget(fd: fd), done: done))
                return jobs.count == 1
            }
            if wasEmpty { curl_multi_wakeup(multi) }
        }
    }

    /// The engine's loop; never returns.
    func run() {
        var spare: [UnsafeMutableRawPointer] = []
        var running: [UnsafeMutableRawPointer: Job] = [:]
        while true {
            for job in jobs.withLock({ jobs in
                defer { jobs = [] }
                return jobs
            }) {
                guard let easy = spare.popLast() ?? curl_easy_init() else { fatalError("curl_easy_init failed") }
                _ = ccurl_setopt_string(easy, CURLOPT_URL, job.url)
                _ = ccurl_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, writeBody)
                _ = ccurl_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(job.target).toOpaque())
                curl_multi_add_handle(multi, easy)
                running[easy] = job
            }
            var transfers: Int32 = 0
            curl_multi_perform(multi, &transfers)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                var status = 0
                _ = ccurl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                let ok = ccurl_message_result(message) == CURLE_OK && status == 200
                curl_multi_remove_handle(multi, easy)
                spare.append(easy)
                guard let job = running.removeValue(forKey: easy) else { continue }
                job.done.resume(returning: ok && !job.target.failed)
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }
}

private let writeBody: ccurl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let target = Unmanaged<Engine.WriteTarget>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    var written = 0
    while written < length {
        let result = pwrite(target.fd, data + written, length - written, target.offset + off_t(written))
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else {
            target.failed = true
            return 0
        }
        written += result
    }
    target.offset += off_t(length)
    return length
}

/// `fsync` on one of 8 serial queues taken in turn.
enum Sync {
    private static let lanes = (0..<8).map { DispatchQueue(label: "shape-floor.sync.\($0)") }
    private static let next = Atomic<Int>(0)

    static func fsync(_ fd: Int32) async -> Bool {
        let lane = lanes[next.add(1, ordering: .relaxed).oldValue % lanes.count]
        return await withCheckedContinuation { done in
            lane.async { done.resume(returning: Glibc.fsync(fd) == 0) }
        }
    }
}

/// SQLite on a serial queue of its own: one row per download.
final class Store: @unchecked Sendable {
    private let queue = DispatchQueue(label: "shape-floor.store")
    private var db: OpaquePointer?

    init(path: String) {
        guard sqlite3_open(path, &db) == SQLITE_OK else { fatalError("cannot open \(path)") }
        execute("PRAGMA journal_mode = WAL")
        execute("CREATE TABLE IF NOT EXISTS downloads (id INTEGER PRIMARY KEY, url TEXT, name TEXT, state TEXT)")
    }

    func insert(_ urls: [String]) async {
        await onQueue {
            let rows = urls.indices.map { (Int64($0), urls[$0]) }
            self.transaction(full: true, "INSERT INTO downloads (id, url, state) VALUES (?, ?, 'queued')", rows) {
                statement,
                row in
                sqlite3_bind_int64(statement, 1, row.0)
                sqlite3_bind_text(statement, 2, row.1, -1, transient)
            }
        }
    }

    /// The chosen names, before the renames: safe against a process crash, made durable by the next full commit.
    func saveNames(_ batch: [Completion]) async {
        await onQueue {
            self.transaction(full: false, "UPDATE downloads SET name = ? WHERE id = ?", batch) {
                statement,
                completion in
                sqlite3_bind_text(statement, 1, completion.name, -1, transient)
                sqlite3_bind_int64(statement, 2, Int64(completion.index))
            }
        }
    }

    func commitCompleted(_ batch: [Completion]) async {
        await onQueue {
            self.transaction(full: true, "UPDATE downloads SET state = 'completed' WHERE id = ?", batch) {
                statement,
                completion in
                sqlite3_bind_int64(statement, 1, Int64(completion.index))
            }
        }
    }

    private func onQueue(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { done in
            queue.async {
                work()
                done.resume()
            }
        }
    }

    private func transaction<Row>(full: Bool, _ sql: String, _ rows: [Row], bind: (OpaquePointer?, Row) -> Void) {
        execute(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        execute("BEGIN IMMEDIATE")
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { fatalError("cannot prepare \(sql)") }
        for row in rows {
            bind(statement, row)
            guard sqlite3_step(statement) == SQLITE_DONE else {
                fatalError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        execute("COMMIT")
    }

    private func execute(_ sql: String) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            fatalError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

struct Completion: Sendable {
    let index: Int
    let name: String
    let partial: String
}

/// The transfer slots, the files' names and the group commit.
actor Downloads {
    private let urls: [String]
    private let names: [String]
    private let directory: Int32
    private let engine: Engine
    private let store: Store
    private var slots: Int
    private var next = 0
    private var ended = 0
    private(set) var failures = 0
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    private var committing = false
    private var waiting: [(Completion, CheckedContinuation<Bool, Never>)] = []

    init(urls: [String], directory: Int32, parallel: Int, engine: Engine, store: Store) {
        self.urls = urls
        names = urls.map { url in url.split(separator: "/").last.map(String.init) ?? url }
        self.directory = directory
        slots = parallel
        self.engine = engine
        self.store = store
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func run() async {
        await store.insert(urls)
        wakeup.yield()
        await withDiscardingTaskGroup { group in
            for await _ in wakeups {
                while slots > 0, next < urls.count {
                    slots -= 1
                    let index = next
                    next += 1
                    group.addTask { await self.download(index) }
                }
            }
        }
    }

    private func download(_ index: Int) async {
        let completion = Completion(index: index, name: names[index], partial: names[index] + ".part")
        let fd = openat(directory, completion.partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let fetched = fd >= 0 ? await engine.fetch(urls[index], into: fd) : false
        slots += 1
        wakeup.yield()
        let synced = fetched ? await Sync.fsync(fd) : false
        if fd >= 0 { close(fd) }
        if synced {
            await commit(completion)
        } else {
            failures += 1
        }
        ended += 1
        if ended == urls.count { wakeup.finish() }
    }

    private func commit(_ completion: Completion) async {
        if committing {
            let leads = await withCheckedContinuation { waiting.append((completion, $0)) }
            if !leads { return }
        }
        committing = true
        let members = waiting
        waiting = []
        let batch = [completion] + members.map(\.0)
        await store.saveNames(batch)
        for member in batch where renameat(directory, member.partial, directory, member.name) != 0 { failures += 1 }
        let directory = self.directory
        _ = await Sync.fsync(directory)
        await store.commitCompleted(batch)
        for (_, done) in members { done.resume(returning: false) }
        if waiting.isEmpty {
            committing = false
        } else {
            waiting.removeFirst().1.resume(returning: true)
        }
    }
}

@main
struct ShapeFloor {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, let parallel = Int(arguments[3]), parallel > 0 else {
            fputs("usage: shape-floor DIR DATABASE PARALLEL URL-LIST\n", stderr)
            exit(2)
        }
        guard let list = fopen(arguments[4], "r") else {
            fputs("shape-floor: cannot open \(arguments[4])\n", stderr)
            exit(2)
        }
        var urls: [String] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        while getline(&line, &capacity, list) > 0, let line {
            let url = String(cString: line).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            if !url.isEmpty { urls.append(url) }
        }
        let directory = open(arguments[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            fputs("shape-floor: cannot open \(arguments[1])\n", stderr)
            exit(2)
        }
        let engine = Engine()
        DispatchQueue(label: "shape-floor.engine").async { engine.run() }
        let downloads = Downloads(
            urls: urls,
            directory: directory,
            parallel: parallel,
            engine: engine,
            store: Store(path: arguments[2])
        )
        await downloads.run()
        exit(await downloads.failures == 0 ? 0 : 1)
    }
}
