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
        let engine = try HTTPEngine()
        engine.start()
        let store = try Store(path: home.file("singlecast.sqlite3"))
        let queue = makeQueue(home, engine: engine, store: store)
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
}
