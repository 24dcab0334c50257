import Foundation
import Testing

@testable import SinglecastFeeds

/// `podcast:chapters` and `podcast:transcript` as feeds write them: the links the daemon saves beside an episode.
@Suite struct SidecarLinkTests {
    @Test func chaptersAndSeveralTranscriptsWithTheirAttributes() throws {
        let feed = try parse(
            """
            <rss xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>P</title>
              <item><title>E</title><guid>e</guid>
                <podcast:chapters url="chapters/e.json" type="application/json+chapters"/>
                <podcast:transcript url="  https://example.com/e.vtt " type=" text/vtt " language="en" rel="captions"/>
                <podcast:transcript url="https://example.com/e.de.srt" type="application/x-subrip" language="de"/>
                <podcast:transcript url="https://example.com/e.json" type="application/json"/>
                <podcast:transcript url="https://example.com/e.html" type="text/html" language="en-US"></podcast:transcript>
              </item>
            </channel></rss>
            """
        )
        let episode = try #require(feed.episodes.first)
        // Relative URLs are resolved against the feed's URL; values are trimmed.
        #expect(episode.chaptersURL == "https://example.com/podcast/chapters/e.json")
        #expect(episode.chaptersType == "application/json+chapters")
        #expect(
            episode.transcripts == [
                Transcript(url: "https://example.com/e.vtt", type: "text/vtt", language: "en", rel: "captions"),
                Transcript(url: "https://example.com/e.de.srt", type: "application/x-subrip", language: "de"),
                Transcript(url: "https://example.com/e.json", type: "application/json"),
                Transcript(url: "https://example.com/e.html", type: "text/html", language: "en-US"),
            ]
        )
    }

    @Test func linksWithoutAURLAreLeftOut() throws {
        let feed = try parse(
            """
            <rss xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>P</title>
              <item><title>E</title><guid>e</guid>
                <podcast:chapters type="application/json+chapters"/>
                <podcast:chapters url="   " type="application/json+chapters"/>
                <podcast:transcript type="text/vtt" language="en"/>
                <podcast:transcript url="" type="text/vtt"/>
                <podcast:transcript url="https://example.com/e.srt"/>
              </item>
            </channel></rss>
            """
        )
        let episode = try #require(feed.episodes.first)
        #expect(episode.chaptersURL == nil)
        #expect(episode.chaptersType == nil)
        // One without a type is kept with an empty one: the daemon decides what it can save.
        #expect(episode.transcripts == [Transcript(url: "https://example.com/e.srt", type: "")])
    }

    @Test func aLaterChaptersLinkReplacesAnEarlierOneTypeAndAll() throws {
        let feed = try parse(
            """
            <rss xmlns:p="https://podcastindex.org/namespace/1.0"><channel><title>P</title>
              <item><title>E</title><guid>e</guid>
                <p:chapters url="https://example.com/first.json" type="application/json+chapters"/>
                <p:chapters url="https://example.com/second.json"/>
              </item>
              <item><title>F</title><guid>f</guid></item>
            </channel></rss>
            """
        )
        #expect(feed.episodes.map(\.chaptersURL) == ["https://example.com/second.json", nil])
        #expect(feed.episodes.map(\.chaptersType) == [nil, nil])
        #expect(feed.episodes.map(\.transcripts) == [[], []])
    }
}
