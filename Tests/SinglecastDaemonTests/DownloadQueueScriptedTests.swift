import Foundation
import SinglecastDaemon
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastTestServers
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An engine that writes each URL's bytes from memory into the partial file, as ``HTTPEngine`` would from the network,
/// so the queue's own work (files, store, events, races with commands) is tested in milliseconds. The same
/// behaviours run end to end against nginx and the fault server in DownloadQueueFileTests and the integration tests.
final class ScriptedTransferEngine: TransferEngine {
    /// URLs whose transfer sends `heldAfter` bytes and then waits until it is stopped, like a stalled server.
    let held = Mutex<[String: Int]>([:])
    let bodies: [String: [UInt8]]
    let transfers = Atomic<Int>(0)

    init(bodies: [String: [UInt8]]) { self.bodies = bodies }

    func transfer(
        _ request: TransferRequest,
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async -> TransferOutcome {
        transfers.add(1, ordering: .relaxed)
        guard let body = bodies[request.url] else {
            return .httpError(TransferResponse(status: 404, finalURL: request.url))
        }
        let total = Int64(body.count)
        let stopAt = held.withLock { $0[request.url] }
        let end = min(body.count, stopAt ?? body.count)
        let start = Int(request.resumeOffset)
        if start < end {
            _ = body[start..<end].withUnsafeBytes {
                pwrite(request.fileDescriptor, $0.baseAddress, $0.count, off_t(start))
            }
        }
        let written = Int64(max(start, end))
        progress(TransferProgress(bytesInFile: written, totalLength: total, etag: "\"v1\"", lastModified: nil))
        let answer = TransferResponse(
            status: start > 0 ? 206 : 200,
            finalURL: request.url,
            etag: "\"v1\"",
            totalLength: total
        )
        if stopAt != nil {
            try? await Task.sleep(for: .seconds(3600))
            return .failed(TransferError(code: .cancelled, message: "stopped"), response: answer, bytesInFile: written)
        }
        return .completed(answer, bytesInFile: total)
    }

    func setSpeedLimit(_ bytesPerSecond: Int64?) {}
}

@Suite struct DownloadQueueScriptedTests {
    private func body(_ index: Int, size: Int = 4096) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
    }

    private func makeQueue(
        _ home: TemporaryDirectory,
        _ engine: ScriptedTransferEngine,
        events: EventBus = EventBus(logger: Logger(level: .error))
    ) throws -> (DownloadQueue, Store) {
        let store = try Store(path: home.file("singlecast.sqlite3"))
        let logger = Logger(level: .error)
        var settings = QueueSettings()
        settings.scheduler.maximumConcurrent = 8
        settings.scheduler.maximumPerHost = 8
        let queue = DownloadQueue(
            store: store,
            engine: engine,
            events: events,
            logger: logger,
            settings: settings,
            defaultDirectory: home.file("episodes"),
            distrustUncheckpointedBytes: false
        )
        return (queue, store)
    }

