import Foundation
import SinglecastHTTP
import SinglecastTestServers
import Synchronization
import Testing

/// `fetch`: small bodies into memory, conditional GET, redirects followed hop by hop, failures that throw.
@Suite struct FetchTests {
    private static let options = TransferOptions(userAgent: "singlecast-tests")

    private func fetch(_ request: FetchRequest) async throws -> FetchResult {
        try await withEngine { engine in try await engine.fetch(request) }
    }

    private func fetch(
        _ url: String,
        maxBytes: Int64 = 64 << 20,
        options: TransferOptions = options
    ) async throws
        -> FetchResult
    {
        try await fetch(FetchRequest(url: url, maxBytes: maxBytes, options: options))
    }

    /// The error `body` throws, as a ``TransferError``.
    private func transferError(_ body: () async throws -> FetchResult) async -> TransferError? {
        do {
            let result = try await body()
            Issue.record("expected an error, got status \(result.response.status)")
            return nil
        } catch let error as TransferError {
            return error
        } catch {
            Issue.record("expected a TransferError, got \(error)")
            return nil
        }
    }

    // MARK: nginx

    @Test func fileFromNginxArrivesInMemory() async throws {
        let nginx = try NginxServer()
        let expected = TestContent.data(size: 300_000)
        let url = try nginx.serve(expected, as: "feed.xml")

        let result = try await fetch(url)

        #expect(result.response.status == 200)
        #expect(sameBytes(result.body, expected))
        #expect(result.response.finalURL == url)
        #expect(result.response.etag != nil)
        #expect(result.permanentRedirect == nil)
    }

    @Test func nginxAnswersAConditionalGetWith304() async throws {
        let nginx = try NginxServer()
        let url = try nginx.serve(Data("<rss/>".utf8), as: "feed.xml")
        let first = try await fetch(url)
        let etag = try #require(first.response.etag)
        let lastModified = try #require(first.response.lastModified)

        let byETag = try await fetch(FetchRequest(url: url, ifNoneMatch: etag, options: Self.options))
        let byDate = try await fetch(FetchRequest(url: url, ifModifiedSince: lastModified, options: Self.options))
        let changed = try await fetch(FetchRequest(url: url, ifNoneMatch: "\"other\"", options: Self.options))

        #expect(byETag.response.status == 304)
        #expect(byETag.body.isEmpty)
        #expect(byDate.response.status == 304)
        #expect(changed.response.status == 200)
        #expect(changed.body == Data("<rss/>".utf8))
    }

    /// A 304 has no content, so its connection serves the next fetch: a refresh of 1,000 feeds answering 304 opened
    /// one connection per feed while the engine aborted each 304 at the end of its headers.
    @Test func conditionalGetsAnswered304ReuseOneConnection() async throws {
        let nginx = try NginxServer()
        let url = try nginx.serve(Data("<rss/>".utf8), as: "feed.xml")

        let (accepted, statuses) = try await withEngine { engine in
            let first = try await engine.fetch(FetchRequest(url: url, options: Self.options))
            let etag = try #require(first.response.etag)
            let status = FetchRequest(url: nginx.statusURL, options: Self.options)
            let before = try await engine.fetch(status)
            var statuses: [Int] = []
            for _ in 0..<20 {
                let result = try await engine.fetch(FetchRequest(url: url, ifNoneMatch: etag, options: Self.options))
                statuses.append(result.response.status)
            }
            let after = try await engine.fetch(status)
            let counts = [before, after].map {
                NginxServer.acceptedConnections(inStatus: String(decoding: $0.body, as: UTF8.self))
            }
            return (counts, statuses)
        }

        #expect(statuses == Array(repeating: 304, count: 20))
        let opened = try #require(accepted[1]) - (try #require(accepted[0]))
        #expect(opened <= 1, "20 fetches answered 304 opened \(opened) connections")
    }

    @Test func missingFileIsAResultNotAnError() async throws {
        let nginx = try NginxServer()
        let result = try await fetch(nginx.url("/nothing-here.xml"))
        #expect(result.response.status == 404)
        #expect(result.body.isEmpty)
    }

    // MARK: Conditional GET and statuses

