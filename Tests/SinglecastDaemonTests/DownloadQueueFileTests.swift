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

/// The download queue in-process, against a real nginx: which files a download writes, renames and leaves alone.
@Suite struct DownloadQueueFileTests {
    /// A queue over a fresh store in `home`, not yet running.
    private func makeQueue(_ home: TemporaryDirectory, engine: HTTPEngine) throws -> (DownloadQueue, Store) {
        let store = try Store(path: home.file("singlecast.sqlite3"))
        let logger = Logger(level: .error)
        let queue = DownloadQueue(
            store: store,
            engine: engine,
            events: EventBus(logger: logger),
            logger: logger,
            settings: QueueSettings(),
            defaultDirectory: home.file("episodes"),
            distrustUncheckpointedBytes: false
        )
        return (queue, store)
    }

    /// Runs the queue's loop until `id` is completed or failed (or 30 s pass), then stops it.
    private func runUntilDone(_ queue: DownloadQueue, _ id: Int64) async throws -> DownloadInfo {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await queue.run() }
            defer { queue.shutdown() }
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let info = try await queue.show(id)
                if info.state == .completed || info.state == .failed || ContinuousClock.now > deadline {
                    return info
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    @Test func aNameTakenWhileDownloadingMovesTheFileToTheNextFreeName() async throws {
        let nginx = try NginxServer()
        let data = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let url = try nginx.serve(data, as: "a.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        engine.start()
        let (queue, store) = try makeQueue(home, engine: engine)
        let target = home.file("out")
        let queued = try await queue.enqueue(EnqueueParams(urls: [url], directory: target))
        #expect(queued.downloads[0].file == target + "/a.bin")
        // Another program puts a file under that name before the download completes.
        let squatter = Data("someone else's file".utf8)
        try squatter.write(to: URL(fileURLWithPath: target + "/a.bin"))

        let done = try await runUntilDone(queue, queued.downloads[0].id)
        await engine.stop()
        try await store.close()

        #expect(done.state == .completed, "\(done)")
        #expect(done.file == target + "/a (2).bin")
        #expect(FileManager.default.contents(atPath: target + "/a (2).bin") == data)
        #expect(FileManager.default.contents(atPath: target + "/a.bin") == squatter)
        let left = try FileManager.default.contentsOfDirectory(atPath: target).sorted()
        #expect(left == ["a (2).bin", "a.bin"], "no partial file stays behind")
    }
}
