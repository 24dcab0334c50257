import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// When podcasts refresh, with a hand-set clock and jitter.
@Suite struct RefreshScheduleTests {
    private let hour: Int64 = 3_600_000
    private let schedule = RefreshSchedule(interval: .seconds(3600))

    private func podcast(_ id: Int64, next: Int64?, gone: Bool = false, interval: Int64? = nil) -> PodcastRecord {
        var podcast = PodcastRecord(feedURL: "https://feeds.example/\(id)", subscribedAt: 0)
        podcast.id = id
        podcast.nextRefreshAt = next
        podcast.gone = gone
        podcast.refreshInterval = interval
        return podcast
    }

    @Test func theJitterIsTenPercentEitherWay() {
        let show = podcast(1, next: nil)
        #expect(schedule.nextRefresh(of: show, after: 0, jitter: 0) == hour * 9 / 10)
        #expect(schedule.nextRefresh(of: show, after: 0, jitter: 0.5) == hour)
        #expect(schedule.nextRefresh(of: show, after: 0, jitter: 1) == hour * 11 / 10)
        #expect(schedule.nextRefresh(of: show, after: 5, jitter: 7) == 5 + hour * 11 / 10)
    }

    @Test func aPodcastsOwnIntervalWinsAndCountsFromItsLastRefresh() {
        var show = podcast(1, next: 10 * hour, interval: 60_000)
        show.succeededAt = 100
        #expect(schedule.rescheduled(show, now: 5000, jitter: 0.5) == 100 + 60_000)
        show.succeededAt = nil
        #expect(schedule.rescheduled(show, now: 5000, jitter: 0.5) == 5000 + 60_000)
    }

    @Test func theLongestOverdueComeFirstAndGoneOnesWhenTheirDayIsUp() {
        let podcasts = [
            podcast(1, next: 50), podcast(2, next: nil), podcast(3, next: 10), podcast(4, next: 90, gone: true),
            podcast(5, next: 101),
        ]
        #expect(RefreshSchedule.due(podcasts, now: 100) == [2, 3, 1, 4])
        #expect(RefreshSchedule.nextDue(podcasts) == 10)
        #expect(RefreshSchedule.nextDue([podcast(4, next: 90, gone: true)]) == 90)
    }

    @Test func theRefresherSleepsAtLeastASecondAndOnlyWhenSomethingIsDue() {
        #expect(RefreshSchedule.wake(now: 1000, due: nil) == nil, "nothing due: no timer")
        #expect(RefreshSchedule.wake(now: 1000, due: 1200) == 2000)
        #expect(RefreshSchedule.wake(now: 1000, due: 31_000) == 31_000)
        #expect(RefreshSchedule.wake(now: 1000, due: 86_401_000) == 86_401_000, "a day away: no wake before it")
        #expect(RefreshSchedule.wake(now: .max - 10, due: .max) == .max)
    }
}
