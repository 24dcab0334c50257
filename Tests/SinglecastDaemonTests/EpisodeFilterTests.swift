import SinglecastDaemon
import SinglecastStore
import Testing

/// Episode rules (filters) and the reasons they give, with no store and no network.
@Suite struct EpisodeFilterTests {
    private let now: Int64 = 1_800_000_000_000
    private let day: Int64 = 86_400_000

    private func episode(
        _ id: Int64,
        _ title: String = "Episode",
        duration: Int? = 1800,
        age days: Int64 = 1,
        type: String? = nil,
        downloaded: Bool = false
    ) -> EpisodePolicy.Candidate {
        EpisodePolicy.Candidate(
            id: id,
            title: "\(title) \(id)",
            enclosureURL: "https://cdn.example/\(id).mp3",
            hasDownload: downloaded,
            durationSeconds: duration,
            date: now - days * day,
            episodeType: type
        )
    }

    private func rules(_ settings: [EpisodeRules.Key: String]) throws -> EpisodeRules {
        var rules = EpisodeRules()
        for (key, value) in settings { try rules.set(key, to: value) }
        return rules
    }

    @Test func titleFiltersAreCaseInsensitiveSubstringsOrExpressions() throws {
        let policy = EpisodePolicy(
            fetch: .allNew,
            keep: nil,
            rules: try rules([.titleExclude: "TRAILER", .titleInclude: "/^(interview|episode)\\b/"])
        )
        #expect(policy.skip(episode(1, "Interview"), now: now) == nil)
        #expect(policy.skip(episode(2, "Season trailer"), now: now)?.description == #"title excludes "TRAILER""#)
        #expect(
            policy.skip(episode(3, "Bonus"), now: now)?.description
                == "title does not include /^(interview|episode)\\b/"
        )
        #expect(
            policy.wanted(
                newest: [],
                inserted: [episode(1, "interview"), episode(2, "trailer")],
                initial: false,
                now: now
            ) == [1]
        )
    }

    @Test func durationAgeAndTypeRulesNameWhatSkipped() throws {
        let policy = EpisodePolicy(
            fetch: .allNew,
            keep: nil,
            rules: try rules([.minDuration: "10m", .maxDuration: "2h", .maxAge: "30d", .episodeTypes: "full,bonus"])
        )
        #expect(policy.skip(episode(1, duration: 300), now: now)?.description == "shorter than 10m")
        #expect(policy.skip(episode(2, duration: 3 * 3600), now: now)?.description == "longer than 2h")
        #expect(policy.skip(episode(3, age: 31), now: now)?.description == "older than 30d")
        #expect(policy.skip(episode(4, type: "trailer"), now: now)?.description == "episode type trailer")
        // No duration and no type: nothing to hold against the episode (a missing type is a full episode).
        #expect(policy.skip(episode(5, duration: nil), now: now) == nil)
        #expect(policy.skip(episode(6, type: "bonus"), now: now) == nil)
    }

    @Test func latestTakesTheNewestTheRulesLetThrough() throws {
        let policy = EpisodePolicy(fetch: .latest(2), keep: nil, rules: try rules([.titleExclude: "trailer"]))
        let newest = [episode(9, "Trailer"), episode(8), episode(7, "trailer"), episode(6), episode(5)]
        #expect(policy.wanted(newest: newest, inserted: [], initial: true, now: now) == [8, 6])
        #expect(policy.hasEnough(Array(newest.prefix(3)), readAll: false, now: now) == false)
        #expect(policy.hasEnough(newest, readAll: false, now: now))
    }

    @Test func playedAndDeletedEpisodesAreNotFetchedAgain() {
        let policy = EpisodePolicy(fetch: .latest(3), keep: nil)
        var played = episode(3)
        played.played = true
        var deleted = episode(2)
        deleted.fileDeletedReason = "over max_storage 1G"
        #expect(policy.wanted(newest: [played, deleted, episode(1)], inserted: [], initial: true, now: now) == [1])
        #expect(policy.skip(deleted, now: now)?.description == "file deleted (over max_storage 1G)")
    }

    @Test func deleteOlderThanAlsoKeepsOldEpisodesFromBeingFetched() throws {
        let policy = EpisodePolicy(fetch: .latest(5), keep: nil, rules: try rules([.deleteOlderThan: "7d"]))
        #expect(policy.skip(episode(1, age: 8), now: now)?.description == "older than 7d")
    }

    @Test(
        "wrong values are refused with what is wrong",
        arguments: [
            (
                EpisodeRules.Key.titleInclude, "/a(b/",
                "title_include '/a(b/' is not a usable pattern: missing closing parenthesis at character 5"
            ),
            (
                .titleExclude, "/[z-a]/",
                "title_exclude '/[z-a]/' is not a usable pattern: range out of order in character class at character 5"
            ),
            (.minDuration, "ten", "min_duration must be a duration such as 10m or 90s, or empty; got 'ten'"),
            (.maxAge, "-3d", "max_age must be an age such as 30d, 2w or 12h, or empty; got '-3d'"),
            (.maxAge, "1e300d", "max_age must be at most 36500d (100 years); got '1e300d'"),
            (
                .deleteOlderThan, "106751980000d",
                "delete_older_than must be at most 36500d (100 years); got '106751980000d'"
            ),
            (.maxDuration, "36501d", "max_duration must be at most 36500d (100 years); got '36501d'"),
            (
                .episodeTypes, "full,teaser",
                "episode_types must be a comma-separated list of full, trailer and bonus; got 'full,teaser'"
            ),
        ]
    )
    func wrongValuesAreRefused(key: EpisodeRules.Key, value: String, message: String) {
        var rules = EpisodeRules()
        #expect(throws: EpisodeRules.Problem(message: message, key: key)) { try rules.set(key, to: value) }
    }

    @Test func contradictionsAreRefusedWithTheReason() throws {
        let durations = EpisodePolicy(
            fetch: .allNew,
            keep: nil,
            rules: try rules([.minDuration: "2h", .maxDuration: "1h"])
        )
        #expect(throws: EpisodePolicy.Problem.self) { try durations.validate() }
        #expect(
            (try? rules([.minDuration: "2h", .maxDuration: "1h"]).validate()) == nil
        )
        let ages = try rules([.maxAge: "30d", .deleteOlderThan: "7d"])
        #expect(
            throws: EpisodeRules.Problem(
                message:
                    "delete_older_than 7d is shorter than max_age 30d: episodes would be downloaded and deleted at once",
                key: .deleteOlderThan
            )
        ) { try ages.validate() }
    }

    @Test func aPodcastsOwnRuleWinsRuleByRule() throws {
        let defaults = try rules([.titleExclude: "trailer", .minDuration: "5m", .maxAge: "30d"])
        let own = try rules([.titleExclude: "teaser", .maxAge: "none"])
        let merged = own.over(defaults)
        #expect(merged.value(of: .titleExclude) == "teaser")
        #expect(merged.value(of: .minDuration) == "5m")
        // Turned off for the podcast: the configured rule does not apply to it.
        #expect(merged.value(of: .maxAge) == nil)
        #expect(own.value(of: .maxAge) == "none")
        #expect(EpisodeRules(stored: own.stored) == own)
    }

    @Test func theStoredFormReadsBack() throws {
        let original = try rules([
            .titleInclude: "/news|weekly/", .titleExclude: "trailer", .minDuration: "600", .maxDuration: "2h",
            .maxAge: "2w", .episodeTypes: "bonus,full", .deletePlayedAfter: "7d", .deleteOlderThan: "90d",
        ])
        let stored = try #require(original.stored)
        #expect(EpisodeRules(stored: stored) == original)
        #expect(original.value(of: .minDuration) == "10m")
        #expect(original.value(of: .episodeTypes) == "full,bonus")
        #expect(EpisodeRules(stored: nil).isEmpty)
    }
}
