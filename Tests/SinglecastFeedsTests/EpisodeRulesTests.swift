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
