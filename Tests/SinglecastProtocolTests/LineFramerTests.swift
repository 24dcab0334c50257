import SinglecastProtocol
import Testing

@Suite struct LineFramerTests {
    @Test func splitsLinesAcrossChunks() {
        var framer = LineFramer(maximumLineLength: 64)
        #expect(framer.append(Array("{\"a\":".utf8)) == [])
        #expect(framer.append(Array("1}\n{\"b\"".utf8)) == [.line(Array("{\"a\":1}".utf8))])
        #expect(framer.append(Array(":2}\r\n\n".utf8)) == [.line(Array("{\"b\":2}".utf8)), .line([])])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func manyPipelinedLinesInOneChunk() {
        var framer = LineFramer(maximumLineLength: 16)
        let chunk = Array(String(repeating: "ping\n", count: 1000).utf8)
        let events = framer.append(chunk)
        #expect(events.count == 1000)
        #expect(events.allSatisfy { $0 == .line(Array("ping".utf8)) })
    }

    @Test func lineOverTheLimitIsReportedOnceAndStopsTheStream() {
        var framer = LineFramer(maximumLineLength: 8)
        #expect(framer.append(Array("12345678\n".utf8)) == [.line(Array("12345678".utf8))])
        #expect(framer.append(Array("12345".utf8)) == [])
        #expect(framer.append(Array("6789".utf8)) == [.lineTooLong])
        #expect(framer.append(Array("\nok\n".utf8)) == [])
        #expect(framer.finish() == nil)
    }

    @Test func limitCountsBytesAlreadyBuffered() {
        var framer = LineFramer(maximumLineLength: 4)
        #expect(framer.append(Array("ab".utf8)) == [])
        #expect(framer.append(Array("cde\n".utf8)) == [.lineTooLong])
    }

    @Test func unterminatedLastLineIsDeliveredAtEndOfStream() {
        var framer = LineFramer(maximumLineLength: 64)
        #expect(framer.append(Array("{\"x\":1}".utf8)) == [])
        #expect(framer.finish() == .line(Array("{\"x\":1}".utf8)))
        var blank = LineFramer(maximumLineLength: 64)
        _ = blank.append(Array("  \r".utf8))
        #expect(blank.finish() == nil)
    }
}