    @Test(arguments: [
        (FetchRequest(url: "", ifNoneMatch: "\"cond-2000\""), 304),
        (FetchRequest(url: "", ifNoneMatch: "\"stale\", \"cond-2000\""), 304),
        (FetchRequest(url: "", ifNoneMatch: "*"), 304),
        (FetchRequest(url: "", ifNoneMatch: "\"stale\""), 200),
        (FetchRequest(url: "", ifModifiedSince: "Tue, 01 Oct 2024 12:00:00 GMT"), 304),
        (FetchRequest(url: "", ifModifiedSince: "Wed, 02 Oct 2024 08:00:00 GMT"), 304),
        (FetchRequest(url: "", ifModifiedSince: "Mon, 30 Sep 2024 12:00:00 GMT"), 200),
        // If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3).
        (FetchRequest(url: "", ifNoneMatch: "\"stale\"", ifModifiedSince: "Tue, 01 Oct 2024 12:00:00 GMT"), 200),
        (FetchRequest(url: ""), 200),
    ])
    func conditionalGet(request: FetchRequest, expectedStatus: Int) async throws {
        let server = try FaultServer()
        var request = request
        request.url = server.url("/conditional/2000")
        request.options = Self.options

        let result = try await fetch(request)

        #expect(result.response.status == expectedStatus)
        #expect(result.response.etag == "\"cond-2000\"")
        #expect(sameBytes(result.body, (expectedStatus == 200 ? TestContent.data(size: 2000) : Data())))
    }

