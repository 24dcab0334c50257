import Foundation
import SinglecastFeeds
import Testing

@testable import SinglecastDaemon

/// The personal feed documents rendered from values, without a store.
@Suite struct PersonalFeedDocumentTests {
    private let podcast = PersonalFeedPodcast(
        id: 7,
        title: "A & B <Show>",
        author: nil,
        description: "",
        link: nil,
        language: "de",
        subscribedAt: 1_800_000_000_000,
        hasArtwork: true
    )

    private func episode(_ id: Int64, name: String, publishedAt: Int64?, type: String?) -> PersonalFeedEpisode {
        PersonalFeedEpisode(
            id: id,
            podcastID: 7,
            title: "Title \u{1}\"\(id)\"",
            description: "a < b\nc",
            guid: "g&\(id)",
            link: nil,
            publishedAt: publishedAt,
            durationSeconds: nil,
            season: 2,
            episodeNumber: nil,
            episodeType: nil,
            file: ServableFile(path: "/d/Show/" + name, root: "/d", announcedType: type),
            size: 1234
        )
    }

    @Test func itemsAreEscapedAndPointAtTheMediaRoute() throws {
        let document = PersonalFeedDocument(baseURL: "https://user:pw@host.example:8372/")
        #expect(document.baseURL == "https://host.example:8372")
        let feed = PersonalFeed(
            podcasts: [podcast],
            episodes: [
                episode(1, name: "Ep #1 ü?.m4a", publishedAt: 1_800_000_000_999, type: "bogus"),
                episode(2, name: "two.mp3", publishedAt: nil, type: "audio/x-mpeg"),
            ]
        )
        let bytes = document.rss(feed, podcast: 7)
        #expect(bytes == document.rss(feed, podcast: 7))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("pw@") && !text.contains("user:"))
        #expect(text.contains("<title>A &amp; B &lt;Show&gt;</title>"))
        #expect(text.contains("<language>de</language>"))
        // A control character cannot be in an XML document at all; it is left out.
        #expect(text.contains("<title>Title \"1\"</title>"))
        #expect(text.contains("<description>a &lt; b\nc</description>"))
        #expect(text.contains("<guid isPermaLink=\"false\">g&amp;1</guid>"))
        #expect(
            text.contains(
                "<enclosure url=\"https://host.example:8372/media/1/Ep%20%231%20%C3%BC%3F.m4a\" length=\"1234\" type=\"audio/mp4\"/>"
            )
        )
        #expect(text.contains("type=\"audio/x-mpeg\""))
        #expect(text.contains("<pubDate>Fri, 15 Jan 2027 08:00:00 GMT</pubDate>"))
        #expect(text.components(separatedBy: "<pubDate>").count == 2, "an undated episode has no pubDate")
        #expect(text.contains("<itunes:image href=\"https://host.example:8372/artwork/7\"/>"))
        #expect(text.contains("<itunes:season>2</itunes:season>"))
        // singlecast's own parser reads it back.
        let parsed = try FeedParser.parse(Data(bytes), url: document.feedURL(7))
        #expect(parsed.title == "A & B <Show>")
        #expect(parsed.episodes.map { $0.enclosure?.url } == feed.episodes.map { document.mediaURL($0) })
    }

    @Test func chaptersAndTranscriptsSavedBesideAnEpisodeAreLinkedThroughTheMediaRoute() throws {
        let document = PersonalFeedDocument(baseURL: "http://127.0.0.1:8372")
        var first = episode(1, name: "one.mp3", publishedAt: 1_800_000_000_000, type: nil)
        first.sidecars = [
            PersonalFeedSidecar(
                kind: .chapters,
                language: nil,
                mimeType: "application/json+chapters",
                rel: nil,
                file: ServableFile(path: "/d/Show/one.mp3.chapters.json", root: "/d", announcedType: nil)
            ),
            PersonalFeedSidecar(
                kind: .transcript,
                language: "en\"",
                mimeType: "text/vtt",
                rel: "captions",
                file: ServableFile(path: "/d/Show/one.mp3.en.vtt", root: "/d", announcedType: nil)
            ),
        ]
        let bytes = document.rss(PersonalFeed(podcasts: [podcast], episodes: [first]), podcast: 7)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(
            text.contains(
                #"<podcast:chapters url="http://127.0.0.1:8372/media/1/one.mp3.chapters.json" type="application/json+chapters"/>"#
            )
        )
        #expect(
            text.contains(
                #"<podcast:transcript url="http://127.0.0.1:8372/media/1/one.mp3.en.vtt" type="text/vtt" language="en&quot;" rel="captions"/>"#
            )
        )
        // singlecast's own parser reads them back as a podcast app would.
        let parsed = try #require(try FeedParser.parse(Data(bytes), url: document.feedURL(7)).episodes.first)
        #expect(parsed.chaptersURL == "http://127.0.0.1:8372/media/1/one.mp3.chapters.json")
        #expect(parsed.transcripts.map(\.url) == ["http://127.0.0.1:8372/media/1/one.mp3.en.vtt"])
    }

    @Test func theOPMLNamesEveryFeedAndItsBytesFollowTheSubscriptions() throws {
        let document = PersonalFeedDocument(baseURL: "http://[::1]:8372")
        let bytes = document.opml([podcast])
        #expect(bytes == document.opml([podcast]))
        let outlines = try OPML.parse(Data(bytes))
        #expect(outlines.map(\.feedURL) == ["http://[::1]:8372/feeds/7.xml", "http://[::1]:8372/feeds/all.xml"])
        var later = podcast
        later.subscribedAt += 1000
        #expect(document.opml([later]) != bytes)
    }
}
