import Foundation
import SinglecastProtocol
import Testing

/// Episode lists are read and written by hand (``JSONByteReader``, ``JSONByteWriter``); what they read and write
/// must be what `JSONDecoder` and `WireCoding`'s `JSONEncoder` read and write.
@Suite struct ByteJSONTests {
    static let awkward = "Quote \" backslash \\ slash / tab \t newline \n nul \u{0} bell \u{7} del \u{7F} é 😀 \u{2028}"

    static let podcast = PodcastInfo(
        id: 3,
        title: "The \"Daily\"",
        author: "Ada",
        feedURL: "https://feeds.example.com/3.xml",
        link: nil,
        description: awkward,
        artworkURL: nil,
        artworkPath: nil,
        itunesID: 42,
        episodes: 2,
        newEpisodes: 1,
        autoDownload: .latest(3),
        keep: nil,
        refreshedAt: "2026-11-29T11:58:30Z",
        succeededAt: nil,
        nextRefreshAt: nil,
        lastError: nil,
        gone: false,
        hasCredentials: false
    )

    static let full = EpisodeInfo(
        id: 9_007_199_254_740_993,
        podcastID: 3,
        title: awkward,
        description: "<p>notes</p>",
        guid: "urn:uuid:1",
        link: "https://example.com/1",
        published: "2026-11-28T23:30:00Z",
        durationSeconds: 3723,
        enclosureURL: "https://cdn.example.com/1.mp3?a=1&b=/2",
        enclosureType: "audio/mpeg",
        enclosureLength: Int64.max,
        season: 2,
        episode: -1,
        chaptersURL: "https://example.com/c.json",
        transcriptURL: "https://example.com/t.vtt",
        isNew: true,
        downloadID: Int64.min,
        downloadState: .completed,
        file: "/home/ada/Podcasts/Daily/1.mp3",
        episodeType: "bonus",
        playedAt: "2026-11-29T08:00:00Z",
        pinned: true,
        skipped: #"title excludes "trailer""#
    )

