import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// Titles come from feeds, and a feed may put terminal controls in them (`&#x1b;` in the XML is an ESC): set the
/// window title (OSC), recolour or clear the screen (CSI), ring the bell, rewrite the line (CR) or forge one (LF).
/// Text output shows every C0 and C1 control as a visible `\u{…}`; `--json` keeps the text exact.
@Suite struct TerminalEscapeTests {
    typealias Fixtures = PodcastFixtures

    /// OSC 0 (window title) ended by BEL, an SGR colour, a C1 CSI (U+009B) clearing the screen, CR LF and DEL.
    static let hostile = "Evil\u{1B}]0;owned\u{07}\u{1B}[31mRed\u{9B}2J\r\nForged\u{7F}"
    static let shown = #"Evil\u{1B}]0;owned\u{7}\u{1B}[31mRed\u{9B}2J\u{D}\u{A}Forged\u{7F}"#

    static let podcast = Fixtures.podcast(9, hostile, episodes: 1)

    @Test func controlsAreShownEscapedAndOtherTextIsLeftAlone() {
        #expect(TerminalText.escaped(Self.hostile) == Self.shown)
        #expect(TerminalText.escaped("Café — 日本語 \u{1F399} tab\there") == #"Café — 日本語 🎙 tab\u{9}here"#)
        #expect(TerminalText.escaped("") == "")
        #expect(TerminalText.escaped("\u{0}\u{1F}\u{80}\u{9F}\u{A0}") == #"\u{0}\u{1F}\u{80}\u{9F}"# + "\u{A0}")
    }

    @Test func subscribeAndUnsubscribe() {
        let subscribed = SubscribeCommand.render(SubscribeResult(podcast: Self.podcast, existing: true, queued: []))
        #expect(subscribed == "Already subscribed 9  \(Self.shown)  (1 episode, auto-download off, keep all)\n")
        let unsubscribed = UnsubscribeCommand.render(
            UnsubscribeResult(podcast: Self.podcast, cancelledDownloads: [], deletedFiles: [])
        )
        #expect(unsubscribed == "Unsubscribed 9  \(Self.shown)\n")
    }

    @Test func podcastsTableAndProblemLines() {
        var podcast = Self.podcast
        podcast.lastError = "the feed said \u{1B}[2J"
        let text = PodcastsCommand.render([podcast], timeZone: Fixtures.utc)
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x07 })
        #expect(text.contains(Self.shown.prefix(40)))
        #expect(text.hasSuffix("[error] 9  \(Self.shown): the feed said \\u{1B}[2J\n"))
    }

    @Test func episodesHeadingAndTable() {
        let result = EpisodesResult(podcast: Self.podcast, episodes: [Fixtures.episode(815, "Friday\u{1B}]2;x\u{07}")])
        #expect(
            EpisodesCommand.render(result, timeZone: Fixtures.utc) == """
                9  \(Self.shown): 1 episode, 0 new

                ID   DATE        DURATION  STATE  DOWNLOAD  TITLE
                815  2026-11-28  1h 2m     -      -         Friday\\u{1B}]2;x\\u{7}

                """
        )
    }

    @Test func rulesHeadingAndLists() {
        let result = RulesResult(
            podcast: Self.podcast,
            dryRun: false,
            autoDownload: .off,
            keep: nil,
            rules: [],
            download: [.init(id: 815, title: "A\u{1B}[8m", published: nil, reason: nil)],
            delete: [],
            skipped: []
        )
        let text = RulesCommand.render(result, timeZone: Fixtures.utc)
        #expect(text.hasPrefix("9  \(Self.shown)\n"))
        #expect(text.contains(#"815  -     A\u{1B}[8m"#))
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B })
    }

    @Test func watchEscapesTitlesAndJSONStaysExact() async throws {
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"result":{"topics":["podcasts"]}}"#,
            Fixtures.eventLine(.refreshed, Self.podcast, newEpisodes: 1),
            #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
        ]
        let (run, _) = try await DownloadCommandTests().exchange(["watch", "--topic", "podcasts"], reply: lines)
        #expect(run.status == 0)
        #expect(
            run.stdout
                == "podcast 9  refreshed \(Self.shown)  1 new episode\n\(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping\n"
        )

        let (json, _) = try await DownloadCommandTests().exchange(["watch", "--json"], reply: lines)
        #expect(json.stdout == lines.dropFirst().map { $0 + "\n" }.joined())
        let event = try JSONDecoder().decode(RPCNotificationEnvelope.self, from: Data(lines[1].utf8))
        #expect(event.params.podcast.title == Self.hostile)
    }

    @Test func episodeEventLines() {
        let event = EpisodeEventParams(
            episode: 815,
            podcast: 9,
            title: "Gone\u{1B}[5m",
            at: "2026-11-29T12:00:00Z",
            file: nil,
            trashedTo: nil,
            reason: "played\u{07}"
        )
        #expect(
            PodcastText.episodeEventLine("episode.deleted", event)
                == #"episode 815  deleted Gone\u{1B}[5m: played\u{7}"#
        )
    }

    private struct RPCNotificationEnvelope: Decodable {
        var params: PodcastEventParams
    }
}
