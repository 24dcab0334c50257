import SinglecastDaemon
import SinglecastStore
import Testing

/// The auto-download and keep policy, with no store and no network.
@Suite struct EpisodePolicyTests {
    private func episode(
        _ id: Int64,
        downloaded: Bool = false,
        url: String? = "https://cdn.example/e.mp3"
    )
        -> EpisodePolicy.Candidate
    {
        EpisodePolicy.Candidate(id: id, title: "Episode \(id)", enclosureURL: url, hasDownload: downloaded)
    }

    @Test func latestFillsUpTheNewestThatAreNotDownloaded() {
        let policy = EpisodePolicy(fetch: .latest(3), keep: nil)
        let newest = [episode(9), episode(8, downloaded: true), episode(7), episode(6)]
        #expect(policy.wanted(newest: newest, inserted: [], initial: true, now: 0) == [9, 7])
        #expect(policy.wanted(newest: newest, inserted: [episode(9)], initial: false, now: 0) == [9, 7])
    }

    /// `latest:N` means the N newest: an episode played, or whose file was deleted, keeps its place among them, so
    /// playing the newest never reaches back for an older one.
    @Test func latestDoesNotWalkBackPastPlayedOrDeletedEpisodes() {
        let policy = EpisodePolicy(fetch: .latest(2), keep: nil)
        var played = episode(9)
        played.played = true
        var deleted = episode(8)
        deleted.fileDeletedReason = "played"
        let newest = [played, deleted, episode(7), episode(6)]
        #expect(policy.wanted(newest: newest, inserted: [], initial: false, now: 0).isEmpty)
        #expect(policy.hasEnough(Array(newest.prefix(2)), readAll: false, now: 0))
    }

    /// An episode the rules now exclude, downloaded or not, is not one of the N newest.
    @Test func latestDoesNotCountWhatTheRulesExclude() {
        var rules = EpisodeRules()
        rules.titleExclude = try! TitlePattern("trailer")
        let policy = EpisodePolicy(fetch: .latest(2), keep: nil, rules: rules)
        let trailer = EpisodePolicy.Candidate(
            id: 9,
            title: "Trailer",
            enclosureURL: "https://cdn.example/t.mp3",
            hasDownload: true
        )
        let newest = [trailer, episode(8, downloaded: true), episode(7), episode(6)]
        #expect(policy.wanted(newest: newest, inserted: [], initial: false, now: 0) == [7])
        #expect(!policy.hasEnough(Array(newest.prefix(2)), readAll: false, now: 0))
    }

    @Test func allNewTakesOnlyWhatAppearsFromNowOn() {
        let policy = EpisodePolicy(fetch: .allNew, keep: nil)
        #expect(policy.wanted(newest: [episode(1)], inserted: [], initial: true, now: 0).isEmpty)
        #expect(policy.wanted(newest: [], inserted: [episode(4), episode(5)], initial: true, now: 0).isEmpty)
        #expect(policy.wanted(newest: [], inserted: [episode(4), episode(5)], initial: false, now: 0) == [4, 5])
    }

    @Test func offWantsNothing() {
        let policy = EpisodePolicy(fetch: .off, keep: 2)
        #expect(policy.wanted(newest: [episode(1)], inserted: [episode(1)], initial: false, now: 0).isEmpty)
    }

    @Test func enclosuresThatAreNotWebURLsAreSkipped() {
        let policy = EpisodePolicy(fetch: .allNew, keep: nil)
        let inserted = [
            episode(1, url: "file:///etc/passwd"), episode(2, url: nil), episode(3, url: "javascript:alert(1)"),
            episode(4, url: "http:///no-host"), episode(5),
        ]
        #expect(policy.wanted(newest: [], inserted: inserted, initial: false, now: 0) == [5])
    }

