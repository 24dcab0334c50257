import Foundation
import Testing

@testable import SinglecastFeeds

@Suite struct AtomSummaryTests {
    @Test func summaryIsTheDescriptionWhenThereIsNoContent() throws {
        let feed = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>T</title>
              <subtitle>Feed subtitle</subtitle>
              <entry><id>urn:1</id><title>Text</title><summary>Only a   summary</summary></entry>
              <entry><id>urn:2</id><title>HTML</title>
                <summary type="html">&lt;p&gt;An &lt;b&gt;HTML&lt;/b&gt; summary&lt;/p&gt;</summary></entry>
              <entry><id>urn:3</id><title>Content</title><summary>Sum</summary><content>Content wins</content></entry>
              <entry><id>urn:4</id><title>HTML content</title>
                <content type="html">&lt;p&gt;Body&lt;/p&gt;</content><summary>Sum</summary></entry>
            </feed>
            """
        )
        #expect(feed.description == "Feed subtitle")
        #expect(feed.episodes.map(\.description) == ["Only a summary", "An HTML summary", "Content wins", "Body"])
        #expect(feed.episodes[0].descriptionHTML == nil)
        #expect(feed.episodes[1].descriptionHTML == "<p>An <b>HTML</b> summary</p>")
        #expect(feed.episodes[3].descriptionHTML == "<p>Body</p>")
    }
}

@Suite struct GUIDLinkTests {
    @Test func guidThatIsNotAnAbsoluteURLIsNeverResolvedIntoALink() throws {
        let feed = try parse(
            """
            <rss><channel>
              <item><title>A</title><guid>h-4</guid></item>
              <item><title>B</title><guid isPermaLink="true">/episodes/5</guid></item>
              <item><title>C</title><guid>https://example.com/episodes/6</guid></item>
              <item><title>D</title><guid isPermaLink="false">https://example.com/episodes/7</guid></item>
              <item><title>E</title><guid>https://example.com/episodes/8</guid><link>https://example.com/e</link></item>
            </channel></rss>
            """,
            url: "https://example.com/podcast/feeds/main.xml"
        )
        #expect(
            feed.episodes.map(\.link) == [nil, nil, "https://example.com/episodes/6", nil, "https://example.com/e"]
        )
        #expect(
            feed.episodes.map(\.guid) == [
                "h-4", "/episodes/5", "https://example.com/episodes/6", "https://example.com/episodes/7",
                "https://example.com/episodes/8",
            ]
        )
        #expect(feed.episodes[0].identity == "h-4")
    }
}

@Suite struct DuplicateItemTests {
    @Test func itemsSharingAGUIDKeepTheFirstAndAreCounted() throws {
        let feed = try parse(
            """
            <rss><channel>
              <item><title>First</title><guid>g-1</guid></item>
              <item><title>Other</title><guid>g-2</guid></item>
              <item><title>Second</title><guid>g-1</guid></item>
              <item><title>Third</title><guid>g-1</guid></item>
              <item><title>Again</title><guid>g-2</guid></item>
            </channel></rss>
            """
        )
        #expect(feed.episodes.map(\.title) == ["First", "Other"])
        #expect(feed.duplicateItems == 3)
        #expect(feed.duplicateIdentities == ["g-1", "g-2"])
    }

    @Test func duplicateIdentitiesAreBounded() throws {
        var xml = "<rss><channel>"
        for index in 0..<(Feed.duplicateIdentityLimit + 5) {
            xml += "<item><guid>d-\(index)</guid></item><item><guid>d-\(index)</guid></item>"
        }
        xml += "</channel></rss>"
        let feed = try parse(xml)
        #expect(feed.episodes.count == Feed.duplicateIdentityLimit + 5)
        #expect(feed.duplicateItems == Feed.duplicateIdentityLimit + 5)
        #expect(feed.duplicateIdentities == (0..<Feed.duplicateIdentityLimit).map { "d-\($0)" })
    }
}

@Suite struct BatchedParseTests {
    @Test func episodesArriveInBoundedBatchesInDocumentOrder() throws {
        var xml = "<rss><channel><title>Batched</title>"
        for index in 0..<2_500 { xml += "<item><guid>b-\(index)</guid><title>E\(index)</title></item>" }
        xml += "<item><guid>b-7</guid></item><language>en</language></channel></rss>"
        var batches: [[Episode]] = []
        let feed = try FeedParser.parse(Data(xml.utf8), url: nil, batchSize: 1_000) { batch in batches.append(batch) }
        #expect(batches.map(\.count) == [1_000, 1_000, 500])
        #expect(batches.joined().map(\.guid) == (0..<2_500).map { "b-\($0)" })
        #expect(feed.episodes.isEmpty)
        #expect(feed.title == "Batched")
        #expect(feed.language == "en")
        #expect(feed.duplicateItems == 1)
        // The whole-document parse gives the same episodes.
        #expect(try parse(xml).episodes == Array(batches.joined()))
    }
}

@Suite struct FeedToolBatchTests {
    @Test func summaryInBatchesCountsEpisodesAndDuplicates() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feedtool-\(UUID().uuidString).xml")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            "<rss><channel><title>T</title><item><guid>a</guid></item><item><guid>b</guid></item><item><guid>a</guid></item></channel></rss>"
                .utf8
        )
        .write(to: file)
        for arguments in [["--summary"], ["--summary", "--batch-size", "1"]] {
            let outcome = FeedTool.run(arguments: arguments + [file.path])
            #expect(outcome.status == 0)
            #expect(
                String(decoding: outcome.standardOutput, as: UTF8.self) == "T\t2 episodes, 1 duplicate items left out\n"
            )
        }
        let zero = FeedTool.run(arguments: ["--summary", "--batch-size", "0", file.path])
        #expect(zero.status == 64)
        #expect(zero.standardError.hasPrefix("Error: The value '0' is invalid for '--batch-size'."))
    }
}
