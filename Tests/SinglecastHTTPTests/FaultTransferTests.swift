import Foundation
import SinglecastHTTP
import SinglecastTestServers
import Synchronization
import Testing

/// Transfers from the misbehaving python server: every way a download can go wrong.
@Suite struct FaultTransferTests {
    @Test func droppedConnectionResumesToACompleteFile() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let url = server.url("/drop/200000/70000")

        let (first, second) = try await withEngine { engine in
            let first = await engine.transfer(file.request(url), progress: { _ in })
            guard case .failed(_, let response, let valid) = first, let etag = response?.etag else {
                return (first, first)
            }
            let second = await engine.transfer(
                file.request(url, resumeOffset: valid, etag: etag, expectedTotal: response?.totalLength),
                progress: { _ in }
            )
            return (first, second)
        }

        #expect(Ending(first) == .failed(.network, bytesInFile: 70000))
        #expect(
            first.error?.message.contains("after 70000 of 200000 bytes") == true,
            "\(String(describing: first.error))"
        )
        #expect(Ending(second) == .completed(status: 206, resumed: true, bytesInFile: 200_000))
        #expect(sameBytes(file.contents, TestContent.data(size: 200_000)))
    }

    /// Writes report progress at most every 100 ms; a server that sends a burst and then nothing must not leave the
    /// burst's last bytes unreported for as long as it stays silent.
    @Test func theLastBytesOfABurstAreReportedWhileTheServerIsSilent() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        final class Reported: Sendable { let bytes = Mutex<Int64>(0) }
        let reported = Reported()
        // What was reported while the server stayed silent: the transfer's end reports its bytes anyway.
        let whileSilent = try await withEngine { engine in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = await engine.transfer(file.request(server.url("/stall/5000000/200000"))) { progress in
                        reported.bytes.withLock { $0 = progress.bytesInFile }
                    }
                }
                defer { group.cancelAll() }
                // Only the time after the burst's first bytes counts: before them the transfer may wait for a thread
                // of the cooperative pool, which other tests' set-up (a fault server's start blocks one until python
                // prints its port) held for more than 10 s under load, and the test then failed with nothing sent.
                let started = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < started, reported.bytes.withLock({ $0 }) == 0 {
                    try? await Task.sleep(for: .milliseconds(50))
                }
                let deadline = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < deadline, reported.bytes.withLock({ $0 }) != 200_000 {
                    try? await Task.sleep(for: .milliseconds(50))
                }
                return reported.bytes.withLock { $0 }
            }
        }
        #expect(whileSilent == 200_000)
        #expect(sameBytes(file.contents, TestContent.data(size: 200_000)))
    }

    @Test func serverIgnoringRangeRestartsFromZero() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        try file.write(TestContent.data(size: 5000, seed: 42))  // must be replaced, not kept

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/ignore-range/20000"), resumeOffset: 5000), progress: { _ in })
        }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: 20000))
        #expect(sameBytes(file.contents, TestContent.data(size: 20000)))
    }

    @Test func changedETagRewritesTheWholeFile() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let url = server.url("/etag-changes/30000")

        let (first, second) = try await withEngine { engine in
            let first = await engine.transfer(file.request(url), progress: { _ in })
            // Pretend the first attempt broke at 10000 bytes and resume with its ETag.
            ftruncate(file.descriptor, 10000)
            let second = await engine.transfer(
                file.request(url, resumeOffset: 10000, etag: first.response?.etag, expectedTotal: 30000),
                progress: { _ in }
            )
            return (first, second)
        }

        #expect(Ending(first) == .completed(status: 200, resumed: false, bytesInFile: 30000))
        #expect(Ending(second) == .completed(status: 200, resumed: false, bytesInFile: 30000))
        let etag = try #require(second.response?.etag)
        #expect(etag != first.response?.etag)
        let seed = try #require(Int(etag.dropFirst(2).dropLast()))  // "v<n>"
        #expect(sameBytes(file.contents, TestContent.data(size: 30000, seed: seed)))
    }

    @Test func wrongRangeLeavesTheFileUntouched() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let prefix = TestContent.data(size: 4000)
        try file.write(prefix)

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/wrong-range/10000"), resumeOffset: 4000), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.rangeMismatch, bytesInFile: 4000))
        #expect(outcome.response?.status == 206)
        #expect(sameBytes(file.contents, prefix), "not a byte written past, or over, the valid prefix")
        #expect(outcome.error?.message.contains("2000") == true, "\(String(describing: outcome.error))")
    }

    @Test func changedTotalIsARangeMismatch() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let prefix = TestContent.data(size: 4000)
        try file.write(prefix)

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(server.url("/wrong-total/10000"), resumeOffset: 4000, expectedTotal: 10000),
                progress: { _ in }
            )
        }

        #expect(Ending(outcome) == .failed(.rangeMismatch, bytesInFile: 4000))
        #expect(sameBytes(file.contents, prefix))
    }

    @Test(arguments: [404, 410, 503])
    func errorStatusesWriteNothingAndKeepRetryAfter(status: Int) async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let prefix = TestContent.data(size: 100)
        try file.write(prefix)

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(server.url("/status/\(status)?retry_after=3"), resumeOffset: 100),
                progress: { _ in }
            )
        }

        #expect(Ending(outcome) == .httpError(status))
        #expect(outcome.response?.retryAfter == "3")
        #expect(sameBytes(file.contents, prefix), "the error page was not written")
    }

    @Test func redirectsAreFollowedAndTheirBodiesSkipped() async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/redirect/3/file/5000")), progress: { _ in })
        }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: 5000))
        #expect(outcome.response?.finalURL == server.url("/file/5000"))
        #expect(outcome.response?.etag == "\"file-5000\"", "the hops' ETag does not leak into the final response")
        #expect(sameBytes(file.contents, TestContent.data(size: 5000)))
    }

    @Test func redirectLoopIsTooManyRedirects() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        var options = TransferOptions()
        options.maxRedirects = 5

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/redirect-loop"), options: options), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.tooManyRedirects, bytesInFile: 0))
        #expect(file.size == 0)
    }

    @Test func redirectToAFileURLIsRefused() async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/redirect-to?url=file:///etc/passwd")), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.schemeNotAllowed, bytesInFile: 0))
        #expect(outcome.error?.message.contains("'file'") == true, "\(String(describing: outcome.error))")
        #expect(file.size == 0)
    }

    @Test func plainHTTPIsRefusedWhenHTTPSIsRequired() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        var options = TransferOptions()
        options.requireHTTPS = true

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/file/100"), options: options), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.schemeNotAllowed, bytesInFile: 0))
        #expect(outcome.error?.message.contains("HTTPS is required") == true, "\(String(describing: outcome.error))")
    }

    @Test func bodyShorterThanItsLengthFailsWithWhatArrived() async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/lie/3000/9000")), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.network, bytesInFile: 3000))
        #expect(
            outcome.error?.message.contains("after 3000 of 9000 bytes") == true,
            "\(String(describing: outcome.error))"
        )
        #expect(sameBytes(file.contents, TestContent.data(size: 3000)))
    }

    @Test func stalledServerTimesOut() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        var options = TransferOptions()
        options.lowSpeedLimit = 1024
        options.lowSpeedTime = .seconds(1)

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/slow/100000/100"), options: options), progress: { _ in })
        }

        guard case .failed(let error, _, let valid) = outcome else {
            Issue.record("expected a timeout, got \(Ending(outcome))")
            return
        }
        #expect(error.code == .timeout)
        #expect(error.message.contains("stalled"), "\(error)")
        #expect(file.size == valid)
        #expect(sameBytes(file.contents, TestContent.data(size: valid)))
    }

    @Test(arguments: ["", "?close=1"])
    func bodyWithoutLengthOverTheMaximumIsTooLarge(query: String) async throws {
        let server = try FaultServer()
        let file = try TestFile()
        var options = TransferOptions()
        options.maxFileSize = 100_000

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(server.url("/no-length/1000000\(query)"), options: options),
                progress: { _ in }
            )
        }

        guard case .failed(let error, _, let valid) = outcome else {
            Issue.record("expected too large, got \(Ending(outcome))")
            return
        }
        #expect(error.code == .tooLarge)
        #expect(valid <= 100_000)
        #expect(file.size <= 100_000)
    }

    @Test(arguments: ["", "?close=1"])
    func bodyWithoutLengthCompletes(query: String) async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/no-length/300000\(query)")), progress: { _ in })
        }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: 300_000))
        #expect(outcome.response?.totalLength == nil)
        #expect(sameBytes(file.contents, TestContent.data(size: 300_000)))
    }

    @Test func announcedSizeOverTheMaximumIsTooLargeBeforeTheBody() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        var options = TransferOptions()
        options.maxFileSize = 1000

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/file/5000"), options: options), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.tooLarge, bytesInFile: 0))
        #expect(outcome.error?.message.contains("5000 bytes") == true, "\(String(describing: outcome.error))")
        #expect(file.size == 0)
    }

    @Test func requestHeadersCarryTheAgentTheRangeAndTheValidator() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        var options = TransferOptions()
        options.userAgent = "singlecast/9.9"

        let (fresh, resumed) = try await withEngine { engine in
            var request = file.request(server.url("/echo-headers"), options: options)
            request.headers = ["X-Test: yes"]
            _ = await engine.transfer(request, progress: { _ in })
            let fresh = file.contents
            request.resumeOffset = 1
            request.etag = "\"abc\""
            ftruncate(file.descriptor, 0)
            _ = await engine.transfer(request, progress: { _ in })
            return (fresh, file.contents)
        }

        let freshHeaders = try JSONDecoder().decode([String: String].self, from: fresh)
        #expect(freshHeaders["user-agent"] == "singlecast/9.9")
        #expect(freshHeaders["x-test"] == "yes")
        #expect(freshHeaders["range"] == nil, "no Range without a resume offset")
        #expect(freshHeaders["if-range"] == nil)
        #expect(freshHeaders["accept-encoding"] == nil, "bytes on disk must be the file, never a compressed form")
        // The server ignores the range for /echo-headers and answers 200, so the file was rewritten from zero.
        let resumedHeaders = try JSONDecoder().decode([String: String].self, from: resumed)
        #expect(resumedHeaders["range"] == "bytes=1-")
        #expect(resumedHeaders["if-range"] == "\"abc\"")
    }

    @Test func basicAuthenticationIsSent() async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let (denied, allowed) = try await withEngine { engine in
            let url = server.url("/basic-auth/alice/s3cret/1000")
            let denied = await engine.transfer(file.request(url), progress: { _ in })
            var request = file.request(url)
            request.basicAuthUser = "alice"
            request.basicAuthPassword = "s3cret"
            let allowed = await engine.transfer(request, progress: { _ in })
            return (denied, allowed)
        }

        #expect(Ending(denied) == .httpError(401))
        #expect(Ending(allowed) == .completed(status: 200, resumed: false, bytesInFile: 1000))
        #expect(sameBytes(file.contents, TestContent.data(size: 1000)))
    }

    @Test func connectionRefusedIsANetworkError() async throws {
        let port: Int
        do {
            let server = try FaultServer()
            port = server.port
        }  // stopped: nothing listens there now
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request("http://127.0.0.1:\(port)/file/10"), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.network, bytesInFile: 0))
    }

    /// A server that sends more bytes than its Content-Length leaves them on the keep-alive connection, where the
    /// next request reads them instead of a status line ("Received HTTP/0.9"); the engine retries that request once
    /// on a fresh connection instead of failing it.
    @Test func garbageLeftOnAReusedConnectionIsRetriedOnAFreshOne() async throws {
        let server = try FaultServer()
        let first = try TestFile("first.part")
        let second = try TestFile("second.part")

        let (overflowing, next) = try await withEngine { engine in
            let overflowing = await engine.transfer(first.request(server.url("/overflow/1000/64")), progress: { _ in })
            try await Task.sleep(for: .milliseconds(500))  // the extra bytes are waiting on the cached connection
            let next = await engine.transfer(second.request(server.url("/file/2000")), progress: { _ in })
            return (overflowing, next)
        }

        #expect(Ending(overflowing) == .completed(status: 200, resumed: false, bytesInFile: 1000))
        #expect(
            Ending(next) == .completed(status: 200, resumed: false, bytesInFile: 2000),
            "\(String(describing: next.error))"
        )
        #expect(sameBytes(second.contents, TestContent.data(size: 2000)))
    }

    // MARK: Servers that lie about ranges, sizes and validators

    @Test func aContentRangeEndingAtInt64MaxIsARangeMismatch() async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/huge-range/5000")), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.rangeMismatch, bytesInFile: 0))
        #expect(file.size == 0)
    }

    @Test func aNegativeTotalOnA416IsNoSize() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        try file.write(TestContent.data(size: 4000))

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(server.url("/unsatisfiable/10000/4000/-9223372036854775808"), resumeOffset: 4000),
                progress: { _ in }
            )
        }

        #expect(Ending(outcome) == .rangeNotSatisfiable)
        #expect(outcome.response?.totalLength == nil)
        #expect(sameBytes(file.contents, TestContent.data(size: 4000)))
    }

    /// Version A broke off at 8000; the server answers the resume from version B whatever `If-Range` says.
    @Test(arguments: ["etag", "lastmod"])
    func aPartialResponseOfAnotherVersionIsNeverAppended(mode: String) async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let url = server.url("/swap/\(mode)/20000/20000/8000/\(UUID().uuidString)")

        let (first, second) = try await withEngine { engine in
            let first = await engine.transfer(file.request(url), progress: { _ in })
            let second = await engine.transfer(
                file.request(
                    url,
                    resumeOffset: 8000,
                    etag: first.response?.etag,
                    lastModified: first.response?.lastModified,
                    expectedTotal: 20000
                ),
                progress: { _ in }
            )
            return (first, second)
        }

        #expect(Ending(first) == .failed(.network, bytesInFile: 8000))
        #expect(Ending(second) == .failed(.rangeMismatch, bytesInFile: 8000))
        #expect(second.error?.message.contains("changed") == true, "\(String(describing: second.error))")
        #expect(sameBytes(file.contents, TestContent.data(size: 8000)), "version A's bytes, and nothing of B")
    }

    /// An older version stored validators with a bare CR; such a resume starts over instead of failing for good.
    @Test func aStoredValidatorWithACRRestartsTheResume() async throws {
        let server = try FaultServer()
        let file = try TestFile()
        try file.write(TestContent.data(size: 100))

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(server.url("/file/1000"), resumeOffset: 100, etag: "\"a\rb\""),
                progress: { _ in }
            )
        }

        #expect(Ending(outcome) == .failed(.rangeMismatch, bytesInFile: 100))
        #expect(outcome.error?.code.retryClass == .immediately)
    }

    /// libcurl reads the last of two `Content-Length` fields, and none under chunked coding: the response must say
    /// the same, or the daemon calls a whole file a "length mismatch".
    @Test(arguments: [("/two-lengths/1000/500", 1000 as Int64?), ("/chunked-length/1000/5", nil)])
    func contentLengthAsLibcurlReadsIt(path: String, length: Int64?) async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine { await $0.transfer(file.request(server.url(path)), progress: { _ in }) }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: 1000))
        #expect(outcome.response?.contentLength == length)
        #expect(outcome.response?.totalLength == length)
        #expect(sameBytes(file.contents, TestContent.data(size: 1000)))
    }

    /// A validator with a bare CR could never be sent back as `If-Range`: it is refused, never handed on.
    @Test(arguments: ["etag", "last-modified"])
    func aValidatorWithABareCRIsRefused(field: String) async throws {
        let server = try FaultServer()
        let file = try TestFile()
        let log = ProgressLog()

        let outcome = try await withEngine {
            await $0.transfer(
                file.request(server.url("/cr-validator/\(field)/1000/1000/\(UUID().uuidString)")),
                progress: log.callback
            )
        }

        #expect(Ending(outcome) == .completed(status: 200, resumed: false, bytesInFile: 1000))
        #expect(outcome.response?.etag == nil)
        #expect(outcome.response?.lastModified == nil)
        #expect(log.all.allSatisfy { $0.etag == nil && $0.lastModified == nil })
    }

    // MARK: Errors that name their cause

    /// libcurl calls each of these an unsupported protocol; they are broken responses, not refused schemes.
    @Test(arguments: 0..<5)
    func aGarbageStatusLineIsAProtocolError(which: Int) async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine {
            await $0.transfer(file.request(server.url("/garbage-status/\(which)")), progress: { _ in })
        }

        #expect(Ending(outcome) == .failed(.protocolError, bytesInFile: 0), "\(String(describing: outcome.error))")
        #expect(outcome.error?.message.contains("http and https") == false)
    }

    /// One header line over libcurl's limit (100 KB) is "Out of memory" to libcurl: headers without end, not a
    /// shortage of memory worth ten more attempts.
    @Test(arguments: ["/huge-header/1000000", "/huge-location/1000000"])
    func aHeaderLineOfAMegabyteIsHeadersTooLarge(path: String) async throws {
        let server = try FaultServer()
        let file = try TestFile()

        let outcome = try await withEngine { await $0.transfer(file.request(server.url(path)), progress: { _ in }) }

        #expect(Ending(outcome) == .failed(.headersTooLarge, bytesInFile: 0), "\(String(describing: outcome.error))")
        #expect(outcome.error?.message.contains("memory") == false, "\(String(describing: outcome.error))")
    }

    /// A fetch is never resumed, so its failure must not say that the next attempt resumes.
    @Test func aStalledFetchDoesNotPromiseToResume() async throws {
        let server = try FaultServer()
        var options = TransferOptions(userAgent: "singlecast-tests")
        options.lowSpeedTime = .seconds(1)

        let error = try await withEngine { engine -> TransferError? in
            do throws(TransferError) {
                _ = try await engine.fetch(FetchRequest(url: server.url("/stall/5000000/200000"), options: options))
                return nil
            } catch {
                return error
            }
        }

        #expect(error?.code == .timeout, "\(String(describing: error))")
        #expect(error?.message.contains("resumes") == false, "\(String(describing: error))")
    }
}
