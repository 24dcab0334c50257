import Foundation
import Testing

@testable import SinglecastFeeds

/// Feeds of several MiB: the reader hands the stretches it went past to its caller, and singlecast-feed lets
/// a mapped file's pages go behind it without changing what it reads.
@Suite struct LargeFeedTests {
    static let url = "https://example.com/feed.xml"

    /// About 3.5 MB: more than three of the reader's 1 MiB steps.
    static func document(items: Int = 12_000, ending: String = "</channel></rss>\n") -> String {
        var xml =
            "<?xml version=\"1.0\"?>\n<rss xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\">\n<channel>\n"
        xml += "<title>Large</title>\n"
        for number in 0..<items {
            xml += """
                <item><title>Episode \(number) &amp; more</title><guid>large-\(number)</guid>
                <description><![CDATA[<p>Notes for <b>\(number)</b>.</p>]]></description>
                <enclosure url="https://cdn.example.com/\(number).mp3" length="1000" type="audio/mpeg"/>
                <itunes:duration>01:02:03</itunes:duration></item>

                """
        }
        return xml + ending
    }

    @Test func readPastHandsOnTheDocumentInOrderAndChangesNothing() throws {
        let data = Data(LargeFeedTests.document().utf8)
        var stretches: [(start: UInt, count: Int)] = []
        let feed = try FeedParser.parse(data, url: LargeFeedTests.url) { bytes in
            stretches.append((UInt(bitPattern: bytes.baseAddress), bytes.count))
        }
        #expect(feed == (try FeedParser.parse(data, url: LargeFeedTests.url)))
        #expect(feed.episodes.count == 12_000)

        #expect(stretches.count >= 3)
        let (base, end) = data.withUnsafeBytes { raw in
            (UInt(bitPattern: raw.baseAddress), UInt(bitPattern: raw.baseAddress) + UInt(raw.count))
        }
        var next = base
        for stretch in stretches {
            #expect(stretch.start == next)
            #expect(stretch.count >= XMLReader.releaseStep)
            next = stretch.start + UInt(stretch.count)
        }
        #expect(next <= end)
    }

    @Test func aDocumentReadFromACopyHandsOnTheCopy() throws {
        // Carriage returns are normalised into a copy: the stretches lie there, not in `data`.
        let data = Data(LargeFeedTests.document().replacingOccurrences(of: "\n", with: "\r\n").utf8)
        var starts: [UInt] = []
        let feed = try FeedParser.parse(data, url: LargeFeedTests.url) {
            starts.append(UInt(bitPattern: $0.baseAddress))
        }
        #expect(feed.episodes.count == 12_000)
        let (base, end) = data.withUnsafeBytes { raw in
            (UInt(bitPattern: raw.baseAddress), UInt(bitPattern: raw.baseAddress) + UInt(raw.count))
        }
        #expect(!starts.isEmpty)
        #expect(starts.allSatisfy { $0 < base || $0 >= end })
    }

    /// The reader looks for carriage returns only a little ahead of itself: one met megabytes into the document
    /// makes it read the document again with normalized line ends, as if they had been normalized first.
    @Test func aLateCarriageReturnReadsAsANormalizedDocument() throws {
        let xml = LargeFeedTests.document()
        let last = try #require(xml.range(of: "Episode 11999 &amp; more"))
        let late = xml.replacingCharacters(in: last, with: "Episode 11999\r\n&amp;\rmore")
        let normalized = late.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        let expected = try FeedParser.parse(Data(normalized.utf8), url: LargeFeedTests.url)
        #expect(expected.episodes.last?.title == "Episode 11999 & more")
        #expect(try FeedParser.parse(Data(late.utf8), url: LargeFeedTests.url) == expected)
        var stretches = 0
        let read = try FeedParser.parse(Data(late.utf8), url: LargeFeedTests.url) { _ in stretches += 1 }
        #expect(read == expected)
        #expect(stretches >= 3)
        #expect(try FeedTool.scan(Data(late.utf8)).textBytes == FeedTool.scan(Data(normalized.utf8)).textBytes)
    }

    /// An error is judged on the normalized document too, even when the reader met it before it looked at the
    /// carriage returns: here the text runs to the end in one piece, and the line of the end counts lone `\r`s.
    @Test func anErrorPastUncheckedCarriageReturnsHasTheNormalizedLine() throws {
        let text = String(repeating: "a", count: XMLReader.lineEndStep * 2) + String(repeating: "b\r", count: 5)
        let late = "<rss><channel><title>" + text
        let normalized = late.replacingOccurrences(of: "\r", with: "\n")
        let expected = try #require(feedError { try FeedParser.parse(Data(normalized.utf8), url: nil) })
        #expect(expected.message.contains("line 6"))
        #expect(feedError { try FeedParser.parse(Data(late.utf8), url: nil) } == expected)
    }

    @Test func theToolReadsAMappedFileWhoseReadPagesItDropped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("largefeed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.xml")

        let xml = LargeFeedTests.document()
        try Data(xml.utf8).write(to: file)
        let native = FeedTool.run(arguments: ["--url", LargeFeedTests.url, file.path])
        #expect(native.status == 0)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let expected = try encoder.encode(try FeedParser.parse(Data(xml.utf8), url: LargeFeedTests.url))
        #expect(native.standardOutput == expected + Data("\n".utf8))

        // The root's name lies in the first page, long dropped when the wrong end tag shows: it is read again.
        let broken = LargeFeedTests.document(ending: "</channel></rsx>\n")
        try Data(broken.utf8).write(to: file)
        let failure = FeedTool.run(arguments: [file.path])
        let error = try #require(feedError { try FeedParser.parse(Data(broken.utf8), url: nil) })
        #expect(failure.status == 1)
        #expect(failure.standardError == "Error: \(error.message) [\(error.code.rawValue)]\n")
        #expect(error.message.contains("expected </rss> but found </rsx>"))
    }

    /// The episode list is sized from how far the first 64 items reach; a document that goes on with megabytes of
    /// something else must not make it reserve room for hundreds of thousands of episodes.
    @Test func theEpisodeListIsNotSizedByWhatIsNotItems() throws {
        var xml = "<rss><channel><title>Tiny</title>"
        for number in 0..<65 { xml += "<item><guid>\(number)</guid></item>" }
        xml += "<junk>" + String(repeating: "a", count: 8 << 20) + "</junk><item><guid>last</guid></item>"
        xml += "</channel></rss>"
        let feed = try parse(xml)
        #expect(feed.episodes.count == 66)
        // One episode per KiB of document at most: about 8,200 for these 8 MiB.
        #expect(feed.episodes.capacity < 10_000)
    }
}
