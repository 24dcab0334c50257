import SinglecastSupport
import Testing

@testable import SinglecastDaemon

/// RFC 9110's ranges, `If-Range`, entity tags and request paths, decided without a file or a socket.
@Suite struct WebConditionalTests {
    private let etag = EntityTag(opaque: "abc")
    private let lastModified = "Sat, 05 Dec 2026 10:00:00 GMT"

    private func decide(_ range: String?, ifRange: String? = nil, length: UInt64 = 1000) -> ByteRanges.Outcome {
        ByteRanges.decide(range: range, ifRange: ifRange, length: length, etag: etag, lastModified: lastModified)
    }

    @Test func aSingleRangeIsPartialAndClampedToTheEnd() {
        #expect(decide("bytes=0-499") == .partial(offset: 0, length: 500))
        #expect(decide("bytes=500-") == .partial(offset: 500, length: 500))
        #expect(decide("bytes=-200") == .partial(offset: 800, length: 200))
        #expect(decide("bytes=900-5000") == .partial(offset: 900, length: 100))
        #expect(decide("bytes=-5000") == .partial(offset: 0, length: 1000))
        #expect(decide("BYTES=10-19") == .partial(offset: 10, length: 10))
        #expect(decide(" bytes=10-19 , ") == .partial(offset: 10, length: 10))
        #expect(decide("bytes=999-999") == .partial(offset: 999, length: 1))
        #expect(ByteRanges.contentRange(offset: 10, length: 10, of: 1000) == "bytes 10-19/1000")
    }

    @Test func severalSatisfiableRangesGetTheWholeFile() {
        #expect(decide("bytes=0-1,5-9") == .full)
        #expect(decide("bytes=0-0,-1") == .full)
        // One of two lies in the file: that one is sent.
        #expect(decide("bytes=0-9,2000-") == .partial(offset: 0, length: 10))
    }

    @Test func rangesBeyondTheEndAreUnsatisfiable() {
        #expect(decide("bytes=1000-") == .unsatisfiable)
        #expect(decide("bytes=1000-2000,5000-") == .unsatisfiable)
        #expect(decide("bytes=-0") == .unsatisfiable)
        #expect(decide("bytes=0-", length: 0) == .unsatisfiable)
        #expect(decide("bytes=99999999999999999999999-") == .unsatisfiable)
        // The suffix of an empty file is satisfiable but names no bytes: the empty whole.
        #expect(decide("bytes=-5", length: 0) == .full)
    }

    @Test func malformedOrForeignRangesAreIgnored() {
        for header in [
            "", "bytes", "bytes=", "bytes=,", "bytes=a-b", "bytes=5-1", "bytes=1-2-3", "bytes=--1", "bytes=+1-2",
            "bytes=1 -2", "items=0-1", "bytes=0x1-2", "bytes=-", "bytes=1-2;", "=0-1", "bytes=٣-٤",
        ] {
            #expect(decide(header) == .full, "\(header)")
        }
        #expect(decide(nil) == .full)
        // A number too long for Int64 still means "to the end".
        #expect(decide("bytes=0-99999999999999999999999") == .partial(offset: 0, length: 1000))
        #expect(decide("bytes=-99999999999999999999999") == .partial(offset: 0, length: 1000))
    }

    @Test func ifRangeKeepsTheRangeOnlyForTheCurrentRepresentation() {
        #expect(decide("bytes=0-9", ifRange: "\"abc\"") == .partial(offset: 0, length: 10))
        #expect(decide("bytes=0-9", ifRange: "\"old\"") == .full)
        // Strong comparison: a weak tag never validates a range.
        #expect(decide("bytes=0-9", ifRange: "W/\"abc\"") == .full)
        #expect(decide("bytes=0-9", ifRange: lastModified) == .partial(offset: 0, length: 10))
        #expect(decide("bytes=0-9", ifRange: "Fri, 04 Dec 2026 10:00:00 GMT") == .full)
        #expect(decide("bytes=0-9", ifRange: "garbage") == .full)
        #expect(decide("bytes=0-9", ifRange: "\"abc") == .full)
        // Without a Range, If-Range changes nothing; with an unsatisfiable one and a stale validator, the whole file.
        #expect(decide(nil, ifRange: "\"old\"") == .full)
        #expect(decide("bytes=5000-", ifRange: "\"old\"") == .full)
    }

    @Test func ifNoneMatchComparesWeaklyAndAcceptsListsAndStar() {
        let current = EntityTag(opaque: "v2")
        #expect(EntityTag.noneMatch("\"v2\"", current: current))
        #expect(EntityTag.noneMatch("W/\"v2\"", current: current))
        #expect(EntityTag.noneMatch("\"v1\", \"v2\"", current: current))
        #expect(EntityTag.noneMatch("\"a,b\",\"v2\"", current: current))
        #expect(EntityTag.noneMatch(" * ", current: current))
        #expect(!EntityTag.noneMatch("\"v1\"", current: current))
        #expect(!EntityTag.noneMatch("v2", current: current))
        #expect(!EntityTag.noneMatch("\"v2", current: current))
        #expect(!EntityTag.noneMatch("\"v 2\"", current: current))
        #expect(!EntityTag.noneMatch("", current: current))
        #expect(EntityTag.list("\"a\", ,W/\"b\"") == [EntityTag(opaque: "a"), EntityTag(opaque: "b", weak: true)])
    }

