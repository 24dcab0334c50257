import SinglecastHTTP
import Testing

/// Feeds a response's header lines (CRLF-terminated, blank line included) as libcurl delivers them.
private func feed(_ policy: inout ResponseBodyPolicy, _ lines: [String]) -> ResponseBodyPolicy.HeaderAction {
    var last = ResponseBodyPolicy.HeaderAction.proceed
    for line in lines + [""] {
        last = policy.receiveHeaderLine(line + "\r\n")
        if case .stop = last { return last }
    }
    return last
}

@Suite struct ResponseBodyPolicyTests {
    @Test func fullResponseWritesFromZeroAndTruncatesFirst() {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "Content-Length: 10", "ETag: \"a\""]) == .proceed)
        #expect(policy.receiveBody(count: 4) == .write(offset: 0, truncateFirst: true))
        #expect(policy.receiveBody(count: 6) == .write(offset: 4, truncateFirst: false))
        #expect(policy.bytesInFile == 10)
        #expect(!policy.resumed)
        #expect(policy.totalLength == 10)
        #expect(policy.headers["etag"] == "\"a\"")
    }

    @Test func aBodyAnnouncedBiggerThanTheFreeSpaceStopsBeforeAByteIsWritten() {
        var tight = ResponseBodyPolicy(.init(freeSpace: 9))
        #expect(feed(&tight, ["HTTP/1.1 200 OK", "Content-Length: 10"]) == .stop(.noSpace(needed: 10, free: 9)))
        var fits = ResponseBodyPolicy(.init(freeSpace: 10))
        #expect(feed(&fits, ["HTTP/1.1 200 OK", "Content-Length: 10"]) == .proceed)
        // A fresh start over 500 kept bytes cuts them first: their space counts.
        var restart = ResponseBodyPolicy(.init(resumeOffset: 500, freeSpace: 600))
        #expect(feed(&restart, ["HTTP/1.1 200 OK", "Content-Length: 1100"]) == .proceed)
        // A resume needs room for the rest only.
        var resume = ResponseBodyPolicy(.init(resumeOffset: 500, expectedTotal: 1000, freeSpace: 499))
        #expect(
            feed(&resume, ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 500-999/1000", "Content-Length: 500"])
                == .stop(.noSpace(needed: 500, free: 499))
        )
        // Without a length nothing is known before the bytes come.
        var unknown = ResponseBodyPolicy(.init(freeSpace: 1))
        #expect(feed(&unknown, ["HTTP/1.1 200 OK"]) == .proceed)
    }

    @Test func partialContentAtTheResumeOffsetIsAppended() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500, expectedTotal: 1000))
        let action = feed(
            &policy,
            ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 500-999/1000", "Content-Length: 500"]
        )
        #expect(action == .proceed)
        #expect(policy.bytesInFile == 500)
        #expect(policy.receiveBody(count: 100) == .write(offset: 500, truncateFirst: false))
        #expect(policy.receiveBody(count: 400) == .write(offset: 600, truncateFirst: false))
        #expect(policy.bytesInFile == 1000)
        #expect(policy.resumed)
        #expect(policy.totalLength == 1000)
    }

    @Test(arguments: [
        "bytes 0-999/1000",  // the server restarted at 0 but said 206
        "bytes 499-999/1000",
        "bytes 501-999/1000",
    ])
    func partialContentAtAnotherOffsetStopsBeforeWriting(range: String) {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500))
        guard
            case .stop(.rangeMismatch(let detail)) = feed(
                &policy,
                ["HTTP/1.1 206 Partial Content", "Content-Range: \(range)"]
            )
        else {
            Issue.record("expected a range mismatch")
            return
        }
        #expect(detail.contains("500"))
        #expect(policy.receiveBody(count: 10) == .stop(.rangeMismatch(detail)))
        #expect(policy.bytesInFile == 500, "the file keeps its valid prefix")
        #expect(policy.hasFinalResponse)
    }

    @Test func partialContentWithAnotherTotalMeansTheFileChanged() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500, expectedTotal: 1000))
        let action = feed(&policy, ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 500-1000/1001"])
        guard case .stop(.rangeMismatch(let detail)) = action else {
            Issue.record("expected a range mismatch, got \(action)")
            return
        }
        #expect(detail.contains("changed"))
    }

    @Test(arguments: [nil, "bytes 500-999/*", "bytes */1000", "items 500-999/1000", "bytes 600-500/1000"])
    func partialContentNeedsAUsableContentRange(range: String?) {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500))
        let lines = ["HTTP/1.1 206 Partial Content"] + (range.map { ["Content-Range: \($0)"] } ?? [])
        let action = feed(&policy, lines)
        if range == "bytes 500-999/*" {
            #expect(action == .proceed, "an unknown total is acceptable")
            #expect(policy.totalLength == nil)
        } else {
            guard case .stop(.rangeMismatch) = action else {
                Issue.record("expected a range mismatch for \(range ?? "no header"), got \(action)")
                return
            }
        }
    }

    @Test func fullResponseToAResumeRestartsFromZero() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500, expectedTotal: 1000))
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "Content-Length: 1200"]) == .proceed)
        #expect(policy.truncatePending)
        #expect(policy.bytesInFile == 0, "the old prefix is void once a full response is accepted")
        #expect(policy.receiveBody(count: 1200) == .write(offset: 0, truncateFirst: true))
        #expect(!policy.resumed)
        #expect(policy.totalLength == 1200)
    }

    @Test func emptyFullResponseLeavesTheTruncationToTheEngine() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500))
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "Content-Length: 0"]) == .proceed)
        #expect(policy.truncatePending)
        policy.truncated()
        #expect(!policy.truncatePending)
        #expect(policy.bytesInFile == 0)
    }

    @Test func rangeNotSatisfiableWritesNothing() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 1000))
        let action = feed(&policy, ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */1000"])
        #expect(action == .stop(.rangeNotSatisfiable))
        #expect(policy.receiveBody(count: 20) == .stop(.rangeNotSatisfiable))
        #expect(policy.totalLength == 1000)
        #expect(policy.bytesInFile == 1000)
    }

    @Test(arguments: [400, 401, 403, 404, 410, 429, 500, 503])
    func errorStatusesStopBeforeTheBody(status: Int) {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 10))
        let action = feed(&policy, ["HTTP/1.1 \(status) Something", "Retry-After: 120", "Content-Length: 1000"])
        #expect(action == .stop(.httpError(status)))
        #expect(policy.headers["RETRY-AFTER"] == "120")
        #expect(policy.receiveBody(count: 1000) == .stop(.httpError(status)))
        #expect(policy.bytesInFile == 10)
    }

    @Test func redirectHopsAreSkippedAndForgotten() {
        var policy = ResponseBodyPolicy(.init())
        #expect(
            feed(&policy, ["HTTP/1.1 301 Moved", "Location: https://cdn.example/file", "ETag: \"hop\""]) == .proceed
        )
        #expect(policy.receiveBody(count: 300) == .discard, "a hop's body is never written")
        #expect(policy.lastRedirectLocation == "https://cdn.example/file")
        #expect(!policy.hasFinalResponse)
        #expect(feed(&policy, ["HTTP/2 200", "content-length: 5"]) == .proceed)
        #expect(policy.headers["etag"] == nil, "the hop's headers must not leak into the final response")
        #expect(policy.status == 200)
        #expect(policy.receiveBody(count: 5) == .write(offset: 0, truncateFirst: true))
    }

    @Test func informationalResponsesAreSkipped() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 3))
        #expect(feed(&policy, ["HTTP/1.1 100 Continue"]) == .proceed)
        #expect(feed(&policy, ["HTTP/1.1 103 Early Hints", "Link: </style.css>; rel=preload"]) == .proceed)
        #expect(feed(&policy, ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 3-9/10"]) == .proceed)
        #expect(policy.headers["link"] == nil)
        #expect(policy.receiveBody(count: 7) == .write(offset: 3, truncateFirst: false))
    }

    @Test(arguments: [
        (["HTTP/1.1 302 Found"], 302),
        (["HTTP/1.1 305 Use Proxy", "Location: /x"], 305),
    ])
    func leftoverRedirectsAreErrors(lines: [String], status: Int) {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, lines) == .stop(.httpError(status)))
    }

    /// A response without content is an error as any other, but the transfer is left to end on its own: aborting it
    /// closed its connection, one per feed of a refresh where every feed answered 304.
    @Test(arguments: [
        (["HTTP/1.1 304 Not Modified", "Location: /x"], 304),
        (["HTTP/1.1 304 Not Modified", "ETag: \"v1\""], 304),
        (["HTTP/1.1 404 Not Found", "Content-Length: 0"], 404),
    ])
    func aResponseWithoutContentStopsWithoutAbortingTheTransfer(lines: [String], status: Int) {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, lines) == .proceed)
        #expect(policy.stopReason == .httpError(status))
        #expect(policy.hasFinalResponse)
        // Bytes a server sends anyway are never written: they stop the transfer as before.
        #expect(policy.receiveBody(count: 5) == .stop(.httpError(status)))
    }

    @Test func anErrorPageStillAbortsTheTransfer() {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, ["HTTP/1.1 404 Not Found", "Content-Length: 1000"]) == .stop(.httpError(404)))
        var chunked = ResponseBodyPolicy(.init())
        let lines = ["HTTP/1.1 500 Internal Server Error", "Content-Length: 0", "Transfer-Encoding: chunked"]
        #expect(feed(&chunked, lines) == .stop(.httpError(500)))
    }

    @Test func redirectsAreFinalWhenNotFollowed() {
        var policy = ResponseBodyPolicy(.init(followsRedirects: false))
        #expect(feed(&policy, ["HTTP/1.1 302 Found", "Location: /x"]) == .stop(.httpError(302)))
    }

    @Test func announcedSizeOverTheMaximumStops() {
        var policy = ResponseBodyPolicy(.init(maxFileSize: 100))
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "Content-Length: 101"]) == .stop(.tooLarge(announced: 101)))

        var resumed = ResponseBodyPolicy(.init(resumeOffset: 50, maxFileSize: 100))
        let action = feed(&resumed, ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 50-199/200"])
        #expect(action == .stop(.tooLarge(announced: 200)))
    }

    @Test func bodyGrowingOverTheMaximumStops() {
        var policy = ResponseBodyPolicy(.init(maxFileSize: 100))
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked"]) == .proceed)
        #expect(policy.receiveBody(count: 100) == .write(offset: 0, truncateFirst: true))
        #expect(policy.receiveBody(count: 1) == .stop(.tooLarge(announced: nil)))
        #expect(policy.bytesInFile == 100)
    }

    @Test func headerNamesAreCaseInsensitiveAndTrailersIgnored() {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "eTaG:   \"x\"  ", "X-Long: a", "\tb"]) == .proceed)
        #expect(policy.headers["ETag"] == "\"x\"")
        #expect(policy.headers["x-long"] == "a b")
        #expect(policy.receiveBody(count: 1) == .write(offset: 0, truncateFirst: true))
        #expect(policy.receiveHeaderLine("ETag: \"trailer\"\r\n") == .proceed)
        #expect(policy.headers["etag"] == "\"x\"")
    }

    @Test(arguments: ["HTTP/1.1 +200 OK", "HTTP/1.1 99999999999999999999 OK", "HTTP/1.1 -200 OK", "HTTP/1.1 0x0C8"])
    func aStatusCodeIsThreePlainDigits(line: String) {
        var policy = ResponseBodyPolicy(.init())
        guard case .stop(.malformed) = policy.receiveHeaderLine(line + "\r\n") else {
            Issue.record("expected malformed for \(line)")
            return
        }
    }

    @Test func malformedStatusLineStops() {
        var policy = ResponseBodyPolicy(.init())
        guard case .stop(.malformed) = policy.receiveHeaderLine("HTTP/1.1 abc\r\n") else {
            Issue.record("expected malformed")
            return
        }
    }

    @Test(arguments: [
        ("bytes 0-9/10", ContentRange(first: 0, last: 9, total: 10)),
        ("BYTES 5-9/*", ContentRange(first: 5, last: 9, total: nil)),
        (" bytes  100-199/1000 ", ContentRange(first: 100, last: 199, total: 1000)),
        ("bytes 0-10/10", nil),
        ("bytes -5/10", nil),
        ("bytes 5-/10", nil),
        ("bytes */10", nil),
    ])
    func contentRangeParsing(text: String, expected: ContentRange?) {
        #expect(ContentRange(text) == expected)
    }

    // MARK: Servers that lie about ranges and sizes

    /// `bytes 0-9223372036854775807/*` overflowed the check of the range's length against `Content-Length`.
    @Test(arguments: [0, 500] as [Int64])
    func aRangeEndingAtInt64MaxIsAMismatchNotATrap(offset: Int64) {
        var policy = ResponseBodyPolicy(.init(resumeOffset: offset))
        let action = feed(
            &policy,
            [
                "HTTP/1.1 206 Partial Content", "Content-Range: bytes \(offset)-9223372036854775807/*",
                "Content-Length: 100",
            ]
        )
        guard case .stop(.rangeMismatch(let detail)) = action else {
            Issue.record("expected a range mismatch, got \(action)")
            return
        }
        #expect(detail.contains("Content-Length 100"))
        #expect(policy.bytesInFile == offset)
    }

    @Test(arguments: ["-9223372036854775808", "-1", "+5", "99999999999999999999", "1 2", "0x10"])
    func anUnsatisfiedTotalIsPlainDecimalDigits(total: String) {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500))
        #expect(feed(&policy, ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */\(total)"]) != .proceed)
        #expect(policy.totalLength == nil)
    }

    @Test(arguments: ["bytes +500-999/1000", "bytes 500-999/-1000", "bytes 500-+999/1000", "bytes 500-999/+1000"])
    func aContentRangeWithSignsIsUnusable(range: String) {
        #expect(ContentRange(range) == nil)
    }

    @Test(arguments: ["-1", "+10", "10abc", "99999999999999999999"])
    func aContentLengthThatIsNoDecimalIsNoLength(length: String) {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, ["HTTP/1.1 200 OK", "Content-Length: \(length)"]) == .proceed)
        #expect(policy.contentLength == nil)
        #expect(policy.totalLength == nil)
    }

    /// libcurl takes the last of several `Content-Length` fields and none under chunked coding; a policy that read
    /// them otherwise failed whole downloads on a "length mismatch".
    @Test func contentLengthIsReadAsLibcurlReadsIt() {
        var two = ResponseBodyPolicy(.init())
        #expect(feed(&two, ["HTTP/1.1 200 OK", "Content-Length: 500", "Content-Length: 1000"]) == .proceed)
        #expect(two.contentLength == 1000)
        #expect(two.totalLength == 1000)

        var chunked = ResponseBodyPolicy(.init())
        let lines = ["HTTP/1.1 200 OK", "Content-Length: 5", "Transfer-Encoding: gzip, Chunked"]
        #expect(feed(&chunked, lines) == .proceed)
        #expect(chunked.contentLength == nil)
        #expect(chunked.totalLength == nil)
    }

    /// Blanks around the value and a value folded onto the next line (RFC 9112 §5.2) leave the length readable,
    /// whatever the field name's case.
    @Test func aPaddedOrFoldedContentLengthIsRead() {
        var padded = ResponseBodyPolicy(.init())
        #expect(feed(&padded, ["HTTP/1.1 200 OK", "content-LENGTH: \t 77 \t"]) == .proceed)
        #expect(padded.contentLength == 77)

        var folded = ResponseBodyPolicy(.init())
        #expect(feed(&folded, ["HTTP/1.1 200 OK", "CONTENT-LENGTH:", " \t 1234"]) == .proceed)
        #expect(folded.contentLength == 1234)

        var foldedTwice = ResponseBodyPolicy(.init())
        #expect(feed(&foldedTwice, ["HTTP/1.1 200 OK", "Content-Length: 12", "  34"]) == .proceed)
        #expect(foldedTwice.contentLength == nil)
    }

    // MARK: Two versions of one file

    /// A server that inserts ads per request answers a resume with another version, `If-Range` or not.
    @Test(arguments: [
        ("ETag: \"B\"", "ETag"),
        ("Last-Modified: Wed, 02 Oct 2024 12:00:00 GMT", "Last-Modified"),
    ])
    func aPartialResponseOfAnotherVersionStopsBeforeWriting(validator: String, named: String) {
        var policy = ResponseBodyPolicy(
            .init(resumeOffset: 500, expectedTotal: 1000, etag: "\"A\"", lastModified: "Tue, 01 Oct 2024 12:00:00 GMT")
        )
        let action = feed(
            &policy,
            ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 500-999/1000", validator]
        )
        guard case .stop(.rangeMismatch(let detail)) = action else {
            Issue.record("expected a range mismatch, got \(action)")
            return
        }
        #expect(detail.contains("changed") && detail.contains(named), "\(detail)")
        #expect(policy.receiveBody(count: 500) == .stop(.rangeMismatch(detail)))
        #expect(policy.bytesInFile == 500)
        #expect(!policy.accepted)
    }

    @Test func aPartialResponseOfTheSameVersionOrWithoutValidatorsIsAppended() {
        for lines in [["ETag: \"A\""], ["ETag: W/\"A\""], ["Last-Modified: Tue, 01 Oct 2024 12:00:00 GMT"], []] {
            var policy = ResponseBodyPolicy(
                .init(resumeOffset: 500, etag: "\"A\"", lastModified: "Tue, 01 Oct 2024 12:00:00 GMT")
            )
            #expect(
                feed(&policy, ["HTTP/1.1 206 Partial Content", "Content-Range: bytes 500-999/1000"] + lines) == .proceed
            )
            #expect(policy.accepted)
        }
    }

    /// A 416 whose total is the size of the partial file completes a resume, but only of the same version.
    @Test func aRangeNotSatisfiableOfAnotherVersionIsAMismatch() {
        var changed = ResponseBodyPolicy(.init(resumeOffset: 500, etag: "\"A\""))
        let action = feed(
            &changed,
            ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */500", "ETag: \"B\""]
        )
        guard case .stop(.rangeMismatch) = action else {
            Issue.record("expected a range mismatch, got \(action)")
            return
        }
        var same = ResponseBodyPolicy(.init(resumeOffset: 500, etag: "\"A\""))
        let kept = feed(&same, ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */500", "ETag: \"A\""])
        #expect(kept == .stop(.rangeNotSatisfiable))
    }

    /// Without validators, a 416 whose total is the partial file's size but not the size known before still speaks of
    /// another version: a file of 1000 bytes broke off at 500, and the server now has one of 500.
    @Test func aRangeNotSatisfiableWithAnotherTotalIsAMismatch() {
        var policy = ResponseBodyPolicy(.init(resumeOffset: 500, expectedTotal: 1000))
        let action = feed(&policy, ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */500"])
        guard case .stop(.rangeMismatch(let detail)) = action else {
            Issue.record("expected a range mismatch, got \(action)")
            return
        }
        #expect(detail.contains("500") && detail.contains("1000"), "\(detail)")
        var complete = ResponseBodyPolicy(.init(resumeOffset: 1000, expectedTotal: 1000))
        #expect(
            feed(&complete, ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */1000"])
                == .stop(.rangeNotSatisfiable)
        )
    }

    @Test(arguments: ["ETag: \"a\rb\"", "Last-Modified: Tue, 01 Oct 2024\r12:00:00 GMT", "ETag: \"a\u{7F}\""])
    func aValidatorWithAControlCharacterIsNoValidator(line: String) {
        var policy = ResponseBodyPolicy(.init())
        #expect(feed(&policy, ["HTTP/1.1 200 OK", line]) == .proceed)
        #expect(policy.etag == nil)
        #expect(policy.lastModified == nil)
        #expect(ResponseBodyPolicy.usableValidator("\"ok\"") == "\"ok\"")
        #expect(ResponseBodyPolicy.usableValidator("") == nil)
    }
}