    /// Every optional field left out.
    static let bare = try! JSONDecoder().decode(
        EpisodeInfo.self,
        from: Data(#"{"id":2,"podcast_id":3,"title":"","description":"","new":false}"#.utf8)
    )

    static let result = EpisodesResult(podcast: podcast, episodes: [full, bare])

    @Test func writesWhatJSONEncoderWrites() throws {
        let expected = try WireCoding.encoder().encode(Self.result)
        #expect(try WireCoding.encoded(Self.result).data == expected)
        let inbox = InboxResult(episodes: [Self.bare, Self.full], podcasts: [Self.podcast])
        #expect(try WireCoding.encoded(inbox).data == WireCoding.encoder().encode(inbox))
    }

    @Test func writesARefreshAsJSONEncoderDoes() throws {
        var full = Self.podcast
        full.link = "https://example.com/"
        full.artworkURL = "https://example.com/art.png"
        full.artworkPath = "/home/ada/.cache/singlecast/artwork/3.png"
        full.keep = 5
        full.succeededAt = "2026-11-29T11:58:30Z"
        full.nextRefreshAt = "2026-11-29T12:58:30Z"
        full.lastError = Self.awkward
        full.gone = true
        full.hasCredentials = true
        full.duplicateItems = 2
        full.nameTemplate = "{podcast}/{title}"
        full.folder = "Daily"
        full.refreshInterval = 3600
        full.rules = ["title_include": "news", "episodes": "latest:3", "title_exclude": #"trailer|"x""#]
        full.autoDownload = .allNew
        let result = RefreshResult(refreshed: [
            .init(podcast: Self.podcast, outcome: "not_modified", newEpisodes: 0, queued: [], error: nil),
            .init(
                podcast: full,
                outcome: "updated",
                newEpisodes: 3,
                queued: [7, -1, Int64.max],
                error: "a \"reason\""
            ),
        ])
        #expect(try WireCoding.encoded(result).data == WireCoding.encoder().encode(result))
        #expect(
            try WireCoding.encoded(RefreshResult(refreshed: [])).data
                == WireCoding.encoder().encode(RefreshResult(refreshed: []))
        )
        for brief in [
            RefreshResult(refreshed: [], notModified: []),
            RefreshResult(refreshed: result.refreshed, notModified: [3, Int64.min, Int64.max]),
        ] {
            #expect(try WireCoding.encoded(brief).data == WireCoding.encoder().encode(brief))
        }
    }

    @Test func writesAnEnqueueAsJSONEncoderDoes() throws {
        let result = EnqueueResult(downloads: [
            .init(id: 1, url: "https://cdn.example.com/a.mp3?x=1&y=/", existing: false, file: "/home/ada/a.mp3"),
            .init(
                id: Int64.max,
                url: "https://cdn.example.com/b.mp3",
                existing: true,
                file: Self.awkward,
                state: .paused,
                pauseReason: "outside_window",
                episode: DownloadEpisode(id: 7, title: Self.awkward, podcastID: -3, podcast: "Caf\u{e9} \"News\"")
            ),
            .init(
                id: 3,
                url: "https://cdn.example.com/c.mp3",
                existing: false,
                file: "",
                state: .queued,
                episode: DownloadEpisode(id: 8, title: "", podcastID: 3, podcast: "")
            ),
        ])
        #expect(try WireCoding.encoded(result).data == WireCoding.encoder().encode(result))
        let empty = EnqueueResult(downloads: [])
        #expect(try WireCoding.encoded(empty).data == WireCoding.encoder().encode(empty))
    }

    @Test func writesRulesAsJSONEncoderDoes() throws {
        let skipped = RulesResult.Episode(id: 5, title: Self.awkward, published: nil, reason: "shorter than 10m")
        let result = RulesResult(
            podcast: Self.podcast,
            dryRun: true,
            autoDownload: .latest(2),
            keep: 4,
            rules: [
                .init(key: "title_exclude", value: #"trailer|"x""#, source: "podcast"),
                .init(key: "min_duration", value: "10m", source: "configuration"),
            ],
            download: [.init(id: Int64.max, title: "", published: "2026-11-28T23:30:00Z", reason: nil)],
            delete: [.init(id: -1, title: "Old", published: nil, reason: Self.awkward)],
            skipped: [skipped, skipped]
        )
        #expect(try WireCoding.encoded(result).data == WireCoding.encoder().encode(result))
        let empty = RulesResult(
            podcast: Self.podcast,
            dryRun: false,
            autoDownload: .off,
            keep: nil,
            rules: [],
            download: [],
            delete: [],
            skipped: []
        )
        #expect(try WireCoding.encoded(empty).data == WireCoding.encoder().encode(empty))
    }

    @Test func everyControlCharacterIsEscapedAsJSONEncoderDoes() throws {
        var episode = Self.bare
        episode.title = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
        var writer = JSONByteWriter()
        episode.write(to: &writer)
        #expect(Data(writer.bytes) == (try WireCoding.encoder().encode(episode)))
    }

    @Test func readsWhatJSONEncoderWrites() throws {
        let data = try WireCoding.encoder().encode(Self.result)
        #expect(try JSONByteReader.decode(EpisodesResult.self, from: data) == Self.result)
        let inbox = InboxResult(episodes: [Self.full], podcasts: [Self.podcast])
        #expect(try JSONByteReader.decode(InboxResult.self, from: WireCoding.encoder().encode(inbox)) == inbox)
    }

    @Test func readsWhatJSONDecoderReads() throws {
        // White space, escapes (a surrogate pair too), explicit nulls and members this client does not know.
        let text = """
             { "unknown": {"a": ["}", "\\"]", {"b": [1, 2.5e3, true, null]}]},
              "id" : 5, "podcast_id":3, "title": "caf\\u00e9 \\ud83d\\ude00 \\/ \\"x\\"\\n", "description": "",
              "guid": null, "duration_seconds": 12, "new": false, "download_state": "paused",
              "later": "a string with \\\\ and } inside", "last": ["\\\\", "\\\\\\""] }
            """
        let data = Data(text.utf8)
        let expected = try JSONDecoder().decode(EpisodeInfo.self, from: data)
        #expect(try JSONByteReader.decode(EpisodeInfo.self, from: data) == expected)
        #expect(expected.title == "café 😀 / \"x\"\n")
    }

    @Test(
        arguments: [
            #"{"id":1,"podcast_id":3,"title":"t","new":false}"#,  // no description
            #"{"id":1.5,"podcast_id":3,"title":"t","description":"","new":false}"#,
            #"{"id":"1","podcast_id":3,"title":"t","description":"","new":false}"#,
            #"{"id":99999999999999999999,"podcast_id":3,"title":"t","description":"","new":false}"#,
            #"{"id":1,"podcast_id":3,"title":"t","description":"","new":false,"download_state":"lost"}"#,
            #"{"id":1,"podcast_id":3,"title":"t","description":"","new":0}"#,
            #"{"id":1,"podcast_id":3,"title":"t","description":"","new":false"#,
            #"{"id":1,"podcast_id":3,"title":"t","description":"","new":false} x"#,
            #"{"id":1,"podcast_id":3,"title":"t\"# + "\u{1}" + #"","description":"","new":false}"#,
            #"{"id":1,"podcast_id":3,"title":"t\q","description":"","new":false}"#,
            "",
        ]
    )
    func refusesWhatJSONDecoderRefuses(_ text: String) {
        let data = Data(text.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(EpisodeInfo.self, from: data) }
        #expect(throws: JSONByteError.self) { try JSONByteReader.decode(EpisodeInfo.self, from: data) }
    }
}