    @Test func aContentHashIsStrongStableAndChangesWithTheBytes() {
        let tag = EntityTag.hashing(Array("feed".utf8))
        #expect(!tag.weak)
        #expect(tag.opaque.count == 32)
        #expect(tag == EntityTag.hashing(Array("feed".utf8)))
        #expect(tag != EntityTag.hashing(Array("feee".utf8)))
        // FNV-1a-128 of the empty input is its offset basis: the same on every run and machine.
        #expect(EntityTag.hashing([]).opaque == "6c62272e07bb014262b821756295c58d")
    }

    @Test func fileAnswersSayWhatToSend() throws {
        let facts = FileAnswer.Facts(size: 100, modified: 1_800_000_000, device: 1, inode: 2)
        func answer(_ headers: [String: String], get: Bool = true) -> FileAnswer {
            FileAnswer(isGet: get, headers: headers, facts: facts, contentType: "audio/mpeg")
        }
        func header(_ answer: FileAnswer, _ name: String) -> String? {
            answer.headers.first { $0.name == name }?.value
        }
        let full = answer([:])
        #expect(full.status == 200 && full.bytes?.offset == 0 && full.bytes?.length == 100)
        #expect(header(full, "Accept-Ranges") == "bytes")
        #expect(header(full, "Last-Modified") == "Fri, 15 Jan 2027 08:00:00 GMT")
        let tag = try #require(header(full, "ETag"))
        let partial = answer(["range": "bytes=10-19", "if-range": tag])
        #expect(partial.status == 206 && partial.bytes?.offset == 10 && partial.bytes?.length == 10)
        #expect(header(partial, "Content-Range") == "bytes 10-19/100")
        #expect(answer(["range": "bytes=10-19", "if-range": "Fri, 15 Jan 2027 08:00:00 GMT"]).status == 206)
        #expect(answer(["range": "bytes=10-19", "if-range": "\"stale\""]).status == 200)
        let unsatisfiable = answer(["range": "bytes=100-"])
        #expect(unsatisfiable.status == 416 && unsatisfiable.bytes == nil)
        #expect(header(unsatisfiable, "Content-Range") == "bytes */100")
        #expect(answer(["range": "bytes=0-0,2-3"]).status == 200)
        #expect(answer(["range": "bytes=x"]).status == 200)
        // HEAD has no ranges: it is answered as the whole file.
        #expect(answer(["range": "bytes=10-19"], get: false).status == 200)
        let notModified = answer(["if-none-match": "W/" + tag, "range": "bytes=0-1"])
        #expect(notModified.status == 304 && notModified.bytes == nil)
        #expect(header(notModified, "ETag") == tag)
        // Another inode, size or time is another tag.
        var rewritten = facts
        rewritten.modifiedNanoseconds = 1
        #expect(rewritten.etag != facts.etag)
    }

    @Test func mediaTypesComeFromAGoodAnnouncementElseTheExtension() {
        #expect(MediaType.of(name: "a.mp3", announced: "audio/x-m4a") == "audio/x-m4a")
        #expect(MediaType.of(name: "a.mp3", announced: nil) == "audio/mpeg")
        #expect(MediaType.of(name: "a.M4A", announced: "") == "audio/mp4")
        #expect(MediaType.of(name: "a.mp3", announced: "audio/mpeg\r\nSet-Cookie: x=1") == "audio/mpeg")
        #expect(MediaType.of(name: "a.mp3", announced: "text/html") == "audio/mpeg")
        #expect(MediaType.of(name: "page.html", announced: "text/html") == "application/octet-stream")
        #expect(MediaType.of(name: "noext", announced: "audio/mpeg; charset=x") == "application/octet-stream")
    }

    @Test func pathsAreDecodedOnceAndNeverClimb() {
        #expect(WebPath.segments("/media/12/Episode%201.mp3") == ["media", "12", "Episode 1.mp3"])
        #expect(WebPath.segments("/media/12/%C3%BC.mp3") == ["media", "12", "ü.mp3"])
        // Double encoding stays one level down: a name, not a dot-dot.
        #expect(WebPath.segments("/media/12/%252e%252e") == ["media", "12", "%2e%2e"])
        for path in [
            "/media/12/..", "/media/12/%2e%2e", "/media/12/%2E%2e", "/media/12/.", "/media/12/a%2fb",
            "/media/12/a%2Fb", "/media/12/a%5cb", "/media/12/a\\b", "/media/12/..%5cetc", "/media//12",
            "/media/12/", "/media/12/a%00", "/media/12/%zz", "/media/12/%c3", "media/12/a", "/media/12/%",
        ] {
            #expect(WebPath.segments(path) == nil, "\(path)")
        }
        #expect(WebPath.id("12") == 12)
        for text in ["012", "+12", "-1", "0", "1e3", "", "99999999999999999999", "１２"] {
            #expect(WebPath.id(text) == nil, "\(text)")
        }
        #expect("Ep 1 – ü/?.mp3".percentEncodedExceptUnreserved() == "Ep%201%20%E2%80%93%20%C3%BC%2F%3F.mp3")
    }
}
