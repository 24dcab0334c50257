import Foundation
import SinglecastHTTP
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Cancellation, stopping, request validation and a full disk.
@Suite struct EngineLifecycleTests {
    @Test(.timeLimit(.minutes(1)))
    func cancellingTheTaskEndsTheTransfer() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let progress = ProgressLog()

        let outcome = try await withEngine { engine in
            // 1000 bytes/s for 10 MB: finishing on its own would take hours.
            let request = file.request(server.url("/slow/10000000/1000"))
            let task = Task { await engine.transfer(request, progress: progress.callback) }
            while progress.all.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            task.cancel()
            return await task.value
        }

        guard case .failed(let error, let response, let valid) = outcome else {
            Issue.record("expected cancellation, got \(Ending(outcome))")
            return
        }
        #expect(error.code == .cancelled)
        #expect(response?.status == 200)
        #expect(valid > 0)
        #expect(sameBytes(file.contents, TestContent.data(size: valid)))
    }

    @Test func cancellingBeforeTheTransferStartsWritesNothing() async throws {
        let file = try TestFile()
        let outcome = try await withEngine { engine in
            let request = file.request("http://127.0.0.1:9/never")
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await engine.transfer(request, progress: { _ in })
            }
            return await task.value
        }
        #expect(Ending(outcome) == .failed(.cancelled, bytesInFile: 0))
    }

    @Test(.timeLimit(.minutes(1)))
    func stoppingTheEngineCancelsRunningTransfers() async throws {
        let server = try FaultServer()
        let directory = try TemporaryDirectory()
        let files = try (0..<3).map { try TestFile("slow\($0).part", in: directory) }
        let engine = try HTTPEngine()
        engine.start()
        let started = ProgressLog()

        let outcomes = await withTaskGroup(of: TransferOutcome.self) { group in
            for file in files {
                let request = file.request(server.url("/slow/10000000/2000"))
                group.addTask { await engine.transfer(request, progress: started.callback) }
            }
            while started.all.count < 3 { try? await Task.sleep(for: .milliseconds(20)) }
            await engine.stop()
            var outcomes: [TransferOutcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }

        #expect(outcomes.count == 3)
        #expect(outcomes.allSatisfy { $0.error?.code == .cancelled })
        let late = await engine.transfer(files[0].request(server.url("/file/10")), progress: { _ in })
        #expect(late.error?.code == .cancelled, "a stopped engine refuses new transfers")
        await engine.stop()  // idempotent
    }

    @Test func transfersQueuedBeforeStartRunOnceStarted() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let engine = try HTTPEngine()
        let request = file.request(server.url("/file/1234"))
        async let outcome = engine.transfer(request, progress: { _ in })
        try await Task.sleep(for: .milliseconds(50))
        engine.start()
        #expect(Ending(await outcome) == .completed(status: 200, resumed: false, bytesInFile: 1234))
        await engine.stop()
    }

    @Test func stoppingAnEngineThatNeverStartedCompletesQueuedTransfers() async throws {
        let file = try TestFile()
        let engine = try HTTPEngine()
        let request = file.request("http://127.0.0.1:9/never")
        async let outcome = engine.transfer(request, progress: { _ in })
        try await Task.sleep(for: .milliseconds(50))
        await engine.stop()
        #expect(Ending(await outcome) == .failed(.cancelled, bytesInFile: 0))
    }

    @Test(arguments: [
        ("ftp://example.com/a.mp3", TransferError.Code.schemeNotAllowed),
        ("file:///etc/passwd", .schemeNotAllowed),
        ("example.com/a.mp3", .invalidURL),
        ("http://exa mple.com/a.mp3", .invalidURL),
    ])
    func unusableURLsAreRefused(url: String, code: TransferError.Code) async throws {
        let file = try TestFile()
        let outcome = try await withEngine { await $0.transfer(file.request(url), progress: { _ in }) }
        #expect(outcome.error?.code == code, "\(String(describing: outcome.error))")
    }

    @Test func headerInjectionIsRefused() async throws {
        let file = try TestFile()
        var request = file.request("http://127.0.0.1:9/x")
        request.headers = ["X-A: 1\r\nX-B: 2"]
        let outcome = try await withEngine { await $0.transfer(request, progress: { _ in }) }
        #expect(outcome.error?.code == .invalidRequest)
    }

    @Test func credentialsNeverAppearInMessages() async throws {
        let file = try TestFile()
        let outcome = try await withEngine {
            await $0.transfer(file.request("ftp://user:hunter2@example.com/a.mp3"), progress: { _ in })
        }
        let message = try #require(outcome.error?.message)
        #expect(!message.contains("hunter2"))
        #expect(message.contains("ftp://***@example.com/a.mp3"))
    }

    @Test func fullDiskIsReportedAsSuch() async throws {
        guard geteuid() == 0 else { try Test.cancel("mounting a small tmpfs needs root") }
        let nginx = try NginxServer()
        let url = try nginx.serve(TestContent.data(size: 4 << 20), as: "big.mp3")
        let directory = try TemporaryDirectory(prefix: "singlecast-enospc")
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.path]
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else {
            try Test.cancel("mount -t tmpfs failed (no CAP_SYS_ADMIN in this container?)")
        }
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [directory.path]
            try? unmount.run()
            unmount.waitUntilExit()
        }
        let outcome: TransferOutcome
        do {
            let file = try TestFile("full.part", in: directory)
            outcome = try await withEngine { await $0.transfer(file.request(url), progress: { _ in }) }
            guard case .failed(let error, _, let valid) = outcome else {
                Issue.record("expected a full disk, got \(Ending(outcome))")
                return
            }
            #expect(error.code == .diskFull)
            #expect(error.systemErrno == ENOSPC)
            #expect(error.message.contains("disk is full"))
            #expect(error.message.contains(file.path), "the message says where: \(error.message)")
            #expect(valid > 0 && valid <= 1 << 20)
            #expect(sameBytes(file.contents.prefix(Int(valid)), TestContent.data(size: valid)))
        }
    }
}