    @Test func twoHundredDownloadsCompleteIntoTheirFilesAndTheStore() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let urls = (0..<200).map { "http://cdn.example/ep\($0).mp3" }
        let engine = ScriptedTransferEngine(
            bodies: Dictionary(uniqueKeysWithValues: urls.enumerated().map { ($1, body($0)) })
        )
        let (queue, store) = try makeQueue(home, engine)
        try await whileRunning(queue) {
            _ = try await queue.enqueue(urls.map { DownloadRequest(url: $0, directory: home.file("episodes")) })
            #expect(try await eventually(every: .milliseconds(1)) { await queue.counts().completed == 200 })
        }
        for (index, url) in urls.enumerated() {
            let file = home.file("episodes/" + String(url.split(separator: "/").last!))
            #expect(sameBytes(FileManager.default.contents(atPath: file), Data(body(index))))
        }
        // Group commits wrote every row as completed.
        #expect(try await store.downloads().allSatisfy { $0.state == .completed && $0.bytesDone == 4096 })
        #expect(engine.transfers.load(ordering: .relaxed) == 200)
    }

    @Test func aPausedTransferKeepsItsBytesAndResumesFromThem() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let url = "http://cdn.example/long.mp3"
        let engine = ScriptedTransferEngine(bodies: [url: body(7, size: 10_000)])
        engine.held.withLock { $0[url] = 6_000 }
        let (queue, store) = try makeQueue(home, engine)
        try await whileRunning(queue) {
            let id = try await queue.enqueue([DownloadRequest(url: url, directory: home.file("episodes"))])[0].id
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(id).bytesDone == 6_000 })
            // The size and validator are learned and saved while it runs.
            #expect(
                try await eventually(every: .milliseconds(1)) { try await store.downloads().first?.etag == "\"v1\"" }
            )
            _ = try await queue.pause(.ids([id]))
            #expect(
                try await eventually(every: .milliseconds(1)) { try await store.downloads().first?.bytesDone == 6_000 }
            )
            #expect(try await queue.show(id).state == .paused)
            engine.held.withLock { $0[url] = nil }
            _ = try await queue.resume(.ids([id]))
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(id).state == .completed })
        }
        #expect(
            sameBytes(FileManager.default.contents(atPath: home.file("episodes/long.mp3")), Data(body(7, size: 10_000)))
        )
        #expect(engine.transfers.load(ordering: .relaxed) == 2)
    }

    @Test func transfersRunningTogetherEachReportProgressAndCheckpointAndEachStopsAlone() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let urls = (0..<3).map { "http://cdn.example/held\($0).mp3" }
        let engine = ScriptedTransferEngine(
            bodies: Dictionary(uniqueKeysWithValues: urls.enumerated().map { ($1, body($0, size: 10_000)) })
        )
        engine.held.withLock { held in
            for url in urls { held[url] = 2_000 }
        }
        let events = EventBus(logger: Logger(level: .error))
        let (subscriber, lines) = events.subscribe()
        events.setTopics([.downloads], for: subscriber)
        let (queue, store) = try makeQueue(home, engine, events: events)
        try await whileRunning(queue) {
            let ids = try await queue.enqueue(urls.map { DownloadRequest(url: $0, directory: home.file("episodes")) })
                .map(\.id)
            // Each one's progress is published, from the timer all running transfers share.
            var progressed: Set<Int64> = []
            for await line in lines {
                let event = try JSONSerialization.jsonObject(with: line) as? [String: Any]
                let params = event?["params"] as? [String: Any]
                let download = params?["download"] as? [String: Any]
                if event?["method"] as? String == "download.progress", let id = download?["id"] as? Int,
                    download?["bytes_done"] as? Int == 2_000
                {
                    progressed.insert(Int64(id))
                }
                if progressed == Set(ids) { break }
            }
            // Each one's validator was saved by a checkpoint of its own.
            #expect(
                try await eventually(every: .milliseconds(1)) {
                    try await store.downloads().filter { $0.etag == "\"v1\"" }.count == 3
                }
            )
            // A pause stops the one transfer it names.
            _ = try await queue.pause(.ids([ids[1]]))
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(ids[1]).state == .paused })
            #expect(try await queue.show(ids[0]).state == .active)
            #expect(try await queue.show(ids[2]).state == .active)
            _ = try await queue.pause(.ids([ids[0], ids[2]]))
            #expect(
                try await eventually(every: .milliseconds(1)) {
                    try await store.downloads().allSatisfy { $0.state == .paused && $0.bytesDone == 2_000 }
                }
            )
        }
        events.remove(subscriber)
    }

    @Test func aCancelledTransferLeavesNeitherRowNorPartialFile() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let url = "http://cdn.example/gone.mp3"
        let engine = ScriptedTransferEngine(bodies: [url: body(3)])
        engine.held.withLock { $0[url] = 1_000 }
        let (queue, store) = try makeQueue(home, engine)
        try await whileRunning(queue) {
            let id = try await queue.enqueue([DownloadRequest(url: url, directory: home.file("episodes"))])[0].id
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(id).bytesDone == 1_000 })
            _ = try await queue.cancel([id], deletePartial: true)
            #expect(try await eventually(every: .milliseconds(1)) { try await store.downloads().isEmpty })
            await #expect(throws: DownloadQueueError.self) { try await queue.show(id) }
        }
        #expect(!FileManager.default.fileExists(atPath: home.file("episodes/gone.mp3.part")))
        #expect(!FileManager.default.fileExists(atPath: home.file("episodes/gone.mp3")))
    }

    @Test func aNotFoundFailsWithItsStatusAndLeavesNoEmptyPartialFile() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let (queue, _) = try makeQueue(home, ScriptedTransferEngine(bodies: [:]))
        try await whileRunning(queue) {
            let id = try await queue.enqueue([
                DownloadRequest(url: "http://cdn.example/missing.mp3", directory: home.file("episodes"))
            ])[0].id
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(id).state == .failed })
            #expect(try await queue.show(id).record.errorHTTPStatus == 404)
            _ = try await queue.clear([.failed], deletePartial: false)
        }
        #expect(!FileManager.default.fileExists(atPath: home.file("episodes/missing.mp3.part")))
    }

    @Test func anHTMLPageSavedAsMP3FailsAsNotMediaAndLeavesNothingBehind() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let page = "<!DOCTYPE html>\n<html><head><title>Not Found</title></head><body>Gone</body></html>\n"
        let urls = ["http://cdn.example/page.mp3", "http://cdn.example/real.mp3", "http://cdn.example/page.pdf"]
        let engine = ScriptedTransferEngine(bodies: [
            urls[0]: Array(page.utf8), urls[1]: Array(TestContent.mp3(count: 4096)), urls[2]: Array(page.utf8),
        ])
        let (queue, _) = try makeQueue(home, engine)
        try await whileRunning(queue) {
            let ids = try await queue.enqueue(urls.map { DownloadRequest(url: $0, directory: home.file("dl")) }).map(
                \.id
            )
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(ids[0]).state == .failed })
            let failed = try await queue.show(ids[0])
            #expect(failed.record.errorCode == "not_media")
            #expect(failed.record.errorMessage == "announced .mp3 but received an HTML page (text/html)")
            #expect(failed.record.nextAttemptAt == nil)
            #expect(failed.bytesDone == 0)
            // Media arrived, and nothing media-like was announced for the PDF: both complete.
            for id in ids.dropFirst() {
                #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(id).state == .completed })
            }
            #expect(engine.transfers.load(ordering: .relaxed) == 3, "a not_media failure is not retried by itself")
            // The user's retry asks the server again (here it answers with the same page).
            _ = try await queue.retry(.ids([ids[0]]))
            #expect(try await eventually(every: .milliseconds(1)) { engine.transfers.load(ordering: .relaxed) == 4 })
            #expect(try await eventually(every: .milliseconds(1)) { try await queue.show(ids[0]).state == .failed })
            #expect(try await queue.show(ids[0]).attempts == 1)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: home.file("dl")).sorted()
        #expect(names == ["page.pdf", "real.mp3"], "neither the page's final file nor its partial file is left")
    }

    /// Two episodes of one podcast in `store`, for downloads to be linked to.
    private func twoEpisodes(_ store: Store) async throws -> [EpisodeRecord] {
        let (podcast, _) = try await store.insertPodcast(
            PodcastRecord(feedURL: "https://feeds.example/a", subscribedAt: 1)
        )
        let ids = try await store.applyRefresh(podcast) { apply in
            try apply(
                ["kept", "gone"].map { EpisodeRecord(podcastID: podcast.id, identity: $0, title: $0, firstSeenAt: 1) }
            )
        }
        return try await store.episodes(ids: ids)
    }

    @Test func aRefusedDisposalKeepsItsDownloadAndOnlyWhatWentIsForgotten() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let urls = ["http://cdn.example/changed.mp3", "http://cdn.example/plain.mp3"]
        let engine = ScriptedTransferEngine(bodies: [urls[0]: body(1), urls[1]: body(2)])
        let (queue, store) = try makeQueue(home, engine)
        let episodes = try await twoEpisodes(store)
        let ids = try await whileRunning(queue) {
            let ids = try await queue.enqueue(
                zip(urls, episodes).map { DownloadRequest(url: $0, directory: home.file("episodes"), episode: $1.id) }
            )
            .map(\.id)
            #expect(try await eventually(every: .milliseconds(1)) { await queue.counts().completed == 2 })
            return ids
        }
        // A hook (or the user) changed the first file after it completed: it is no longer what the queue wrote.
        let changed = home.file("episodes/changed.mp3")
        let handle = try #require(FileHandle(forWritingAtPath: changed))
        handle.seekToEndOfFile()
        handle.write(Data("tag".utf8))
        try handle.close()

        let discarded = try await queue.discard(ids, deleteFiles: true, reason: "deleted on request")
        #expect(discarded.deleted.map(\.path) == [home.file("episodes/plain.mp3")])
        #expect(Array(discarded.refused.keys) == [ids[0]])
        // The refused file is still the queue's: its row, its listing and its episode's link stay.
        #expect(FileManager.default.fileExists(atPath: changed))
        #expect(await queue.completedDownloads()[ids[0]] != nil)
        #expect(try await store.downloads().map(\.id) == [ids[0]])
        let linked = try await store.episodes(ids: episodes.map(\.id))
        #expect(linked.first { $0.id == episodes[0].id }?.downloadID == ids[0])
        // The one that went took its episode's link with it, in the same transaction.
        let released = try #require(linked.first { $0.id == episodes[1].id })
        #expect(released.downloadID == nil)
        #expect(released.fileDeletedAt != nil)
    }

    @Test func startUpReleasesEpisodesLinkedToDownloadsThatNoLongerExist() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-scripted")
        let (queue, store) = try makeQueue(home, ScriptedTransferEngine(bodies: [:]))
        let episodes = try await twoEpisodes(store)
        // A crash left the first episode pointing at a download whose row is gone.
        try await store.setEpisodeDownloads([(episodes[0].id, 99)])
        try await queue.recover()
        let repaired = try await store.episodes(ids: [episodes[0].id])
        #expect(repaired.first?.downloadID == nil)
        #expect(repaired.first?.fileDeletedAt != nil, "released as deleted, so no policy fetches it again by itself")
    }
}
