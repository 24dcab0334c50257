import SinglecastDaemon
import Testing

/// Retention: which downloaded files go and why, with a hand-set clock and no files.
@Suite struct RetentionTests {
    private let now: Int64 = 1_800_000_000_000
    private let day: Int64 = 86_400_000
    private let megabyte: Int64 = 1 << 20

    private func file(
        _ episode: Int64,
        podcast: Int64 = 1,
        age days: Int64,
        playedDaysAgo: Int64? = nil,
        pinned: Bool = false,
        size: Int64 = 100 << 20,
        download: Int64? = nil
    ) -> Retention.File {
        Retention.File(
            episodeID: episode,
            podcastID: podcast,
            downloadID: download ?? episode + 1000,
            date: now - days * day,
            playedAt: playedDaysAgo.map { now - $0 * day },
            pinned: pinned,
            size: size
        )
    }

    private func deleted(_ plan: Retention.Plan) -> [Int64: String] {
        Dictionary(uniqueKeysWithValues: plan.deletions.map { ($0.file.episodeID, $0.reason.description) })
    }

    @Test func playedFilesGoAfterTheDelayAndTheNextOneIsDue() {
        let files = [file(1, age: 20, playedDaysAgo: 8), file(2, age: 10, playedDaysAgo: 2), file(3, age: 5)]
        let plan = Retention.plan(
            files: files,
            rules: [1: .init(deletePlayedAfter: 7 * day)],
            maxStorage: nil,
            now: now
        )
        #expect(deleted(plan) == [1: "played more than 7d ago"])
        #expect(plan.nextDue == now + 5 * day)
    }

    @Test func oldFilesGoAndPinnedOnesNeverDo() {
        let files = [file(1, age: 100), file(2, age: 95, pinned: true), file(3, age: 10)]
        let plan = Retention.plan(files: files, rules: [1: .init(deleteOlderThan: 90 * day)], maxStorage: nil, now: now)
        #expect(deleted(plan) == [1: "older than 90d"])
        #expect(plan.nextDue == now + 80 * day)
    }

    @Test func keepLetsGoOfTheOldestBeyondItButNotPinnedOnes() {
        let files = [file(1, age: 1), file(2, age: 2), file(3, age: 3, pinned: true), file(4, age: 4)]
        let plan = Retention.plan(files: files, rules: [1: .init(keep: 2)], maxStorage: nil, now: now)
        #expect(deleted(plan) == [4: "beyond the newest 2 kept"])
    }

    @Test func aBudgetDeletesPlayedOldestFirstThenUnplayedAcrossPodcasts() {
        let files = [
            file(1, podcast: 1, age: 50), file(2, podcast: 2, age: 40, playedDaysAgo: 1),
            file(3, podcast: 1, age: 30, playedDaysAgo: 1), file(4, podcast: 2, age: 60, pinned: true),
            file(5, podcast: 2, age: 20), file(6, podcast: 1, age: 10),
        ]
        // Six files of 100 MiB against a 350 MiB budget: three go.
        let plan = Retention.plan(files: files, rules: [:], maxStorage: 350 * megabyte, now: now)
        #expect(plan.deletions.map(\.file.episodeID) == [2, 3, 1])
        #expect(Set(deleted(plan).values) == ["over max_storage 350M"])
    }

    @Test func otherDownloadsCountTowardsTheBudgetAndRuleDeletionsFreeItFirst() {
        let files = [file(1, age: 100), file(2, age: 10), file(3, age: 5)]
        let plan = Retention.plan(
            files: files,
            rules: [1: .init(deleteOlderThan: 90 * day)],
            maxStorage: 250 * megabyte,
            otherUsage: 100 * megabyte,
            now: now
        )
        #expect(deleted(plan) == [1: "older than 90d", 2: "over max_storage 250M"])
    }

    @Test func aSharedFileCountsOnceAndIsFreedOnlyWhenEveryEpisodeLetsGo() {
        let files = [
            file(1, podcast: 1, age: 30, download: 77), file(2, podcast: 2, age: 30, download: 77), file(3, age: 1),
        ]
        // 200 MiB in two files; a 150 MiB budget needs the shared file gone, so both its episodes go.
        let plan = Retention.plan(files: files, rules: [:], maxStorage: 150 * megabyte, now: now)
        #expect(Set(plan.deletions.map(\.file.episodeID)) == [1, 2])
    }

