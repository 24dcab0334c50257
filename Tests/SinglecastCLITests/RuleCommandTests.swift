import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `rules`, `set --dry-run`, `played`/`unplayed`/`pin`/`unpin` and the rule states in `episodes`: the request each
/// sends and how each prints the answer.
@Suite struct RuleCommandTests {
    typealias Fixtures = PodcastFixtures

    private func exchange(_ arguments: [String], result: some Encodable) async throws -> (run: CLIRun, request: String)
    {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([DownloadFixtures.resultLine(result)]))
            let run = await runCLI(arguments + ["--socket", server.path])
            return (run, try server.requestLine())
        }
    }

    static let preview = RulesResult(
        podcast: Fixtures.daily,
        dryRun: true,
        autoDownload: .latest(3),
        keep: 5,
        rules: [
            .init(key: "title_exclude", value: "none", source: "podcast"),
            .init(key: "min_duration", value: "10m", source: "configuration"),
        ],
        download: [.init(id: 815, title: "Friday", published: "2026-11-28T05:00:00Z", reason: nil)],
        delete: [.init(id: 700, title: "Old", published: "2026-10-01T05:00:00Z", reason: "played more than 7d ago")],
        skipped: [.init(id: 812, title: "Short", published: nil, reason: "shorter than 10m")]
    )

    @Test func rulesSendsTheChangesAndPrintsWhatWouldHappen() async throws {
        let (run, request) = try await exchange(
            ["rules", "daily", "--title-exclude", "none", "--min-duration", "default", "--auto", "latest:3"],
            result: Self.preview
        )
        #expect(run.status == 0)
        #expect(
            request
                == DownloadCommandTests.request(
                    "rules",
                    #"{"auto_download":"latest:3","changes":{"min_duration":"","title_exclude":"none"},"podcast":"daily"}"#
                )
        )
        #expect(
            RulesCommand.render(Self.preview, timeZone: Fixtures.utc) == """
                3  The Daily (dry run: nothing was changed)

                RULE           VALUE     FROM
                auto           latest:3  podcast
                keep           5         podcast
                title_exclude  none      podcast
                min_duration   10m       configuration

                Would download (1):
                ID   DATE        TITLE
                815  2026-11-28  Friday

                Would delete (1):
                ID   DATE        TITLE  WHY
                700  2026-10-01  Old    played more than 7d ago

                Skipped (1):
                ID   DATE  TITLE  WHY
                812  -     Short  shorter than 10m

                """
        )
    }

    @Test func setDryRunAsksForThePreviewInsteadOfChanging() async throws {
        let (run, request) = try await exchange(
            ["set", "daily", "--max-age", "30d", "--dry-run"],
            result: Self.preview
        )
        #expect(run.status == 0)
        #expect(request == DownloadCommandTests.request("rules", #"{"changes":{"max_age":"30d"},"podcast":"daily"}"#))
        #expect(run.stdout.contains("(dry run: nothing was changed)"))
    }

    @Test func setSendsRulesByKey() async throws {
        let (_, request) = try await exchange(
            ["set", "daily", "--title-include", "/^news/", "--episode-types", "full,bonus"],
            result: PodcastResult(podcast: Fixtures.daily)
        )
        #expect(
            request
                == DownloadCommandTests.request(
                    "set",
                    #"{"podcast":"daily","rules":{"episode_types":"full,bonus","title_include":"\/^news\/"}}"#
                )
                || request
                    == DownloadCommandTests.request(
                        "set",
                        #"{"podcast":"daily","rules":{"episode_types":"full,bonus","title_include":"/^news/"}}"#
                    )
        )
    }

    /// A mark that changes nothing says so, and which command does the other thing.
    @Test func aMarkThatChangesNothingSaysWhatToUseInstead() {
        let none = EpisodeMarkResult(changed: [], unchanged: [813])
        #expect(
            PlayedCommand.render(none)
                == "Nothing to mark: 1 episode was played already; 'singlecastctl unplayed' takes the mark back.\n"
        )
        #expect(
            UnpinCommand.render(EpisodeMarkResult(changed: [], unchanged: [1, 2]))
                == "Nothing to mark: 2 episodes were unpinned already; 'singlecastctl pin' keeps their files.\n"
        )
    }

    @Test func marksTakeEpisodeIDsOrAWholePodcast() async throws {
        let result = EpisodeMarkResult(changed: [815, 814], unchanged: [813])
        let (run, request) = try await exchange(["played", "815", "814", "813"], result: result)
        #expect(request == DownloadCommandTests.request("played", #"{"episodes":[815,814,813]}"#))
        #expect(run.stdout == "Marked played: 2 episodes.\n1 episode was played already.\n")
        let (all, allRequest) = try await exchange(["pin", "--all", "daily"], result: result)
        #expect(allRequest == DownloadCommandTests.request("pin", #"{"all":true,"podcast":"daily"}"#))
        #expect(all.stdout == "Pinned 2 episodes.\n1 episode was pinned already.\n")
        let twoPodcasts = await runCLI(["unplayed", "--all", "a", "b"])
        #expect(twoPodcasts.status == 64)
        #expect(twoPodcasts.stderr.hasPrefix("Error: With --all, give one podcast"))
    }

    @Test func episodeStatesSayPlayedPinnedAndWhyARuleSkipped() {
        var episode = Fixtures.episodes[0]
        episode.skipped = #"title excludes "trailer""#
        #expect(PodcastText.state(episode) == #"skipped: title excludes "trailer""#)
        episode.skipped = nil
        episode.playedAt = "2026-11-29T08:00:00Z"
        episode.pinned = true
        #expect(PodcastText.state(episode) == "played, pinned")
        episode.downloadState = .completed
        #expect(PodcastText.state(episode) == "played, downloaded, pinned")
    }
}
