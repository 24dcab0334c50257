import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// The sync's decisions without a server: which requests, which local changes, the conflict rule, acknowledgements.
@Suite("Sync state machine")
struct SyncStateMachineTests {
    private func facts(
        outbox: [SyncOutboxEntry] = [],
        local: Set<String> = [],
        cursor: SyncCursor = SyncCursor(),
        flavor: SyncSettings.Flavor = .gpodder
    ) -> SyncRun.Facts {
        SyncRun.Facts(
            device: "home",
            flavor: flavor,
            cursor: cursor,
            outbox: outbox,
            localFeeds: local,
            registered: false
        )
    }

    private func changes(add: [String] = [], remove: [String] = [], at: Int64 = 100) -> SyncWire.SubscriptionChanges {
        SyncWire.SubscriptionChanges(add: add, remove: remove, timestamp: at)
    }

    private func play(_ episode: String, at: Int64, position: Int64 = 1800, device: String = "phone") -> SyncWire.Action
    {
        SyncWire.Action(
            podcast: "https://f/a",
            episode: episode,
            device: device,
            kind: .play,
            timestamp: at,
            position: position,
            total: 1800
        )
    }

    /// Runs a machine past the upload of the local subscription changes (answered with `uploaded`) to the subscription
    /// decision with one other device's changes (asked for after `since`).
    private func decide(
        _ run: inout SyncRun,
        _ pulled: SyncWire.SubscriptionChanges,
        since: Int64 = 0,
        uploaded: SyncWire.UploadResponse = .init(timestamp: 99, updateURLs: [:])
    ) -> [SyncRun.Action] {
        #expect(run.handle(.started) == [.send(.registerDevice)])
        var next = run.handle(.registered)
        if case .send(.pushSubscriptions)? = next.first { next = run.handle(.subscriptionsPushed(uploaded)) }
        #expect(next == [.send(.listDevices)])
        let listed = run.handle(.devicesListed([.init(id: "home"), .init(id: "phone")]))
        #expect(listed == [.send(.pullSubscriptions(device: "phone", since: since))])
        return run.handle(.subscriptionsPulled(device: "phone", pulled))
    }

    /// A machine that synced subscriptions before (nothing to change) and now waits for the episode actions.
    private func waitingForActions(_ outbox: [SyncOutboxEntry]) -> SyncRun {
        var cursor = SyncCursor()
        cursor.uploadedAll = true
        var run = SyncRun(facts(outbox: outbox, cursor: cursor))
        _ = decide(&run, changes(at: 1000))
        _ = run.handle(.subscriptionsApplied(failed: 0))
        return run
    }

    @Test("a first sync uploads every local subscription first, then applies the phone's adds but not its old removals")
    func firstSync() {
        var run = SyncRun(facts(local: ["https://f/local"]))
        #expect(run.handle(.started) == [.send(.registerDevice)])
        #expect(run.handle(.registered) == [.send(.pushSubscriptions(add: ["https://f/local"], remove: []))])
        #expect(run.handle(.subscriptionsPushed(.init(timestamp: 99, updateURLs: [:]))) == [.send(.listDevices)])
        _ = run.handle(.devicesListed([.init(id: "home"), .init(id: "phone")]))
        let applied = run.handle(
            .subscriptionsPulled(device: "phone", changes(add: ["https://f/a"], remove: ["https://f/local"]))
        )
        #expect(applied == [.applySubscriptions(subscribe: ["https://f/a"], unsubscribe: [])])
    }

    @Test("on the first sync, a phone's add in the server's spelling of a local feed is that feed, not a new one")
    func firstSyncRespelledFeed() {
        var run = SyncRun(facts(local: ["https://F.example/a,b"]))
        _ = run.handle(.started)
        #expect(run.handle(.registered) == [.send(.pushSubscriptions(add: ["https://F.example/a,b"], remove: []))])
        let respelled = ["https://F.example/a,b": "https://f.example/a%2Cb"]
        _ = run.handle(.subscriptionsPushed(.init(timestamp: 99, updateURLs: respelled)))
        _ = run.handle(.devicesListed([.init(id: "home"), .init(id: "phone")]))
        let applied = run.handle(.subscriptionsPulled(device: "phone", changes(add: ["https://f.example/a%2Cb"])))
        #expect(applied == [.applySubscriptions(subscribe: [], unsubscribe: [])])
        guard case .acknowledge(_, let saved)? = run.handle(.subscriptionsApplied(failed: 0)).first
        else {
            Issue.record("no acknowledgement")
            return
        }
        #expect(saved.aliases == ["https://f.example/a%2Cb": "https://F.example/a,b"])
    }