    @Test func whatTheListenerAskedForIsNotUndoneByKeepOrAgeButByPlayed() {
        var asked = file(9, age: 200)
        asked.requested = true
        let files = [file(1, age: 1), file(2, age: 2), asked]
        let rules: [Int64: Retention.Rules] = [1: .init(keep: 2, deleteOlderThan: 90 * day)]
        #expect(Retention.plan(files: files, rules: rules, maxStorage: nil, now: now).deletions.isEmpty)
        asked.playedAt = now - 8 * day
        let played = Retention.plan(
            files: [file(1, age: 1), asked],
            rules: [1: .init(keep: 2, deletePlayedAfter: 7 * day)],
            maxStorage: nil,
            now: now
        )
        #expect(deleted(played) == [9: "played more than 7d ago"])
    }

    /// The budget makes room among what the rules downloaded: an episode the listener asked for goes only once
    /// played, however old it is.
    @Test func anUnplayedEpisodeTheListenerAskedForIsNeverEvictedForRoom() {
        var asked = file(9, age: 200)
        asked.requested = true
        let plan = Retention.plan(files: [asked, file(2, age: 1)], rules: [:], maxStorage: 150 * megabyte, now: now)
        #expect(deleted(plan) == [2: "over max_storage 150M"])
        let alone = Retention.plan(files: [asked], rules: [:], maxStorage: 50 * megabyte, now: now)
        #expect(alone.deletions.isEmpty)
        asked.playedAt = now - day
        let played = Retention.plan(files: [asked, file(2, age: 1)], rules: [:], maxStorage: 150 * megabyte, now: now)
        #expect(deleted(played) == [9: "over max_storage 150M"])
    }

    /// What singlecast moved to the Trash still takes room: it counts, and the oldest of it is emptied before any
    /// episode is deleted for the budget.
    @Test func singlecastsOwnTrashCountsAndIsEmptiedFirst() {
        let trashed = [
            Trash.OwnFile(path: "/t/files/new.mp3", size: 50 * megabyte, trashedAt: now - day),
            Trash.OwnFile(path: "/t/files/old.mp3", size: 50 * megabyte, trashedAt: now - 9 * day),
        ]
        let files = [file(1, age: 30, playedDaysAgo: 1), file(2, age: 1)]
        let one = Retention.plan(files: files, rules: [:], maxStorage: 250 * megabyte, trashed: trashed, now: now)
        #expect(one.purges.map(\.path) == ["/t/files/old.mp3"])
        #expect(one.deletions.isEmpty)
        let all = Retention.plan(files: files, rules: [:], maxStorage: 150 * megabyte, trashed: trashed, now: now)
        #expect(all.purges.map(\.path) == ["/t/files/old.mp3", "/t/files/new.mp3"])
        #expect(deleted(all) == [1: "over max_storage 150M"])
        let none = Retention.plan(files: files, rules: [:], maxStorage: nil, trashed: trashed, now: now)
        #expect(none.purges.isEmpty)
    }

    @Test func nothingIsDueWithoutRules() {
        let plan = Retention.plan(files: [file(1, age: 1000)], rules: [:], maxStorage: nil, now: now)
        #expect(plan.deletions.isEmpty)
        #expect(plan.nextDue == nil)
    }

    /// `delete_older_than` near `Int64.max` milliseconds overflowed `date + age` at every start.
    @Test func agesNearTheLargestTimeDoNotOverflow() {
        let files = [file(1, age: 10, playedDaysAgo: 2), file(2, age: -400)]
        let plan = Retention.plan(
            files: files,
            rules: [1: .init(deletePlayedAfter: .max, deleteOlderThan: .max - 1)],
            maxStorage: nil,
            now: now
        )
        #expect(plan.deletions.isEmpty)
        #expect(plan.nextDue == .max)
    }
}