    @Test func contradictionsAreRefused() {
        #expect(throws: EpisodePolicy.Problem.keepBelowLatest(keep: 2, latest: 3)) {
            try EpisodePolicy(fetch: .latest(3), keep: 2).validate()
        }
        #expect(throws: EpisodePolicy.Problem.negativeKeep(-1)) {
            try EpisodePolicy(fetch: .off, keep: -1).validate()
        }
        #expect(throws: Never.self) { try EpisodePolicy(fetch: .latest(3), keep: 3).validate() }
        #expect(throws: Never.self) { try EpisodePolicy(fetch: .latest(3), keep: nil).validate() }
    }

    @Test func theStoredFormReadsBack() {
        for fetch: EpisodePolicy.Fetch in [.off, .allNew, .latest(1), .latest(250)] {
            #expect(EpisodePolicy.Fetch(stored: fetch.stored) == fetch)
        }
        #expect(EpisodePolicy.Fetch(stored: "latest:0") == nil)
        #expect(EpisodePolicy.Fetch(stored: "sometimes") == nil)
        var podcast = PodcastRecord(feedURL: "https://f.example/feed", subscribedAt: 0)
        podcast.autoDownload = "latest:4"
        podcast.keep = 6
        let policy = EpisodePolicy(podcast, defaults: EpisodeRules())
        #expect(policy.fetch == .latest(4) && policy.keep == 6)
    }

    /// An age near `Int64.max` milliseconds (one written before ages had a maximum, or a date far in the future)
    /// overflowed `date + age` at every start: the sum saturates, so the episode is simply not too old.
    /// The younger of max_age and delete_older_than decides, whichever of them is set.
    @Test(arguments: [
        (Int64?.some(10), Int64?.none, EpisodePolicy.Skip?.some(.olderThan(10))),
        (nil, 20, .olderThan(20)),
        (30, 20, .olderThan(20)),
        (20, 30, .olderThan(20)),
        (nil, nil, nil),
        (100, nil, nil),
    ])
    func theYoungerAgeDecides(maxAge: Int64?, deleteOlderThan: Int64?, expected: EpisodePolicy.Skip?) {
        var rules = EpisodeRules()
        rules.maxAge = maxAge
        rules.deleteOlderThan = deleteOlderThan
        let policy = EpisodePolicy(fetch: .allNew, keep: nil, rules: rules)
        let fiftyAgo = EpisodePolicy.Candidate(
            id: 1,
            title: "t",
            enclosureURL: "https://cdn.example/e.mp3",
            hasDownload: false,
            date: 1_000
        )
        #expect(policy.skip(fiftyAgo, now: 1_050) == expected)
    }

    @Test func agesAndDatesAtTheEdgesDoNotOverflow() {
        var rules = EpisodeRules()
        rules.maxAge = .max
        rules.deleteOlderThan = .max - 1
        rules.minDuration = .max
        let policy = EpisodePolicy(fetch: .allNew, keep: nil, rules: rules)
        let late = EpisodePolicy.Candidate(
            id: 1,
            title: "late",
            enclosureURL: "https://cdn.example/e.mp3",
            hasDownload: false,
            date: 1_800_000_000_000
        )
        #expect(policy.skip(late, now: 1_800_000_000_000) == nil)
        var future = late
        future.date = .max
        #expect(policy.skip(future, now: .max) == nil)
        var ancient = late
        ancient.date = .min
        #expect(policy.skip(ancient, now: .max) == .olderThan(.max - 1))
        #expect(EpisodePolicy.Skip.shorterThan(.max).description.hasPrefix("shorter than "))
    }

    @Test func skipTextsAreEachSkipsOwnDescription() throws {
        let trailer = try TitlePattern("trailer")
        let skips: [EpisodePolicy.Skip] = [
            .shorterThan(600), .longerThan(600), .shorterThan(60), .titleExcludes(trailer), .titleLacks(trailer),
            .episodeType("trailer"), .episodeType("bonus"), .played, .fileDeleted("retention"), .noEnclosure,
        ]
        var texts = EpisodePolicy.SkipTexts()
        for skip in skips + skips.reversed() {
            #expect(texts.text(skip) == skip.description)
        }
        #expect(texts.text(.shorterThan(600)) != texts.text(.shorterThan(60)))
    }
}