    @Test(arguments: ["/gone", "/status/500", "/status/403", "/status/429?retry_after=7"])
    func httpErrorsComeBackAsResults(path: String) async throws {
        let server = try FaultServer()
        let result = try await fetch(server.url(path))
        #expect(result.response.status == Int(path == "/gone" ? "410" : path.split(separator: "/")[1].prefix(3)))
        #expect(result.body.isEmpty, "error pages are dropped")
        if path.contains("retry_after") { #expect(result.response.retryAfter == "7") }
    }

    @Test func requestHeadersAndCredentialsAreSent() async throws {
        let server = try FaultServer()
        let result = try await fetch(
            FetchRequest(
                url: server.url("/echo-headers"),
                headers: ["Accept: application/json"],
                basicAuthUser: "ada",
                basicAuthPassword: "secret",
                options: Self.options
            )
        )
        let headers = try JSONDecoder().decode([String: String].self, from: result.body)
        #expect(headers["accept"] == "application/json")
        #expect(headers["user-agent"] == "singlecast-tests")
        #expect(headers["authorization"] == "Basic " + Data("ada:secret".utf8).base64EncodedString())
    }

    // MARK: Redirects

    @Test func movedPermanentlyReportsTheNewURL() async throws {
        let server = try FaultServer()
        let result = try await fetch(server.url("/moved-permanently/file/1500"))

        #expect(result.response.status == 200)
        #expect(sameBytes(result.body, TestContent.data(size: 1500)))
        #expect(result.response.finalURL == server.url("/file/1500"))
        #expect(result.permanentRedirect == server.url("/file/1500"))
    }

    @Test(arguments: [
        ("301,308", true),
        ("308,301,308", true),
        ("301,302", false),
        ("307", false),
        ("303,301", false),
    ])
    func onlyAnAllPermanentChainIsPermanent(codes: String, permanent: Bool) async throws {
        let server = try FaultServer()
        let result = try await fetch(server.url("/hops/\(codes)/file/100"))

        #expect(result.response.status == 200)
        #expect(sameBytes(result.body, TestContent.data(size: 100)))
        #expect(result.response.finalURL == server.url("/file/100"))
        #expect(result.permanentRedirect == (permanent ? server.url("/file/100") : nil))
    }

    @Test func permanentRedirectToAGoneFeedReportsBoth() async throws {
        let server = try FaultServer()
        let result = try await fetch(server.url("/moved-permanently/gone"))
        #expect(result.response.status == 410)
        #expect(result.permanentRedirect == server.url("/gone"))
    }

    @Test func relativeLocationIsResolvedAgainstTheCurrentURL() async throws {
        let server = try FaultServer()
        let result = try await fetch(server.url("/relative-redirect"))
        #expect(result.response.finalURL == server.url("/file/1000?from=relative"))
        #expect(sameBytes(result.body, TestContent.data(size: 1000)))
        #expect(result.permanentRedirect == nil)
    }

    @Test func redirectLimitAndLoopsThrow() async throws {
        let server = try FaultServer()
        var options = Self.options
        options.maxRedirects = 2

        let tooMany = await transferError { try await fetch(server.url("/redirect/3/file/10"), options: options) }
        let loop = await transferError { try await fetch(server.url("/redirect-loop")) }
        let withinLimit = try await fetch(server.url("/redirect/2/file/10"), options: options)

        #expect(tooMany?.code == .tooManyRedirects)
        #expect(tooMany?.message.contains("more than 2 times") == true)
        #expect(loop?.code == .tooManyRedirects)
        #expect(loop?.message.contains("loop") == true)
        #expect(withinLimit.response.status == 200)
    }

    /// `lastTransferEnded` comes once, when the transfer that ends the fetch ends: not for a redirect hop, and not
    /// for a redirect that cannot be followed (the caller's own clean-up covers that).
    @Test(arguments: [
        ("/redirect/2/file/10", 1),
        ("/gone", 1),
        ("/status/500", 1),
        ("/redirect-to?url=ftp://127.0.0.1/feed.xml", 0),
    ])
    func lastTransferEndedComesOnceForTheHopThatEndsTheFetch(path: String, calls: Int) async throws {
        let server = try FaultServer()
        let ended = Atomic(0)
        var request = FetchRequest(url: server.url(path), options: Self.options)
        request.lastTransferEnded = { ended.add(1, ordering: .relaxed) }
        _ = try? await fetch(request)
        #expect(ended.load(ordering: .relaxed) == calls)
        let refused = Atomic(0)
        var closed = FetchRequest(url: "http://127.0.0.1:9/feed.xml", options: Self.options)
        closed.lastTransferEnded = { refused.add(1, ordering: .relaxed) }
        _ = try? await fetch(closed)
        #expect(refused.load(ordering: .relaxed) == 1, "a failed transfer ends the fetch too")
    }

    @Test func redirectToAnotherSchemeThrows() async throws {
        let server = try FaultServer()
        let error = await transferError { try await fetch(server.url("/redirect-to?url=ftp://127.0.0.1/feed.xml")) }
        #expect(error?.code == .schemeNotAllowed)
    }

    @Test func credentialsStayWithTheOriginalOrigin() async throws {
        let server = try FaultServer()
        func headers(after path: String) async throws -> [String: String] {
            let result = try await fetch(
                FetchRequest(
                    url: server.url(path),
                    headers: ["Cookie: session=1", "X-Kept: yes"],
                    basicAuthUser: "ada",
                    basicAuthPassword: "secret",
                    options: Self.options
                )
            )
            return try JSONDecoder().decode([String: String].self, from: result.body)
        }
        let sameOrigin = try await headers(after: "/redirect/1/echo-headers")
        // localhost is another origin than 127.0.0.1, though the same server.
        let otherOrigin = try await headers(
            after: "/redirect-to?url=http://localhost:\(server.port)/echo-headers"
        )

        #expect(sameOrigin["authorization"] != nil)
        #expect(sameOrigin["cookie"] == "session=1")
        #expect(otherOrigin["authorization"] == nil)
        #expect(otherOrigin["cookie"] == nil)
        #expect(otherOrigin["x-kept"] == "yes")
    }

    // MARK: Failures

    @Test func bodyOverTheLimitThrowsTooLarge() async throws {
        let server = try FaultServer()
        let announced = await transferError { try await fetch(server.url("/file/5000"), maxBytes: 4096) }
        let chunked = await transferError { try await fetch(server.url("/no-length/200000"), maxBytes: 100_000) }
        let exact = try await fetch(server.url("/file/4096"), maxBytes: 4096)

        #expect(announced?.code == .tooLarge)
        #expect(chunked?.code == .tooLarge)
        #expect(exact.body.count == 4096)
    }

    /// A feed the server gzips arrives decoded, and the request says which encodings are understood.
    @Test func gzipEncodedFeedArrivesDecoded() async throws {
        let server = try FaultServer()

        let result = try await fetch(server.url("/gzip-feed"), maxBytes: 100_000)
        let echoed = try await fetch(server.url("/echo-headers"))

        #expect(result.response.status == 200)
        #expect(result.body.starts(with: Data("<?xml".utf8)), "\(result.body.prefix(16).map { $0 })")
        #expect(result.body.count == 1859)
        let headers = try JSONSerialization.jsonObject(with: echoed.body) as? [String: String]
        #expect(headers?["accept-encoding"]?.contains("gzip") == true, "\(String(describing: headers))")
    }

    /// The size limit applies to the decoded bytes: 100 MB of zeros, about 100 KB gzipped, stays refused, and no more
    /// than the limit ever reaches memory.
    @Test func gzipBombIsRefusedByItsDecodedSize() async throws {
        let server = try FaultServer()

        let error = await transferError { try await fetch(server.url("/gzip-bomb/100000000"), maxBytes: 1_000_000) }
        let small = try await fetch(server.url("/gzip-bomb/999999"), maxBytes: 1_000_000)

        #expect(error?.code == .tooLarge, "\(String(describing: error))")
        #expect(error?.message.contains("1000000-byte maximum") == true, "\(String(describing: error))")
        #expect(small.body == Data(count: 999_999))
    }

    @Test func refusedConnectionThrows() async throws {
        let error = await transferError { try await fetch("http://127.0.0.1:9/feed.xml") }
        #expect(error?.code == .network)
    }

    @Test func plainHTTPUnderRequireHTTPSThrows() async throws {
        var options = Self.options
        options.requireHTTPS = true
        let error = await transferError { try await fetch("http://127.0.0.1:9/feed.xml", options: options) }
        #expect(error?.code == .schemeNotAllowed)
    }

    @Test func cancellingTheTaskStopsTheFetch() async throws {
        let server = try FaultServer()
        try await withEngine { engine in
            let task = Task { try await engine.fetch(FetchRequest(url: server.url("/slow/100000/2000"))) }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            // Uncancelled, the slow transfer would complete after 50 s and return.
            do {
                _ = try await task.value
                Issue.record("a cancelled fetch returned")
            } catch let error as TransferError {
                #expect(error.code == .cancelled)
            }
        }
    }
}

/// The redirect rules without a server.
@Suite struct RedirectPlanTests {
    @Test func resolvesLocationsLikeRFC3986() throws {
        let cases: [(location: String, expected: String)] = [
            ("g", "http://a.example/b/c/g"),
            ("../g", "http://a.example/b/g"),
            ("/g?y", "http://a.example/g?y"),
            ("//other.example/x", "http://other.example/x"),
            ("https://secure.example/feed", "https://secure.example/feed"),
            ("?page=2", "http://a.example/b/c/d?page=2"),
        ]
        for (location, expected) in cases {
            var plan = RedirectPlan(url: "http://a.example/b/c/d?q", options: TransferOptions())
            try plan.follow(status: 302, location: location)
            #expect(plan.current == expected, "\(location)")
        }
    }

