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

    /// Runs the queue's loop until `id` is completed or failed (or 120 s pass), then stops it.
    private func runUntilDone(_ queue: DownloadQueue, _ id: Int64) async throws -> DownloadSnapshot {
        try await whileRunning(queue) {
            _ = try await eventually { [.completed, .failed].contains(try await queue.show(id).state) }
            return try await queue.show(id)
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
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: target)])
        #expect(queued[0].file == target + "/a.bin")
        // Another program puts a file under that name before the download completes.
        let squatter = Data("someone else's file".utf8)
        try squatter.write(to: URL(fileURLWithPath: target + "/a.bin"))

        let done = try await runUntilDone(queue, queued[0].id)
        await engine.stop()
        try await store.close()

        #expect(done.state == .completed, "\(done)")
        #expect(done.file == target + "/a (2).bin")
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a (2).bin"), data))
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a.bin"), squatter))
        let left = try FileManager.default.contentsOfDirectory(atPath: target).sorted()
        #expect(left == ["a (2).bin", "a.bin"], "no partial file stays behind")
    }

    @Test func aCancelledDownloadStillStoppingKeepsItsNameFromNewOnes() async throws {
        let faults = try FaultServer()
        let nginx = try NginxServer()
        let data = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let fast = try nginx.serve(data, as: "fast.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        engine.start()
        let (queue, store) = try makeQueue(home, engine: engine)
        let target = home.file("out")
        let first = try await queue.enqueue(
            [DownloadRequest(url: faults.url("/slow/4194304/65536"), directory: target, name: "a.bin")]
        )
        let second = try await whileRunning(queue) {
            // Cancelled while its transfer writes a.bin.part, then a new download asks for the same name: the
            // cancelled transfer's clean-up (deleting a.bin.part) must not hit the new download's file.
            let growing = try await eventually {
                FileManager.default.fileExists(atPath: target + "/a.bin.part")
                    && (try? FileManager.default.attributesOfItem(atPath: target + "/a.bin.part")[.size] as? Int ?? 0)
                        ?? 0 > 0
            }
            #expect(growing, "the slow download never started")
            _ = try await queue.cancel([first[0].id], deletePartial: true)
            let second = try await queue.enqueue([DownloadRequest(url: fast, directory: target, name: "a.bin")])
            let id = second[0].id
            _ = try await eventually { [.completed, .failed].contains(try await queue.show(id).state) }
            #expect(
                try await eventually { (try? await queue.show(first[0].id)) == nil },
                "the cancelled download is never removed"
            )
            return try await queue.show(id)
        }
        await engine.stop()
        try await store.close()

        #expect(second.state == .completed, "\(second)")
        #expect(sameBytes(FileManager.default.contents(atPath: second.file), data))
        let left = try FileManager.default.contentsOfDirectory(atPath: target)
        #expect(left == [(second.file as NSString).lastPathComponent], "the cancelled partial file is deleted")
    }

    @Test func aPartialFileKeptByCancelKeepsItsName() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        let (queue, store) = try makeQueue(home, engine: engine)
        let target = home.file("out")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // What `cancel` without delete_partial leaves for the user: a new download must not resume into it.
        let kept = Data("the first half of someone's episode".utf8)
        try kept.write(to: URL(fileURLWithPath: target + "/a.bin.part"))
        let queued = try await queue.enqueue(
            ["http://127.0.0.1:9/a.bin", "http://127.0.0.1:9/other/a.bin"].map {
                DownloadRequest(url: $0, directory: target)
            }
        )
        try await store.close()

        #expect(queued.map(\.file) == [target + "/a (2).bin", target + "/a (3).bin"])
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/a.bin.part"), kept))
    }

    @Test func oneBatchQueuesFilesIntoSeveralDirectories() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        let (queue, store) = try makeQueue(home, engine: engine)
        let (a, b) = (home.file("a"), home.file("b/c"))
        let result = try await queue.enqueue([
            DownloadRequest(url: "http://127.0.0.1:9/1/e.mp3", directory: a, name: "Episode.mp3"),
            DownloadRequest(url: "http://127.0.0.1:9/2/e.mp3", directory: b, name: "Episode.mp3"),
            DownloadRequest(url: "http://127.0.0.1:9/3/e.mp3", directory: a, name: "Episode.mp3"),
            DownloadRequest(url: "http://127.0.0.1:9/1/e.mp3", directory: b),
        ])
        try await store.close()

        #expect(
            result.map(\.file) == [
                a + "/Episode.mp3", b + "/Episode.mp3", a + "/Episode (2).mp3", a + "/Episode.mp3",
            ]
        )
        #expect(result.map(\.existing) == [false, false, false, true], "a URL queued twice is one download")
        #expect(Set(result.map(\.id)).count == 3)
        #expect(FileManager.default.fileExists(atPath: b))
    }

    /// A directory whose last character combines with the separator's neighbour must not shift the name: the name
    /// is what follows the directory's bytes and its slash.
    @Test func namesInDirectoriesOfCombiningCharactersStayWhole() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        let (queue, store) = try makeQueue(home, engine: engine)
        let directory = home.file("Cafe\u{301} \u{1F1EB}\u{1F1F7}")
        let names = ["\u{301}e\u{301}.mp3", "Épisode 1.mp3", "e\u{301}.mp3"]
        let result = try await queue.enqueue(
            names.enumerated().map { index, name in
                DownloadRequest(url: "http://127.0.0.1:9/\(index).mp3", directory: directory, name: name)
            }
        )
        let stored = try await store.downloads()
        try await store.close()

        #expect(result.map(\.file) == names.map { directory + "/" + $0 })
        #expect(stored.map(\.fileName) == names)
        #expect(stored.allSatisfy { $0.directory == directory })
    }

    /// A name that begins with a combining mark keeps it through the download: its partial file's name is cut from
    /// the path by bytes when the final name is chosen, not by `Character`s, which join the slash and the mark.
    @Test func aNameBeginningWithACombiningMarkKeepsItWhenCompleted() async throws {
        let nginx = try NginxServer()
        let data = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let url = try nginx.serve(data, as: "m.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        engine.start()
        let (queue, store) = try makeQueue(home, engine: engine)
        let target = home.file("out")
        let name = "\u{301}x.mp3"
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: target, name: name)])
        #expect(queued[0].file == target + "/" + name)

        let done = try await runUntilDone(queue, queued[0].id)
        await engine.stop()
        let stored = try await store.downloads()
        try await store.close()

        #expect(done.state == .completed, "\(done)")
        #expect(done.file == target + "/" + name)
        #expect(stored.map(\.fileName) == [name])
        #expect(sameBytes(FileManager.default.contents(atPath: target + "/" + name), data))
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == [name])
    }

    @Test func concurrentEnqueuesNeverChooseTheSameName() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        let (queue, store) = try makeQueue(home, engine: engine)
        let target = home.file("out")
        // Each enqueue chooses its names, then waits for its commit; others run meanwhile.
        let files = try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<8 {
                group.addTask {
                    let urls = (0..<3).map { "http://127.0.0.1:9/\(client)-\($0)/episode.mp3" }
                    return try await queue.enqueue(urls.map { DownloadRequest(url: $0, directory: target) }).map(\.file)
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        try await store.close()

        #expect(files.count == 24)
        #expect(Set(files).count == 24, "two downloads share a file: \(files.sorted())")
    }

    @Test func pauseAndResumeWhileADownloadFinishesNeverRunItTwice() async throws {
        let nginx = try NginxServer()
        var urls: [String] = []
        var sources: [String: Data] = [:]
        for number in 0..<24 {
            let data = Data((0..<262_144).map { UInt8(truncatingIfNeeded: $0 &+ number) })
            urls.append(try nginx.serve(data, as: "f\(number).bin"))
            sources["f\(number).bin"] = data
        }
        let home = try TemporaryDirectory(prefix: "singlecast-queue-test")
        let engine = try HTTPEngine()
        engine.start()
        let store = try Store(path: home.file("singlecast.sqlite3"))
        let logger = Logger(level: .error)
        let events = EventBus(logger: logger)
        let queue = DownloadQueue(
            store: store,
            engine: engine,
            events: events,
            logger: logger,
            settings: QueueSettings(),
            defaultDirectory: home.file("episodes"),
            distrustUncheckpointedBytes: false
        )
        let (watcher, stream) = events.subscribe()
        events.setTopics([.downloads], for: watcher)
        let target = home.file("out")
        let ids = try await queue.enqueue(urls.map { DownloadRequest(url: $0, directory: target) }).map(\.id)
        // Counts of download.completed and download.failed by id.
        let counting = Task {
            var seen: [String: Int] = [:]
            for await line in stream {
                guard let event = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                    let method = event["method"] as? String,
                    method == "download.completed" || method == "download.failed",
                    let params = event["params"] as? [String: Any],
                    let download = params["download"] as? [String: Any], let id = download["id"] as? Int
                else { continue }
                seen["\(method) \(id)", default: 0] += 1
            }
            return seen
        }
        let finished = try await whileRunning(queue) {
            // A pause and a resume that land while a transfer syncs and renames its file must not start a second
            // transfer of the same download. Three seconds of that, then the downloads may finish in peace (a
            // busy machine would otherwise never let a transfer end between two pauses).
            let storm = ContinuousClock.now + .seconds(3)
            while ContinuousClock.now < storm {
                for id in ids.shuffled().prefix(4) {
                    _ = try await queue.pause(.ids([id]))
                    _ = try await queue.resume(.ids([id]))
                }
                try await Task.sleep(for: .milliseconds(2))
                if try await ids.asyncAllSatisfy({ try await queue.show($0).state == .completed }) { break }
            }
            return try await eventually {
                try await ids.asyncAllSatisfy { try await queue.show($0).state == .completed }
            }
        }
        events.remove(watcher)
        let seen = await counting.value
        await engine.stop()
        try await store.close()

        #expect(finished, "not every download completed")
        for id in ids {
            #expect(
                seen["download.completed \(id)"] == 1,
                "download \(id) completed \(seen["download.completed \(id)"] ?? 0) times"
            )
            #expect(seen["download.failed \(id)"] == nil, "download \(id) failed")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: target).sorted()
        #expect(names == sources.keys.sorted())
        for name in names {
            #expect(sameBytes(FileManager.default.contents(atPath: target + "/" + name), sources[name]))
        }
    }
}

extension Array where Element: Sendable {
    fileprivate func asyncAllSatisfy(_ predicate: (Element) async throws -> Bool) async rethrows -> Bool {
        for element in self where try await !predicate(element) { return false }
        return true
    }
}
