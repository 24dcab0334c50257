import Foundation
import Testing

@testable import SinglecastFeeds

@Suite struct OPMLTests {
    @Test func roundTripWithHostileTitles() throws {
        let outlines = [
            OPMLOutline(
                title: "<&\">",
                feedURL: "https://example.com/feed?a=1&b=2",
                htmlURL: "https://example.com/<x>"
            ),
            OPMLOutline(title: "Tab\there\nand line 'quotes' & ]]> <!-- -->", feedURL: "https://e.com/2"),
            OPMLOutline(title: nil, feedURL: "https://e.com/untitled"),
            OPMLOutline(title: "Ünïcödé 🎙", feedURL: "https://e.com/u", htmlURL: nil),
        ]
        let created = Date(timeIntervalSince1970: 1_594_008_000)
        let document = OPML.document(title: "My <subscriptions> & more", outlines: outlines, created: created)
        let text = String(decoding: document, as: UTF8.self)
        #expect(text.contains("<dateCreated>Mon, 06 Jul 2020 04:00:00 GMT</dateCreated>"))
        #expect(text.contains("<title>My &lt;subscriptions&gt; &amp; more</title>"))
        #expect(try OPML.parse(document) == outlines)
    }

    @Test func nestedOutlinesAreFlattened() throws {
        let xml = """
            <?xml version="1.0"?>
            <opml version="1.1"><head><title>x</title></head><body>
              <outline text="Folder">
                <outline text="A" type="rss" xmlURL=" https://a.example.com/feed " htmlUrl="https://a.example.com/"/>
                <outline text="Nested"><outline title="B" text="ignored" xmlUrl="https://b.example.com/feed"/></outline>
                <outline text="Not a feed" type="link" url="https://example.com/"/>
              </outline>
              <outline type="rss" xmlUrl="https://c.example.com/feed"/>
            </body></opml>
            """
        #expect(
            try OPML.parse(Data(xml.utf8)) == [
                OPMLOutline(title: "A", feedURL: "https://a.example.com/feed", htmlURL: "https://a.example.com/"),
                OPMLOutline(title: "B", feedURL: "https://b.example.com/feed"),
                OPMLOutline(title: nil, feedURL: "https://c.example.com/feed"),
            ]
        )
    }

    @Test func refusesFeedsAndEntities() {
        let feed = feedError { try OPML.parse(Data("<rss><channel/></rss>".utf8)) }
        #expect(feed?.code == .notOPML)
        #expect(feed?.message.contains("subscribe to it directly") == true)
        let bomb = #"<!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]><opml><body/></opml>"#
        #expect(feedError { try OPML.parse(Data(bomb.utf8)) }?.code == .entityRefused)
    }
}
