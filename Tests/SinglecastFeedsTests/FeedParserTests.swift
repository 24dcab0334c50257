import Foundation
import Testing

@testable import SinglecastFeeds

/// Parses `xml` as fetched from `url`.
func parse(_ xml: String, url: String? = "https://example.com/podcast/feed.xml") throws -> Feed {
    try FeedParser.parse(Data(xml.utf8), url: url)
}

/// The error `body` throws, or `nil`.
func feedError(_ body: () throws -> some Any) -> FeedError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? FeedError
    }
}

@Suite struct RSSTests {
    @Test func channelAndItemFields() throws {
        let feed = try parse(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
                 xmlns:content="http://purl.org/rss/1.0/modules/content/">
            <channel>
              <title>  My
                 Podcast </title>
              <link>https://example.com/</link>
              <description><![CDATA[<p>About <b>this</b> show.</p>]]></description>
              <language>en-us</language>
              <itunes:author>Jane Doe</itunes:author>
              <itunes:image href="cover.jpg"/>
              <itunes:new-feed-url>https://new.example.com/feed.xml</itunes:new-feed-url>
              <itunes:complete>Yes</itunes:complete>
              <itunes:explicit>clean</itunes:explicit>
              <itunes:type>Serial</itunes:type>
              <itunes:keywords>one, two,three</itunes:keywords>
              <itunes:owner><itunes:name>Jane</itunes:name><itunes:email>jane@example.com</itunes:email></itunes:owner>
              <itunes:category text="Society &amp; Culture"><itunes:category text="Documentary"/></itunes:category>
              <item>
                <title>Episode 1</title>
                <link>/episodes/1</link>
                <guid isPermaLink="false">ep-1</guid>
                <pubDate>Mon, 06 Jul 2020 04:00:00 GMT</pubDate>
                <description>Short text.</description>
                <content:encoded><![CDATA[<p>Long <em>notes</em>.</p>]]></content:encoded>
                <enclosure url="media/ep1.mp3" length="1234" type="audio/mpeg"/>
                <itunes:duration>1:02:03</itunes:duration>
                <itunes:season>2</itunes:season>
                <itunes:episode>7</itunes:episode>
                <itunes:episodeType>Trailer</itunes:episodeType>
                <itunes:explicit>yes</itunes:explicit>
                <itunes:image href="https://cdn.example.com/ep1.jpg"/>
                <itunes:subtitle>Sub</itunes:subtitle>
              </item>
            </channel>
            </rss>
            """
        )
        #expect(feed.format == .rss)
        #expect(feed.title == "My Podcast")
        #expect(feed.link == "https://example.com/")
        #expect(feed.description == "About this show.")
        #expect(feed.language == "en-us")
        #expect(feed.author == "Jane Doe")
        #expect(feed.artworkURL == "https://example.com/podcast/cover.jpg")
        #expect(feed.newFeedURL == "https://new.example.com/feed.xml")
        #expect(feed.isComplete)
        #expect(feed.explicit == false)
        #expect(feed.showType == "serial")
        #expect(feed.keywords == ["one", "two", "three"])
        #expect(feed.owner == Owner(name: "Jane", email: "jane@example.com"))
        #expect(feed.categories == [["Society & Culture", "Documentary"]])

        let episode = try #require(feed.episodes.first)
        #expect(episode.title == "Episode 1")
        #expect(episode.link == "https://example.com/episodes/1")
        #expect(episode.guid == "ep-1")
        #expect(!episode.guidIsPermaLink)
        #expect(episode.published == Date(timeIntervalSince1970: 1_594_008_000))
        #expect(episode.description == "Short text.")
        #expect(episode.descriptionHTML == "<p>Long <em>notes</em>.</p>")
        #expect(
            episode.enclosure
                == Enclosure(url: "https://example.com/podcast/media/ep1.mp3", type: "audio/mpeg", length: 1234)
        )
        #expect(episode.durationSeconds == 3723)
        #expect(episode.season == 2)
        #expect(episode.episodeNumber == 7)
        #expect(episode.episodeType == "trailer")
        #expect(episode.explicit == true)
        #expect(episode.artworkURL == "https://cdn.example.com/ep1.jpg")
        #expect(episode.subtitle == "Sub")
    }

    @Test func podcasting20() throws {
        let feed = try parse(
            """
            <rss xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
              <title>P</title>
              <podcast:guid>917393e3-1b1e-5cef-ace4-edaa54e1f810</podcast:guid>
              <podcast:locked owner="a@example.com">yes</podcast:locked>
              <podcast:funding url="https://example.com/donate">Support the show!</podcast:funding>
              <podcast:funding url="https://example.com/patreon"/>
              <item>
                <title>E</title>
                <guid>e</guid>
                <enclosure url="https://example.com/e.mp3" type="audio/mpeg" length="0">
                  <podcast:integrity type="sri" value="sha384-abc"/>
                </enclosure>
                <podcast:chapters url="https://example.com/e.json" type="application/json+chapters"/>
                <podcast:transcript url="https://example.com/e.vtt" type="text/vtt" language="en" rel="captions"/>
                <podcast:transcript url="https://example.com/e.srt" type="application/srt"/>
                <podcast:season name="Two">2</podcast:season>
                <podcast:episode>3</podcast:episode>
                <podcast:person role="Guest" href="https://example.com/ann">Ann</podcast:person>
              </item>
            </channel></rss>
            """
        )
        #expect(feed.podcastGUID == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(feed.locked == true)
        #expect(
            feed.funding == [
                Funding(url: "https://example.com/donate", text: "Support the show!"),
                Funding(url: "https://example.com/patreon", text: ""),
            ]
        )
        let episode = try #require(feed.episodes.first)
        #expect(episode.integrity == Integrity(type: "sri", value: "sha384-abc"))
        #expect(episode.enclosure?.length == nil)
        #expect(episode.chaptersURL == "https://example.com/e.json")
        #expect(
            episode.transcripts == [
                Transcript(url: "https://example.com/e.vtt", type: "text/vtt", language: "en", rel: "captions"),
                Transcript(url: "https://example.com/e.srt", type: "application/srt"),
            ]
        )
        #expect(episode.season == 2)
        #expect(episode.episodeNumber == 3)
        #expect(episode.persons == [Person(name: "Ann", role: "guest", group: "cast", href: "https://example.com/ann")])
    }

    @Test func undeclaredAndRenamedPrefixes() throws {
        let feed = try parse(
            """
            <rss xmlns:it="http://www.itunes.com/DTDs/Podcast-1.0.dtd" xmlns:x="http://example.com/unknown">
            <channel><item>
              <title>E</title>
              <it:duration>00:20:00</it:duration>
              <itunes:season>4</itunes:season>
              <content:encoded><![CDATA[<p>Hi</p>]]></content:encoded>
              <media:thumbnail url="https://example.com/t.jpg"/>
              <x:duration>99</x:duration>
              <podcast:chapters url="https://example.com/c.json"/>
            </item></channel></rss>
            """
        )
        let episode = try #require(feed.episodes.first)
        #expect(episode.durationSeconds == 1200)
        #expect(episode.season == 4)
        #expect(episode.descriptionHTML == "<p>Hi</p>")
        #expect(episode.artworkURL == "https://example.com/t.jpg")
        #expect(episode.chaptersURL == "https://example.com/c.json")
    }

    @Test func enclosuresFromEveryPlaceInDocumentOrder() throws {
        let feed = try parse(
            """
            <rss xmlns:media="http://search.yahoo.com/mrss"><channel><item>
              <title>E</title>
              <enclosure url="https://example.com/cover.jpg" type="image/jpeg"/>
              <media:content url="HTTPS://CDN.Example.COM" fileSize="12" type="video/mp4"/>
              <media:group><media:content url="https://example.com/b.mp3" type="audio/mpeg"/></media:group>
              <enclosure type="audio/mpeg"/>
            </item></channel></rss>
            """
        )
        let episode = try #require(feed.episodes.first)
        #expect(
            episode.enclosures.map(\.url) == [
                "https://example.com/cover.jpg", "https://cdn.example.com/", "https://example.com/b.mp3",
            ]
        )
        #expect(episode.enclosure?.url == "https://cdn.example.com/")
        #expect(episode.enclosure?.length == 12)
    }

    @Test func descriptionRules() throws {
        let feed = try parse(
            """
            <rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
              <item><title>A</title><description>&lt;p&gt;One&lt;br/&gt;Two&lt;/p&gt;&lt;ul&gt;&lt;li&gt;x&lt;/li&gt;&lt;/ul&gt;</description></item>
              <item><title>B</title><description>Plain   text</description><itunes:summary>Summary wins</itunes:summary></item>
              <item><title>C</title><itunes:summary><![CDATA[<b>html</b> summary]]></itunes:summary></item>
            </channel></rss>
            """
        )
        #expect(feed.episodes[0].description == "One\nTwo\n\n• x")
        #expect(feed.episodes[0].descriptionHTML == "<p>One<br/>Two</p><ul><li>x</li></ul>")
        #expect(feed.episodes[1].description == "Summary wins")
        #expect(feed.episodes[1].descriptionHTML == nil)
        #expect(feed.episodes[2].description == "html summary")
        #expect(feed.episodes[2].descriptionHTML == "<b>html</b> summary")
    }

    @Test func relativeURLsAndXMLBase() throws {
        let feed = try parse(
            """
            <rss xml:base="https://media.example.org/shows/"><channel>
              <link>../home</link>
              <image><url>
                 art/cover.png
              </url></image>
              <item><title>E</title><guid>e/1</guid><enclosure url="//cdn.example.net/a.mp3"/></item>
              <item><title>F</title><guid>ep2</guid><enclosure url="f.mp3?x=1#t"/></item>
            </channel></rss>
            """,
            url: "https://example.com/feed.xml"
        )
        #expect(feed.baseURL == "https://media.example.org/shows/")
        #expect(feed.link == "https://media.example.org/home")
        #expect(feed.artworkURL == "https://media.example.org/shows/art/cover.png")
        #expect(feed.episodes[0].enclosure?.url == "https://cdn.example.net/a.mp3")
        #expect(feed.episodes[0].link == nil, "a guid is an identifier, not a relative link")
        #expect(feed.episodes[1].enclosure?.url == "https://media.example.org/shows/f.mp3?x=1#t")
    }

    @Test func identityFallsBackFromGUIDToLinkToEnclosure() throws {
        let feed = try parse(
            """
            <rss><channel>
              <item><title>A</title><guid isPermaLink="false">g</guid><link>https://example.com/a</link></item>
              <item><title>B</title><link>https://example.com/b</link></item>
              <item><title>C</title><enclosure url="https://example.com/c.mp3?token=1"/></item>
              <item><title>D</title></item>
            </channel></rss>
            """
        )
        #expect(feed.episodes.map(\.identity) == ["g", "https://example.com/b", "https://example.com/c.mp3\nC", "\nD"])
    }

    @Test func rss10AndUserlandNamespace() throws {
        let rdf = try parse(
            """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
              <channel><title>RDF</title></channel>
              <item><title>One</title><link>https://example.com/1</link><dc:date>2020-07-06T04:00:00Z</dc:date></item>
            </rdf:RDF>
            """
        )
        #expect(rdf.title == "RDF")
        #expect(rdf.episodes.first?.published == Date(timeIntervalSince1970: 1_594_008_000))
        let userland = try parse(
            #"<rss xmlns="http://backend.userland.com/rss2"><channel><title>U</title></channel></rss>"#
        )
        #expect(userland.title == "U")
    }
}

@Suite struct AtomTests {
    @Test func atomFeed() throws {
        let feed = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.com/blog/">
              <title type="html">A &lt;b&gt;bold&lt;/b&gt; feed</title>
              <subtitle>Sub</subtitle>
              <link href="https://example.com/blog/feed.atom" rel="self" type="application/atom+xml"/>
              <link href="./"/>
              <link rel="hub" href="https://hub.example.com/"/>
              <logo>logo.png</logo>
              <author><name>Ann</name></author>
              <entry>
                <title>Entry</title>
                <id>urn:uuid:1</id>
                <link href="entry-1"/>
                <link rel="enclosure" href="audio/1.mp3" type="audio/mpeg" length="99"/>
                <published>2003-12-13T18:30:02+01:00</published>
                <updated>2004-01-01T00:00:00Z</updated>
                <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hello <b>there</b></p></div></content>
              </entry>
            </feed>
            """
        )
        #expect(feed.format == .atom)
        #expect(feed.title == "A bold feed")
        #expect(feed.description == "Sub")
        #expect(feed.link == "https://example.com/blog/")
        #expect(feed.artworkURL == "https://example.com/blog/logo.png")
        #expect(feed.author == "Ann")
        #expect(feed.links.map(\.rel) == ["self", "alternate", "hub"])
        let entry = try #require(feed.episodes.first)
        #expect(entry.guid == "urn:uuid:1")
        #expect(!entry.guidIsPermaLink)
        #expect(entry.link == "https://example.com/blog/entry-1")
        #expect(
            entry.enclosure == Enclosure(url: "https://example.com/blog/audio/1.mp3", type: "audio/mpeg", length: 99)
        )
        #expect(entry.published == Date(timeIntervalSince1970: 1_071_336_602))
        #expect(entry.description == "Hello there")
    }
}

