import Foundation
import SinglecastHTTP
import SinglecastTestServers
import Testing

@testable import SinglecastHTTP

/// The deadline a fetch carries, and the easy handles fetches hand on to each other.
@Suite struct FetchDeadlineTests {
    private static let options = TransferOptions(userAgent: "singlecast-tests")

    @Test func remainingTimeRoundsUpToWholeMilliseconds() {
        let start = ContinuousClock.now
        let deadline = FetchDeadline(.seconds(2), from: start)
        #expect(deadline.remainingMilliseconds(at: start) == 2000)
        #expect(deadline.remainingMilliseconds(at: start.advanced(by: .microseconds(1500))) == 1999)
        #expect(deadline.remainingMilliseconds(at: start.advanced(by: .nanoseconds(1_999_999_999))) == 1)
        #expect(deadline.remainingMilliseconds(at: start.advanced(by: .seconds(2))) == nil)
        #expect(deadline.remainingMilliseconds(at: start.advanced(by: .seconds(3))) == nil)
        #expect(!deadline.hasPassed(at: start.advanced(by: .milliseconds(1999))))
        #expect(deadline.hasPassed(at: start.advanced(by: .seconds(2))))
    }

    /// A libcurl timeout reported a little before the deadline by our clock is still the deadline's; one well before
    /// it (a connect timeout, the low-speed limit) is not.
    @Test func aTimeoutAtTheDeadlineIsItsWithinTheSlack() {
        let start = ContinuousClock.now
        let deadline = FetchDeadline(.seconds(2), from: start)
        #expect(deadline.accountsForTimeout(at: start.advanced(by: .seconds(3))))
        #expect(deadline.accountsForTimeout(at: start.advanced(by: .seconds(2))))
        #expect(deadline.accountsForTimeout(at: start.advanced(by: .milliseconds(1999))))
        #expect(deadline.accountsForTimeout(at: start.advanced(by: .seconds(2) - FetchDeadline.timeoutSlack)))
        #expect(!deadline.accountsForTimeout(at: start.advanced(by: .milliseconds(1900))))
        #expect(!deadline.accountsForTimeout(at: start))
    }

    @Test func itsFailureNamesTheURLWithoutCredentialsAndTheLimit() {
        let error = FetchDeadline(.seconds(120)).failure("https://ada:secret@feeds.example/show.xml")
        #expect(error.code == .timeout)
        #expect(error.message == "https://***@feeds.example/show.xml did not finish within 120 s")
    }

    @Test func aTrickledFeedFailsAtTheDeadline() async throws {
        let server = try FaultServer()
        let started = ContinuousClock.now
        let error = await #expect(throws: TransferError.self) {
            try await withEngine { engine in
                // 2,000 bytes/s for 100,000 bytes: 50 s, well above the low-speed limit, so only the deadline ends it.
                _ = try await engine.fetch(
                    FetchRequest(
                        url: server.url("/slow/100000/2000"),
                        options: Self.options,
                        deadline: FetchDeadline(.milliseconds(700))
                    )
                )
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .timeout)
        #expect(error?.message == "\(server.url("/slow/100000/2000")) did not finish within 0 s")
        #expect(elapsed >= .milliseconds(700) && elapsed < .seconds(10))
    }

    @Test func aDeadlineThatPassedBeforeTheFirstHopSendsNothing() async throws {
        let server = try FaultServer()
        let error = await #expect(throws: TransferError.self) {
            try await withEngine { engine in
                _ = try await engine.fetch(
                    FetchRequest(
                        url: server.url("/file/100"),
                        options: Self.options,
                        deadline: FetchDeadline(.seconds(1), from: .now - .seconds(2))
                    )
                )
            }
        }
        #expect(error?.message.hasSuffix("did not finish within 1 s") == true)
    }

    @Test func aFetchWithinItsDeadlineIsUntouched() async throws {
        let server = try FaultServer()
        let result = try await withEngine { engine in
            try await engine.fetch(
                FetchRequest(
                    url: server.url("/file/1500"),
                    options: Self.options,
                    deadline: FetchDeadline(.seconds(60))
                )
            )
        }
        #expect(result.response.status == 200)
        #expect(sameBytes(result.body, TestContent.data(size: 1500)))
    }
}

@Suite struct EasyHandlePoolTests {
    private static let options = TransferOptions(userAgent: "singlecast-tests")

