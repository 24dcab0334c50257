import Foundation
import SinglecastHTTP
import SinglecastTestServers
import Testing

/// Transfers from a real nginx: complete files, resumes with `If-Range`, concurrency and the speed limit.
@Suite struct NginxTransferTests {
    @Test func smallFileCompletesWithTheRightBytes() async throws {
        let nginx = try NginxServer()
        let expected = TestContent.data(size: 1 << 20)
        let url = try nginx.serve(expected, as: "one.mp3")
        let file = try TestFile()
        let progress = ProgressLog()

        let outcome = try await withEngine { await $0.transfer(file.request(url), progress: progress.callback) }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: 1 << 20))
        #expect(sameBytes(file.contents, expected))
        let response = try #require(outcome.response)
        #expect(response.etag?.hasPrefix("\"") == true)
        #expect(response.lastModified != nil)
        #expect(response.contentLength == 1 << 20)
        #expect(response.totalLength == 1 << 20)
        #expect(response.finalURL == url)
        #expect(
            progress.all.last
                == TransferProgress(
                    bytesInFile: 1 << 20,
                    totalLength: 1 << 20,
                    etag: response.etag,
                    lastModified: response.lastModified
                )
        )
    }

    @Test func largeFileCompletesWithTheRightBytes() async throws {
        let nginx = try NginxServer()
        let size: Int64 = 64 << 20
        let expected = TestContent.data(size: size)
        let url = try nginx.serve(expected, as: "large.mp3")
        let file = try TestFile()
        let progress = ProgressLog()

        let start = ContinuousClock.now
        let outcome = try await withEngine { await $0.transfer(file.request(url), progress: progress.callback) }
        let elapsed = seconds(since: start)

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: size))
        #expect(sameBytes(file.contents, expected))
        let reports = progress.all
        #expect(reports.count >= 1)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesInFile <= $1.bytesInFile })
        #expect(reports.count <= Int(elapsed * 10) + 2, "at most one report per 100 ms, plus the final one")
        #expect(reports.last?.bytesInFile == size)
        #expect(reports.last?.totalLength == size)
        #expect(reports.last?.etag != nil, "progress carries the validators for crash-safe resume")
        print(
            "64 MiB from nginx over loopback: \(String(format: "%.3f", elapsed)) s, "
                + "\(String(format: "%.0f", Double(size) / elapsed / 1e6)) MB/s, \(reports.count) progress reports"
        )
    }

    @Test func resumeWithTheETagAppendsTheRest() async throws {
        let nginx = try NginxServer()
        let size: Int64 = 3 << 20
        let expected = TestContent.data(size: size)
        let url = try nginx.serve(expected, as: "resume.mp3")
        let file = try TestFile()
        let etag = try await withEngine { engine in
            // Learn the validator the way the daemon would: from a first (here complete) response.
            let first = await engine.transfer(file.request(url), progress: { _ in })
            return try #require(first.response?.etag)
        }
        let half = size / 2
        try file.write(expected.prefix(Int(half)))

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(url, resumeOffset: half, etag: etag, expectedTotal: size),
                progress: { _ in }
            )
        }

        #expect(Ending(outcome) == .completed(status: 206, resumed: true, bytesInFile: size))
        #expect(outcome.response?.totalLength == size)
        #expect(outcome.response?.contentLength == size - half)
        #expect(sameBytes(file.contents, expected))
    }

    @Test func resumeWithAStaleValidatorRewritesFromZero() async throws {
        let nginx = try NginxServer()
        let size: Int64 = 2 << 20
        let expected = TestContent.data(size: size)
        let url = try nginx.serve(expected, as: "changed.mp3")
        let file = try TestFile()
        // The first half of some *other* file: it must not survive.
        try file.write(TestContent.data(size: size / 2, seed: 99))

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(url, resumeOffset: size / 2, etag: "\"bogus-etag\""),
                progress: { _ in }
            )
        }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: size))
        #expect(sameBytes(file.contents, expected))
    }

    @Test func resumePastTheEndIsRangeNotSatisfiable() async throws {
        let nginx = try NginxServer()
        let expected = TestContent.data(size: 1000)
        let url = try nginx.serve(expected, as: "done.mp3")
        let file = try TestFile()
        try file.write(expected)

        let outcome = try await withEngine {
            await $0.transfer(file.request(url, resumeOffset: 1000), progress: { _ in })
        }

        #expect(Ending(outcome) == .rangeNotSatisfiable)
        #expect(outcome.response?.totalLength == 1000, "416 carries Content-Range: bytes */1000")
        #expect(sameBytes(file.contents, expected))
    }

    @Test func eightConcurrentTransfersComplete() async throws {
        let nginx = try NginxServer()
        let directory = try TemporaryDirectory(prefix: "singlecast-http-test")
        let sizes: [Int64] = (0..<8).map { Int64($0 + 1) * 512 * 1024 + Int64($0) }
        var urls: [String] = []
        for (index, size) in sizes.enumerated() {
            urls.append(try nginx.serve(TestContent.data(size: size, seed: index), as: "file\(index).mp3"))
        }
        let files = try (0..<8).map { try TestFile("file\($0).part", in: directory) }

        let endings = try await withEngine { engine in
            await withTaskGroup(of: (Int, Ending).self) { group in
                for index in 0..<8 {
                    let request = files[index].request(urls[index])
                    group.addTask { (index, Ending(await engine.transfer(request, progress: { _ in }))) }
                }
                var endings: [Int: Ending] = [:]
                for await (index, ending) in group { endings[index] = ending }
                return endings
            }
        }

        for index in 0..<8 {
            #expect(endings[index] == .completed(status: 200, resumed: false, bytesInFile: sizes[index]))
            #expect(sameBytes(files[index].contents, TestContent.data(size: sizes[index], seed: index)))
        }
    }

    @Test func speedLimitSlowsTheTransferDown() async throws {
        let nginx = try NginxServer()
        let size: Int64 = 3 << 20
        let url = try nginx.serve(TestContent.data(size: size), as: "limited.mp3")
        let file = try TestFile()

        let start = ContinuousClock.now
        let outcome = try await withEngine { engine in
            engine.setSpeedLimit(1 << 20)
            return await engine.transfer(file.request(url), progress: { _ in })
        }
        let elapsed = seconds(since: start)

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: size))
        // Lower bound only: 3 MiB at 1 MiB/s is 3 s, minus what the first chunks take before the limit applies.
        #expect(elapsed >= 1.9, "took \(elapsed) s")
        print("3 MiB at a 1 MiB/s limit: \(String(format: "%.2f", elapsed)) s")
    }

    @Test func speedLimitChangesApplyToARunningTransfer() async throws {
        let nginx = try NginxServer()
        let size: Int64 = 4 << 20
        let url = try nginx.serve(TestContent.data(size: size), as: "relimited.mp3")
        let file = try TestFile()
        let progress = ProgressLog()

        let start = ContinuousClock.now
        let outcome = try await withEngine { engine in
            engine.setSpeedLimit(256 * 1024)
            async let result = engine.transfer(file.request(url), progress: progress.callback)
            try await Task.sleep(for: .seconds(1))
            engine.setSpeedLimit(nil)  // lifted mid-transfer: the rest goes at full speed
            return await result
        }
        let elapsed = seconds(since: start)

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: size))
        #expect(elapsed >= 0.9)
        #expect(progress.all.contains { $0.bytesInFile < size }, "the limit held the transfer back at first")
        print("4 MiB, 256 KiB/s lifted after 1 s: \(String(format: "%.2f", elapsed)) s")
    }
}