@Suite struct HostileInputTests {
    @Test func billionLaughsIsRefusedQuickly() {
        var xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            xml += " <!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
        }
        xml += "]>\n<rss><channel><title>&lol9;</title></channel></rss>"
        let start = Date()
        let error = feedError { try FeedParser.parse(Data(xml.utf8), url: nil) }
        #expect(error?.code == .entityRefused)
        #expect(Date().timeIntervalSince(start) < 1)
    }

    @Test(arguments: [
        #"<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><rss><channel><title>&xxe;</title></channel></rss>"#,
        #"<!DOCTYPE rss [<!ENTITY xxe PUBLIC "-//X//Y" "http://127.0.0.1:9/x">]><rss><channel><title>&xxe;</title></channel></rss>"#,
        #"<!DOCTYPE rss [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd"> %p;]><rss/>"#,
    ])
    func externalEntitiesAreRefused(xml: String) {
        let error = feedError { try FeedParser.parse(Data(xml.utf8), url: nil) }
        #expect(error?.code == .entityRefused)
        #expect(error?.message.contains("never expanded or fetched") == true)
    }

    @Test func externalDTDReferenceIsSkippedNotFetched() throws {
        let feed = try parse(
            """
            <?xml version="1.0" encoding="ISO-8859-1"?>
            <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"
              "http://127.0.0.1:9/rss-0.91.dtd">
            <rss version="0.91"><channel><title>Caf&eacute; &amp; co&nbsp;&#x263A;</title></channel></rss>
            """
        )
        #expect(feed.title == "Café & co\u{A0}☺")
    }

    @Test func unknownEntitiesAndLoneAmpersandsStayText() throws {
        let feed = try parse("<rss><channel><title>AT&T &bogus; &#0; &#xD800;</title></channel></rss>")
        #expect(feed.title == "AT&T &bogus; \u{FFFD} \u{FFFD}")
    }

    @Test(arguments: [
        ("<html><body><p>Not a feed</body></html>", FeedError.Code.notAFeed, "HTML page"),
        ("<!DOCTYPE html>\n<html lang=en><head>", .notAFeed, "HTML page"),
        (#"{"version": "https://jsonfeed.org/version/1"}"#, .notAFeed, "JSON"),
        (#"<opml version="2.0"><body/></opml>"#, .notAFeed, "OPML"),
        (#"<foo xmlns="http://example.com/foo.xml"><bar/></foo>"#, .notAFeed, "<foo>"),
        (#"<baz:foo xmlns:baz="http://example.com/baz.xml"><baz:bar/></baz:foo>"#, .notAFeed, "<foo>"),
        ("<feed><title>no namespace</title></feed>", .notAFeed, "Atom namespace"),
        ("", .notXML, "empty"),
        ("plain text", .notXML, "start with '<'"),
        ("<rss><channel></rss>", .notXML, "expected </channel> but found </rss> at line 1"),
        ("<rss><channel>", .notXML, "ends inside <channel>"),
        ("<rss><channel><title a=b>x</title></channel></rss>", .notXML, "not quoted"),
        ("<rss/><rss/>", .notXML, "second root"),
    ])
    func nonFeedsGetClearErrors(xml: String, code: FeedError.Code, fragment: String) {
        let error = feedError { try FeedParser.parse(Data(xml.utf8), url: nil) }
        #expect(error?.code == code)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "no error")")
    }

    @Test func invalidUTF8IsReplacedNotFatal() throws {
        var bytes = Array("<rss><channel><title>Bad ".utf8)
        bytes += [0xFF, 0xC3, 0x28, 0xE2, 0x82]
        bytes += Array(" end</title><item><title>\u{E9}</title></item></channel></rss>".utf8)
        let feed = try FeedParser.parse(Data(bytes), url: nil)
        #expect(feed.title.hasPrefix("Bad \u{FFFD}"))
        #expect(feed.title.hasSuffix(" end"))
        #expect(feed.episodes.first?.title == "é")
    }

    @Test func declaredLatin1AndWindows1252AreDecoded() throws {
        for label in ["ISO-8859-1", "windows-1252"] {
            var bytes = Array("<?xml version=\"1.0\" encoding=\"\(label)\"?>\r\n<rss><channel><title>".utf8)
            bytes += [0x43, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x71, 0x94, 0x20, 0x80]  // Café “q” €
            bytes += Array("</title></channel></rss>".utf8)
            let feed = try FeedParser.parse(Data(bytes), url: nil)
            #expect(feed.title == "Café \u{201C}q\u{201D} €")
        }
    }

    @Test func utf16WithByteOrderMark() throws {
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><rss><channel><title>Ünïcode</title></channel></rss>"
        var data = Data([0xFF, 0xFE])
        for unit in xml.utf16 { data.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        #expect(try FeedParser.parse(data, url: nil).title == "Ünïcode")
    }

    @Test func unknownEncodingThatIsNotUTF8IsAnError() {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"koi8-r\"?><rss><channel><title>".utf8)
        bytes += [0xF0, 0xD2, 0xC9]
        bytes += Array("</title></channel></rss>".utf8)
        #expect(feedError { try FeedParser.parse(Data(bytes), url: nil) }?.code == .unsupportedEncoding)
    }

    @Test func limits() {
        let deep = String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)
        let xml = "<rss><channel><item>\(deep)</item></channel></rss>"
        #expect(feedError { try FeedParser.parse(Data(xml.utf8), url: nil) }?.code == .tooDeep)
        let small = FeedParser.Limits(maxBytes: 10)
        #expect(feedError { try FeedParser.parse(Data(xml.utf8), url: nil, limits: small) }?.code == .tooLarge)
    }

    /// 50 MB is five times libxml2's default limit, where FoundationXML's XMLParser stops.
    @Test func fiftyMegabyteFeedParses() throws {
        // Built from byte arrays: string interpolation of 50 MB is slow in a debug build.
        let padding = Array(
            String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", count: 16).utf8
        )
        let head = Array("<item><title>Episode</title><guid>g".utf8)
        let middle = Array(
            "</guid><enclosure url=\"https://example.com/e.mp3\" length=\"1\" type=\"audio/mpeg\"/><itunes:keywords>"
                .utf8
        )
        let tail = Array("</itunes:keywords></item>\n".utf8)
        let target = 50 * 1024 * 1024
        var xml = Array(
            "<rss xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>Big</title>\n".utf8
        )
        xml.reserveCapacity(target + 4096)
        var count = 0
        while xml.count < target {
            xml += head
            xml += String(count).utf8
            xml += middle
            xml += padding
            xml += tail
            count += 1
        }
        xml += Array("</channel></rss>".utf8)
        let feed = try FeedParser.parse(Data(xml), url: nil)
        #expect(feed.episodes.count == count)
        #expect(feed.episodes.last?.guid == "g\(count - 1)")
    }
}