    @Test("a podcast unsubscribed here since the last sync is not brought back by a remote add")
    func noResurrection() {
        var cursor = SyncCursor()
        cursor.devicesSince["phone"] = 50
        cursor.uploadedAll = true
        let removed = SyncOutboxEntry(id: 7, kind: .remove, podcastURL: "https://f/a", at: 10)
        var run = SyncRun(facts(outbox: [removed], cursor: cursor))
        #expect(run.handle(.started) == [.send(.registerDevice)])
        #expect(run.handle(.registered) == [.send(.pushSubscriptions(add: [], remove: ["https://f/a"]))])
        _ = run.handle(.subscriptionsPushed(.init(timestamp: 99, updateURLs: [:])))
        _ = run.handle(.devicesListed([.init(id: "phone")]))
        let applied = run.handle(.subscriptionsPulled(device: "phone", changes(add: ["https://f/a"])))
        #expect(applied == [.applySubscriptions(subscribe: [], unsubscribe: [])])
        // Acknowledged only with the decision it took part in: a crash before keeps the removal pending.
        let next = run.handle(.subscriptionsApplied(failed: 0))
        guard case .acknowledge(let ids, _)? = next.first else {
            Issue.record("unexpected \(next)")
            return
        }
        #expect(ids == [7])
    }

    @Test("a remote removal unsubscribes, unless the podcast was subscribed here since the last sync")
    func remoteRemoval() {
        var cursor = SyncCursor()
        cursor.devicesSince["phone"] = 50
        cursor.uploadedAll = true
        let added = SyncOutboxEntry(id: 1, kind: .add, podcastURL: "https://f/new", at: 10)
        var run = SyncRun(facts(outbox: [added], local: ["https://f/old", "https://f/new"], cursor: cursor))
        let applied = decide(&run, changes(remove: ["https://f/old", "https://f/new"]), since: 50)
        #expect(applied == [.applySubscriptions(subscribe: [], unsubscribe: ["https://f/old"])])
    }

    @Test("one URL added and removed locally goes up once, as its last change")
    func lastLocalChangeWins() {
        var cursor = SyncCursor()
        cursor.uploadedAll = true
        let outbox = [
            SyncOutboxEntry(id: 1, kind: .add, podcastURL: "https://f/a", at: 1),
            SyncOutboxEntry(id: 2, kind: .remove, podcastURL: "https://f/a", at: 2),
            SyncOutboxEntry(id: 3, kind: .add, podcastURL: "https://f/b", at: 3),
        ]
        var run = SyncRun(facts(outbox: outbox, cursor: cursor))
        _ = run.handle(.started)
        #expect(run.handle(.registered) == [.send(.pushSubscriptions(add: ["https://f/b"], remove: ["https://f/a"]))])
        #expect(run.handle(.subscriptionsPushed(.init(timestamp: 101, updateURLs: [:]))) == [.send(.listDevices)])
        _ = run.handle(.devicesListed([.init(id: "phone")]))
        _ = run.handle(.subscriptionsPulled(device: "phone", changes()))
        var expected = cursor
        expected.devicesSince["phone"] = 100
        let acknowledged = run.handle(.subscriptionsApplied(failed: 0))
        #expect(acknowledged == [.acknowledge([1, 2, 3], expected), .send(.pullActions(since: 0))])
    }

