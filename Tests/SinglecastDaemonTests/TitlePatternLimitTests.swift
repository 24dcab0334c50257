import SinglecastDaemon
import Testing

/// A title expression that cannot finish on a (hostile) title: PCRE2 stops at its limits, and the episode is held
/// back with the reason, whichever rule the expression is in. Before the limits, a catastrophic pattern cost ten
/// million steps per title and every PCRE2 error read as "no match", so `title_exclude` let the episode through.
@Suite struct TitlePatternLimitTests {
    private let now: Int64 = 1_800_000_000_000

    /// Nested quantifiers against a run of `a` that cannot end the title: exponential backtracking.
    private static let catastrophic = "/^(a+)+$/"
    private static let hostileTitle = String(repeating: "a", count: 40) + "!"

    private func candidate(_ title: String) -> EpisodePolicy.Candidate {
        EpisodePolicy.Candidate(
            id: 1,
            title: title,
            enclosureURL: "https://cdn.example/1.mp3",
            hasDownload: false,
            durationSeconds: 1800,
            date: now,
            episodeType: nil
        )
    }

    private func policy(_ key: EpisodeRules.Key, _ value: String) throws -> EpisodePolicy {
        var rules = EpisodeRules()
        try rules.set(key, to: value)
        return EpisodePolicy(fetch: .allNew, keep: nil, rules: rules)
    }

    @Test func aMatchThatGivesUpIsAFailureWithPCRE2sReason() throws {
        let pattern = try TitlePattern(Self.catastrophic)
        #expect(pattern.match(Self.hostileTitle) == .failed("match limit exceeded"))
        #expect(pattern.match("aaaa") == .matched)
        #expect(pattern.match("bbb") == .notMatched)
        #expect(try TitlePattern("trailer").match("The TRAILER") == .matched)
    }

    @Test func excludeHoldsTheEpisodeBackWhenTheMatchFails() throws {
        let policy = try policy(.titleExclude, Self.catastrophic)
        let clock = ContinuousClock()
        var skip: EpisodePolicy.Skip?
        let elapsed = clock.measure { skip = policy.skip(candidate(Self.hostileTitle), now: now) }
        #expect(skip?.description == "title pattern /^(a+)+$/ failed on this title: match limit exceeded")
        // Ten million steps took about a second here; the limit ends it long before.
        #expect(elapsed < .milliseconds(500))
        #expect(policy.skip(candidate("bbb"), now: now) == nil)
    }

    @Test func includeHoldsTheEpisodeBackWithTheReasonWhenTheMatchFails() throws {
        let policy = try policy(.titleInclude, Self.catastrophic)
        #expect(
            policy.skip(candidate(Self.hostileTitle), now: now)?.description
                == "title pattern /^(a+)+$/ failed on this title: match limit exceeded"
        )
        #expect(policy.skip(candidate("aaa"), now: now) == nil)
    }

    @Test func ordinaryPatternsOnLongTitlesStayWithinTheLimits() throws {
        let long = String(repeating: "word ", count: 20_000) + "interview"
        #expect(try TitlePattern("/\\binterview$/").match(long) == .matched)
        #expect(try TitlePattern("/(news|weekly)/").match(long) == .notMatched)
    }
}