    private static func fetchRequest() -> TransferRequest {
        var request = TransferRequest(url: "http://feeds.example/a.xml", fileDescriptor: 0)
        request.readsLargeChunks = false
        return request
    }

    @Test func onlyAFetchThatEndedCleanlyKeepsItsHandle() {
        let fetch = Self.fetchRequest()
        #expect(EasyHandlePool.mayKeep(fetch, succeeded: true, cancelled: false, paused: false))
        #expect(!EasyHandlePool.mayKeep(fetch, succeeded: false, cancelled: false, paused: false))
        #expect(!EasyHandlePool.mayKeep(fetch, succeeded: true, cancelled: true, paused: false))
        #expect(!EasyHandlePool.mayKeep(fetch, succeeded: true, cancelled: false, paused: true))
        var retried = fetch
        retried.freshConnection = true
        #expect(!EasyHandlePool.mayKeep(retried, succeeded: true, cancelled: false, paused: false))
        let download = TransferRequest(url: "http://media.example/a.mp3", fileDescriptor: 0)
        #expect(!EasyHandlePool.mayKeep(download, succeeded: true, cancelled: false, paused: false))
    }

    @Test func keepsAtMostItsCapacity() throws {
        let pool = EasyHandlePool(capacity: 2)
        let handles = try (0..<3).map { _ in try #require(pool.take()) }
        for handle in handles { pool.give(handle, keep: true) }
        #expect(pool.idleCount == 2)
        let again = try #require(pool.take())
        #expect(handles.contains(again))
        pool.give(again, keep: false)
        #expect(pool.idleCount == 1)
        pool.drain()
        #expect(pool.idleCount == 0)
    }

    /// A reused handle carries nothing of the fetch before: not its headers, credentials, body or validators.
    @Test func aReusedHandleSendsNothingOfTheFetchBefore() async throws {
        let server = try FaultServer()
        let (first, second) = try await withEngine { engine in
            let first = try await engine.fetch(
                FetchRequest(
                    url: server.url("/echo-headers"),
                    headers: ["X-First: 1"],
                    basicAuthUser: "ada",
                    basicAuthPassword: "secret",
                    ifNoneMatch: "\"v1\"",
                    ifModifiedSince: "Sat, 05 Dec 2026 06:00:00 GMT",
                    options: TransferOptions(userAgent: "first-agent")
                )
            )
            // One fetch at a time: the second takes the first's handle from the pool.
            let second = try await engine.fetch(
                FetchRequest(url: server.url("/echo-headers"), options: TransferOptions(userAgent: "second-agent"))
            )
            return (first, second)
        }
        let before = try JSONDecoder().decode([String: String].self, from: first.body)
        #expect(before["x-first"] == "1")
        #expect(before["authorization"] != nil)
        #expect(before["if-none-match"] == "\"v1\"")
        let after = try JSONDecoder().decode([String: String].self, from: second.body)
        #expect(after["user-agent"] == "second-agent")
        for name in ["x-first", "authorization", "if-none-match", "if-modified-since", "range", "if-range"] {
            #expect(after[name] == nil, "\(name) leaked into the next fetch")
        }
    }

    /// Fetches one after another on one host reuse one connection, and the handles between them.
    @Test func manyFetchesInARowStayCorrect() async throws {
        let nginx = try NginxServer()
        let urls = try (0..<40).map { index in
            try nginx.serve(TestContent.data(size: Int64(500 + index * 37)), as: "feed-\(index).xml")
        }
        let results = try await withEngine { engine in
            var results: [FetchResult] = []
            for url in urls { results.append(try await engine.fetch(FetchRequest(url: url, options: Self.options))) }
            // And conditionally: every one a 304 now.
            for (url, result) in zip(urls, Array(results)) {
                results.append(
                    try await engine.fetch(
                        FetchRequest(url: url, ifNoneMatch: result.response.etag, options: Self.options)
                    )
                )
            }
            return results
        }
        for (index, result) in results.prefix(40).enumerated() {
            #expect(result.response.status == 200)
            #expect(sameBytes(result.body, TestContent.data(size: Int64(500 + index * 37))))
        }
        for result in results.suffix(40) {
            #expect(result.response.status == 304)
            #expect(result.body.isEmpty)
        }
    }
}