    @Test("remote plays: the latest per episode, a finished play marks played, a newer local change wins")
    func actions() {
        let local = SyncOutboxEntry(
            id: 4,
            kind: .new,
            podcastURL: "https://f/a",
            episodeURL: "https://f/e3",
            at: 300_000
        )
        var run = waitingForActions([local])
        let remote = SyncWire.Actions(
            actions: [
                play("https://f/e1", at: 100, position: 10), play("https://f/e1", at: 200),  // finished later
                play("https://f/e2", at: 100, position: 10),  // stopped halfway
                play("https://f/e3", at: 200),  // older than the local unplayed mark
                play("https://f/e4", at: 100, device: "home"),  // singlecast's own
                SyncWire.Action(podcast: "https://f/a", episode: "https://f/e5", kind: .new, timestamp: 100),
                SyncWire.Action(podcast: "https://f/a", episode: "https://f/e6", kind: .download, timestamp: 100),
            ],
            timestamp: 200
        )
        let applied = run.handle(.actionsPulled(remote))
        #expect(
            applied == [
                .applyActions(
                    played: [.init(podcast: "https://f/a", episode: "https://f/e1")],
                    unplayed: [.init(podcast: "https://f/a", episode: "https://f/e5")]
                )
            ]
        )
        // The local unplayed mark goes up and is acknowledged with the new cursor; then the run finishes.
        let pushed = run.handle(.actionsApplied(unmatched: 0))
        #expect(pushed == [.send(.pushActions([local]))])
        let done = run.handle(.actionsPushed(.init(timestamp: 201, updateURLs: [:])))
        guard case .acknowledge(let ids, let final) = done.first, case .finish(let report, _)? = done.last else {
            Issue.record("unexpected \(done)")
            return
        }
        #expect(ids == [4])
        #expect(final.actionsSince == 200)
        #expect(report.uploadedActions == 1)
        #expect(report.ignoredActions == 2)
    }

    @Test("a local download or delete does not outweigh the phone's play of the episode")
    func downloadIsNoPlayedMark() {
        let downloaded = SyncOutboxEntry(
            id: 1,
            kind: .download,
            podcastURL: "https://f/a",
            episodeURL: "https://f/e1",
            at: 200_700
        )
        var run = waitingForActions([downloaded])
        // Played in the same second the download completed: the API's timestamps are whole seconds.
        let applied = run.handle(.actionsPulled(.init(actions: [play("https://f/e1", at: 200)], timestamp: 200)))
        #expect(
            applied == [.applyActions(played: [.init(podcast: "https://f/a", episode: "https://f/e1")], unplayed: [])]
        )
    }

    @Test("a URL the server rewrote on upload names the local podcast in its later changes and actions")
    func rewrittenURLs() {
        var cursor = SyncCursor()
        cursor.devicesSince["phone"] = 50
        let added = SyncOutboxEntry(id: 1, kind: .add, podcastURL: "HTTP://Feeds.Example/a", at: 1)
        var run = SyncRun(facts(outbox: [added], local: ["HTTP://Feeds.Example/a"], cursor: cursor))
        let rewritten = ["HTTP://Feeds.Example/a": "http://feeds.example/a"]
        _ = decide(&run, changes(at: 60), since: 50, uploaded: .init(timestamp: 61, updateURLs: rewritten))
        guard
            case .acknowledge(_, let saved)? = run.handle(
                .subscriptionsApplied(failed: 0)
            ).first
        else {
            Issue.record("no acknowledgement")
            return
        }
        #expect(saved.aliases == ["http://feeds.example/a": "HTTP://Feeds.Example/a"])

        // The next sync: the phone removes the feed by the server's spelling, and plays an episode of it.
        var next = SyncRun(facts(local: ["HTTP://Feeds.Example/a"], cursor: saved))
        let applied = decide(&next, changes(remove: ["http://feeds.example/a"]), since: 60)
        #expect(applied == [.applySubscriptions(subscribe: [], unsubscribe: ["HTTP://Feeds.Example/a"])])
        _ = next.handle(.subscriptionsApplied(failed: 0))
        var played = play("https://f/e1", at: 100)
        played.podcast = "http://feeds.example/a"
        let marked = next.handle(.actionsPulled(.init(actions: [played], timestamp: 100)))
        #expect(
            marked == [
                .applyActions(played: [.init(podcast: "HTTP://Feeds.Example/a", episode: "https://f/e1")], unplayed: [])
            ]
        )
    }

    @Test("actions go up in batches of 1000, each acknowledged on its own")
    func batches() {
        let outbox = (1...2500).map {
            SyncOutboxEntry(
                id: Int64($0),
                kind: .download,
                podcastURL: "https://f/a",
                episodeURL: "https://f/\($0)",
                at: 1
            )
        }
        var run = waitingForActions(outbox)
        _ = run.handle(.actionsPulled(.init(actions: [], timestamp: 5)))
        var sizes: [Int] = []
        var actions = run.handle(.actionsApplied(unmatched: 0))
        while case .send(.pushActions(let batch))? = actions.last {
            sizes.append(batch.count)
            actions = run.handle(.actionsPushed(.init(timestamp: 6, updateURLs: [:])))
        }
        #expect(sizes == [1000, 1000, 500])
        guard case .finish(let report, _)? = actions.last else {
            Issue.record("unexpected \(actions)")
            return
        }
        #expect(report.uploadedActions == 2500)
    }

    @Test("a remote add whose feed could not be fetched is asked for again next time")
    func failedSubscribeKeepsTheCursor() {
        var cursor = SyncCursor()
        cursor.devicesSince["phone"] = 50
        cursor.uploadedAll = true
        var run = SyncRun(facts(cursor: cursor))
        _ = decide(&run, changes(add: ["https://f/down"], at: 90), since: 50)
        let actions = run.handle(.subscriptionsApplied(failed: 1))
        #expect(actions == [.acknowledge([], cursor), .send(.pullActions(since: 0))])
    }

    @Test("the first sync asks for the last 90 days of actions by the server's clock; later ones from the cursor")
    func firstActionsWindow() {
        let now: Int64 = 1_796_421_678
        var run = SyncRun(facts())
        _ = run.handle(.started)
        #expect(run.handle(.registered) == [.send(.pushSubscriptions(add: [], remove: []))])
        let next = run.handle(.subscriptionsPushed(.init(timestamp: now + 1, updateURLs: [:])))
        #expect(next == [.send(.listDevices)])
        _ = run.handle(.devicesListed([.init(id: "phone")]))
        _ = run.handle(.subscriptionsPulled(device: "phone", changes(at: now)))
        let pulled = run.handle(.subscriptionsApplied(failed: 0))
        #expect(pulled.last == .send(.pullActions(since: now + 1 - SyncRun.firstActionsWindow)))
    }

    @Test("later syncs ask for actions again from the late-upload window before the cursor")
    func lateActionsWindow() {
        let now: Int64 = 1_796_421_678
        var cursor = SyncCursor()
        cursor.actionsSince = now - 3600
        cursor.uploadedAll = true
        var later = SyncRun(facts(cursor: cursor))
        _ = decide(&later, changes(at: now))
        #expect(
            later.handle(.subscriptionsApplied(failed: 0)).last
                == .send(.pullActions(since: now - 3600 - SyncRun.lateActionsWindow))
        )
        // A phone whose clock runs a year ahead: its action's time is no cursor, the server's clock is.
        _ = later.handle(
            .actionsPulled(.init(actions: [play("https://f/e1", at: now + 31_536_000)], timestamp: now + 31_536_000))
        )
        let done = later.handle(.actionsApplied(unmatched: 0))
        guard case .finish(_, let final)? = done.last else {
            Issue.record("unexpected \(done)")
            return
        }
        #expect(final.actionsSince == now)
    }

    @Test("a remote action read again in the overlap does not undo a newer one of singlecast's own")
    func overlapIsIdempotent() {
        var run = waitingForActions([])
        let remote = SyncWire.Actions(
            actions: [
                play("https://f/e1", at: 100),
                SyncWire.Action(
                    podcast: "https://f/a",
                    episode: "https://f/e1",
                    device: "home",
                    kind: .new,
                    timestamp: 150
                ),
                SyncWire.Action(
                    podcast: "https://f/a",
                    episode: "https://f/e2",
                    device: "home",
                    kind: .download,
                    timestamp: 150
                ),
            ],
            timestamp: 150
        )
        #expect(run.handle(.actionsPulled(remote)) == [.applyActions(played: [], unplayed: [])])
        guard case .finish(let report, _)? = run.handle(.actionsApplied(unmatched: 0)).last else {
            Issue.record("no finish")
            return
        }
        #expect(report.ignoredActions == 0)
    }

    @Test("a failure ends the run with the cursor as it was acknowledged so far")
    func failure() {
        var run = SyncRun(facts())
        _ = run.handle(.started)
        let error = SyncError(.unauthorized, "refused")
        #expect(run.handle(.failed(error)) == [.fail(error, SyncCursor())])
        #expect(run.handle(.registered) == [])
    }

    @Test("the Nextcloud flavour has no devices: one account-wide list")
    func nextcloud() {
        var run = SyncRun(facts(flavor: .nextcloud))
        #expect(run.handle(.started) == [.send(.pushSubscriptions(add: [], remove: []))])
        let pulled = run.handle(.subscriptionsPushed(.init(timestamp: 99, updateURLs: [:])))
        #expect(pulled == [.send(.pullSubscriptions(device: "", since: 0))])
    }
}

@Suite("Sync schedule")
struct SyncScheduleTests {
    @Test("success waits the interval, jittered by a tenth; transient failures back off; a 401 waits for the user")
    func schedule() {
        var schedule = SyncSchedule(interval: .seconds(900))
        schedule.succeeded(at: 0, random: 0)
        #expect(schedule.nextDelay == .seconds(810))
        schedule.succeeded(at: 0, random: 1)
        #expect(schedule.nextDelay == .seconds(990))
        schedule.failed(SyncError(.unreachable, "down"), at: 0, random: 1)
        #expect(schedule.nextDelay == .seconds(30))
        schedule.failed(SyncError(.unreachable, "down"), at: 0, random: 1)
        #expect(schedule.nextDelay == .seconds(60))
        for _ in 0..<10 { schedule.failed(SyncError(.badResponse, "html"), at: 0, random: 1) }
        #expect(schedule.nextDelay == .seconds(900))
        schedule.failed(SyncError(.unauthorized, "401"), at: 0, random: 1)
        #expect(schedule.nextDelay == nil)
        #expect(schedule.nextAttempt == nil)
        schedule.credentialsChanged()
        #expect(schedule.nextDelay == .seconds(1))
    }
}