    @Test func tracksWhetherEveryHopWasPermanent() throws {
        var plan = RedirectPlan(url: "https://a.example/feed", options: TransferOptions())
        #expect(plan.permanentRedirect == nil)
        try plan.follow(status: 301, location: "/feed2")
        #expect(plan.permanentRedirect == "https://a.example/feed2")
        try plan.follow(status: 308, location: "https://b.example/feed")
        #expect(plan.permanentRedirect == "https://b.example/feed")
        try plan.follow(status: 307, location: "/feed3")
        #expect(plan.permanentRedirect == nil)
        try plan.follow(status: 301, location: "/feed4")
        #expect(plan.permanentRedirect == nil, "one temporary hop makes the chain temporary")
        #expect(plan.hops == 4)
    }

    @Test func refusesToStepDownFromHTTPSWhenRequired() {
        var plan = RedirectPlan(url: "https://a.example/feed", options: TransferOptions(requireHTTPS: true))
        #expect(throws: TransferError.self) { try plan.follow(status: 301, location: "http://a.example/feed") }
        do {
            try plan.follow(status: 301, location: "http://a.example/feed")
        } catch {
            #expect(error.code == .insecureRedirect)
        }
        var relaxed = RedirectPlan(url: "https://a.example/feed", options: TransferOptions())
        #expect(throws: Never.self) { try relaxed.follow(status: 301, location: "http://a.example/feed") }
    }

    @Test(arguments: ["", "   ", "mailto:ada@example.com", "file:///etc/passwd"])
    func refusesUnusableLocations(location: String) {
        var plan = RedirectPlan(url: "https://a.example/feed", options: TransferOptions())
        do {
            try plan.follow(status: 302, location: location)
            Issue.record("followed \(location)")
        } catch {
            #expect(
                error.code == (location.trimmingCharacters(in: .whitespaces).isEmpty ? .invalidURL : .schemeNotAllowed)
            )
        }
    }

    @Test func stopsAtTheLimitAndOnLoops() throws {
        var limited = RedirectPlan(url: "https://a.example/0", options: TransferOptions(maxRedirects: 2))
        try limited.follow(status: 302, location: "/1")
        try limited.follow(status: 302, location: "/2")
        do {
            try limited.follow(status: 302, location: "/3")
            Issue.record("a third hop was allowed")
        } catch {
            #expect(error.code == .tooManyRedirects)
        }
        var looping = RedirectPlan(url: "https://a.example/0", options: TransferOptions())
        try looping.follow(status: 302, location: "/1")
        do {
            try looping.follow(status: 302, location: "/0")
            Issue.record("a loop was followed")
        } catch {
            #expect(error.code == .tooManyRedirects)
        }
    }
}
