import CPosix
import Foundation
import SinglecastDaemon
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Which name a completed download takes, and that no one else's file is ever overwritten or resumed from.
@Suite struct CompletionNameTests {
    private func makeQueue(_ home: TemporaryDirectory, engine: HTTPEngine, store: Store) -> DownloadQueue {
        let logger = Logger(level: .error)
        return DownloadQueue(
            store: store,
            engine: engine,
            events: EventBus(logger: logger),
            logger: logger,
            settings: QueueSettings(),
            defaultDirectory: home.file("episodes"),
            distrustUncheckpointedBytes: false
        )
    }

    /// A started engine, a store and a queue over them in `home`.
    private func startQueue(_ home: TemporaryDirectory) throws -> (HTTPEngine, Store, DownloadQueue) {
        let engine = try HTTPEngine()
        engine.start()
        let store = try Store(path: home.file("singlecast.sqlite3"))
        return (engine, store, makeQueue(home, engine: engine, store: store))
    }

    /// Runs the queue until `id` is completed or failed (at most 120 s: a busy two-core machine is slow).
    private func runUntilDone(_ queue: DownloadQueue, _ id: Int64) async throws -> DownloadSnapshot {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.run() }
            defer { queue.shutdown() }
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline {
                if [.completed, .failed].contains(try await queue.show(id).state) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try await queue.show(id)
        }
    }

    @Test func theMoveIntoPlaceNeverReplacesAFile() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-rename-test")
        let (partial, target) = (home.file("a.bin.part"), home.file("a.bin"))
        try Data("new".utf8).write(to: URL(fileURLWithPath: partial))
        // A file that appeared after the name check.
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: target))
        #expect(cposix_rename_noreplace(partial, target) == -1)
        #expect(errno == EEXIST)
        #expect(sameBytes(FileManager.default.contents(atPath: target), Data("someone else's".utf8)))
        #expect(sameBytes(FileManager.default.contents(atPath: partial), Data("new".utf8)))
        #expect(cposix_rename_noreplace(partial, home.file("b.bin")) == 0)
        #expect(!FileManager.default.fileExists(atPath: partial))
    }

    @Test func aCompletedDownloadNeverTakesTheNameOfAKeptPartialFile() async throws {
        let nginx = try NginxServer()
        let data = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let url = try nginx.serve(data, as: "a.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let (engine, store, queue) = try startQueue(home)
        let target = home.file("out")
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: target)])
        #expect(queued[0].file == target + "/a.bin")
        // Before it completes, another program takes a.bin, and a cancel without delete_partial has left
        // "a (2).bin.part": a crash between recording "a (2).bin" and the rename would have resumed from it.
        let squatter = Data("someone else's file".utf8)
        let kept = Data("half of another episode".utf8)
        try squatter.write(to: URL(fileURLWithPath: target + "/a.bin"))
        try kept.write(to: URL(fileURLWithPath: target + "/a (2).bin.part"))

        let done = try await runUntilDone(queue, queued[0].id)
        await engine.stop()
        try await store.close()

        #expect(done.state == .completed, "\(done)")
        #expect(done.file == target + "/a (3).bin")
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a (3).bin"), data))
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a.bin"), squatter))
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a (2).bin.part"), kept))
    }

    @Test func aCrashBetweenChoosingANewNameAndTheRenameResumesTheRightPartialFile() async throws {
        let nginx = try NginxServer()
        let data = Data((0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* 29) })
        let url = try nginx.serve(data, as: "a.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let target = home.file("out")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // The state a kill -9 leaves: the row already names "a (2).bin" (a.bin was taken), the bytes are still in
        // a.bin.part, and "a (2).bin.part" is a partial file kept by someone's cancel.
        let store = try Store(path: home.file("singlecast.sqlite3"))
        var record = try await store.enqueue([
            DownloadRecord(url: url, directory: target, fileName: "a.bin", addedAt: 0)
        ])[0]
        .record
        record.state = .active
        record.fileName = "a (2).bin"
        record.partialName = "a.bin.part"
        record.bytesTotal = Int64(data.count)
        record.bytesDone = 100_000
        try await store.save([record])
        try data.prefix(100_000).write(to: URL(fileURLWithPath: target + "/a.bin.part"))
        let kept = Data("half of another episode".utf8)
        try kept.write(to: URL(fileURLWithPath: target + "/a (2).bin.part"))
        try Data("someone else's file".utf8).write(to: URL(fileURLWithPath: target + "/a.bin"))

        let engine = try HTTPEngine()
        engine.start()
        let queue = makeQueue(home, engine: engine, store: store)
        try await queue.recover()
        let done = try await runUntilDone(queue, record.id)
        await engine.stop()
        try await store.close()

        #expect(done.state == .completed, "\(done)")
        #expect(
            sameBytes(FileManager.default.contents(atPath: done.file), data),
            "resumed from another download's bytes"
        )
        #expect(done.file == target + "/a (3).bin")
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a (2).bin.part"), kept))
        let left = try FileManager.default.contentsOfDirectory(atPath: target).sorted()
        #expect(left == ["a (2).bin.part", "a (3).bin", "a.bin"])
    }

    /// The mark a completed file carries (user.singlecast.download), or `nil`.
    private static func mark(of path: String) -> String? {
        var value = [UInt8](repeating: 0, count: 64)
        let size = cposix_read_link_attribute(path, "user.singlecast.download", &value, value.count)
        return size < 0 ? nil : String(decoding: value.prefix(size), as: UTF8.self)
    }

    /// Whether the temporary directories' file system keeps user extended attributes (ext4, xfs, btrfs, tmpfs do).
    static let userAttributesKept: Bool = {
        guard let home = try? TemporaryDirectory(prefix: "singlecast-xattr-probe") else { return false }
        let path = home.file("probe")
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return cposix_set_file_attribute(fd, "user.probe", "1", 1) == 0
    }()

    @Test(.enabled(if: userAttributesKept, "the file system keeps no user extended attributes"))
    func aCompletedFileCarriesTheMarkOfItsDownload() async throws {
        let nginx = try NginxServer()
        let data = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let url = try nginx.serve(data, as: "a.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let (engine, store, queue) = try startQueue(home)
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: home.file("out"))])
        let done = try await runUntilDone(queue, queued[0].id)
        await engine.stop()
        let row = try await store.downloads().first { $0.id == queued[0].id }
        try await store.close()

        #expect(done.state == .completed, "\(done)")
        #expect(Self.mark(of: done.file) == "\(queued[0].id):\(row?.addedAt ?? -1)")
        #expect(row?.bytesTotal == Int64(data.count), "the size is saved with the completion")
    }

    /// The state a kill -9 leaves between the rename and the commit when the name was not saved first: the row
    /// still says active with no size, the file is in place with the download's mark. Start-up completes it
    /// without fetching anything; a file under another download's name with a mark not its own is left alone.
    @Test(.enabled(if: userAttributesKept, "the file system keeps no user extended attributes"))
    func aCrashBetweenTheRenameAndTheCommitIsCompletedByTheMark() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let target = home.file("out")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let store = try Store(path: home.file("singlecast.sqlite3"))
        // Nothing listens there: a download that started again would fail, not complete.
        let records = try await store.enqueue([
            DownloadRecord(url: "http://127.0.0.1:9/a.bin", directory: target, fileName: "a.bin", addedAt: 1_000),
            DownloadRecord(url: "http://127.0.0.1:9/b.bin", directory: target, fileName: "b.bin", addedAt: 2_000),
        ]).map(\.record)
        for var record in records {
            record.state = .active
            try await store.save([record])
        }
        let bytes = Data(repeating: 0x5A, count: 4_321)
        for (record, mark) in [(records[0], "\(records[0].id):1000"), (records[1], "\(records[0].id):1000")] {
            let fd = open(record.path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            #expect(fd >= 0)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            #expect(cposix_set_file_attribute(fd, "user.singlecast.download", mark, mark.utf8.count) == 0)
            close(fd)
        }

        let engine = try HTTPEngine()
        let queue = makeQueue(home, engine: engine, store: store)
        try await queue.recover()
        let marked = try await queue.show(records[0].id)
        let other = try await queue.show(records[1].id)
        let saved = try await store.downloads()
        try await store.close()

        #expect(marked.state == .completed, "\(marked)")
        #expect(marked.file == target + "/a.bin")
        #expect(saved.first { $0.id == records[0].id }?.bytesTotal == Int64(bytes.count))
        #expect(other.state == .queued, "b.bin carries a's mark, not b's: \(other)")
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/b.bin"), bytes))
    }
}
