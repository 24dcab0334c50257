import SinglecastStore
import SinglecastSupport

/// One request of a sync, in the API's terms; the service turns it into a URL and a body (`SyncRequest+HTTP.swift`).
package enum SyncRequest: Sendable, Hashable {
    /// Registers (or updates) singlecast's device, with type `server`.
    case registerDevice
    case listDevices
    /// Subscription changes of one device (`""`: the account's, for the Nextcloud flavour) after `since`.
    case pullSubscriptions(device: String, since: Int64)
    case pushSubscriptions(add: [String], remove: [String])
    /// Episode actions of every device after `since`.
    case pullActions(since: Int64)
    case pushActions([SyncOutboxEntry])
}

/// What a finished sync did, for `sync`, `sync.completed` and the log.
package struct SyncReport: Sendable, Hashable {
    package var subscribed = 0
    package var unsubscribed = 0
    /// Remote adds not applied because the podcast was unsubscribed here since the last sync.
    package var keptUnsubscribed = 0
    package var markedPlayed = 0
    package var markedUnplayed = 0
    /// Remote actions for podcasts or episodes singlecast does not have, or of a kind it does not apply.
    package var ignoredActions = 0
    /// Remote entries that were unusable (not a URL, too long, unknown action).
    package var skippedEntries = 0
    package var uploadedSubscriptionChanges = 0
    package var uploadedActions = 0

    package init() {}
}

/// One sync, as a pure state machine: the service gathers facts and performs the actions it returns.
///
/// Order: register the device, push the local subscription changes, pull every other device's, apply them, pull
/// episode actions, apply them, push the local ones in batches. The local subscriptions go up first because the
/// server may store a URL in its own spelling (`update_urls`): known before the pull, that spelling names the local
/// podcast, and the first sync does not subscribe to it a second time. Each push is acknowledged (its outbox rows
/// deleted together with the new cursor) only after the server answered it, the subscription changes only after the
/// pull they were weighed against: a crash before repeats the upload, which the API tolerates (an add of a present
/// URL, an action with the same timestamp), and keeps the change pending for the conflict rule.
///
/// Conflict rule: a local change not uploaded yet is newer than the last sync, and for subscriptions the API gives
/// no time per change, so a pending local change of a URL wins over the server's change of it; above all a
/// podcast unsubscribed here is not brought back by a remote add. Episode actions carry times: the latest of the
/// remote action, a pending local one and singlecast's own uploaded one wins.
///
/// Episode actions are asked for again from ``lateActionsWindow`` before the cursor: some servers (the
/// gpodder-fastapi-router does) file actions by their own timestamp rather than by when they were
/// uploaded, so a phone that uploads last week's play after our last sync files it before our cursor. Reading an
/// action twice is harmless: marks are idempotent, and singlecast's own newer action of an episode outweighs an older
/// remote one read again.
package struct SyncRun: Sendable {
    /// What the service knows when the run starts.
    package struct Facts: Sendable, Hashable {
        package var device: String
        package var flavor: SyncSettings.Flavor
        package var cursor: SyncCursor
        /// The unacknowledged changes, oldest first.
        package var outbox: [SyncOutboxEntry]
        /// The feed URLs subscribed to now.
        package var localFeeds: Set<String>
        /// Whether the device was registered already in this daemon run.
        package var registered: Bool

        package init(
            device: String,
            flavor: SyncSettings.Flavor,
            cursor: SyncCursor,
            outbox: [SyncOutboxEntry],
            localFeeds: Set<String>,
            registered: Bool
        ) {
            self.device = device
            self.flavor = flavor
            self.cursor = cursor
            self.outbox = outbox
            self.localFeeds = localFeeds
            self.registered = registered
        }
    }

    /// A remote action to apply to one episode.
    package struct EpisodeKey: Sendable, Hashable {
        package var podcast: String
        package var episode: String
        package var guid: String?
    }

    package enum Event: Sendable {
        case started
        case registered
        case devicesListed([SyncWire.Device])
        case subscriptionsPulled(device: String, SyncWire.SubscriptionChanges)
        /// The remote changes were applied; how many remote adds could not be (the feed could not be fetched).
        case subscriptionsApplied(failed: Int)
        case subscriptionsPushed(SyncWire.UploadResponse)
        case actionsPulled(SyncWire.Actions)
        /// How many of the applied actions matched no episode here.
        case actionsApplied(unmatched: Int)
        case actionsPushed(SyncWire.UploadResponse)
        case failed(SyncError)
    }

    package enum Action: Sendable, Hashable {
        case send(SyncRequest)
        case applySubscriptions(subscribe: [String], unsubscribe: [String])
        case applyActions(played: [EpisodeKey], unplayed: [EpisodeKey])
        /// Delete these outbox rows and store the cursor, in one transaction.
        case acknowledge([Int64], SyncCursor)
        case finish(SyncReport, SyncCursor)
        case fail(SyncError, SyncCursor)
    }

    private enum Phase: Sendable {
        case idle, registering, pushingSubscriptions, listingDevices, pullingSubscriptions, applyingSubscriptions
        case pullingActions, applyingActions, pushingActions, done
    }

    /// The most actions uploaded in one request.
    package static let actionBatch = 1000

    private var phase = Phase.idle
    private let facts: Facts
    private var cursor: SyncCursor
    private var report = SyncReport()
    private var devicesToPull: [String] = []
    private var remoteAdds: [String] = []
    private var remoteRemoves: [String] = []
    /// The server's time, from its answers' timestamps.
    private var serverNow: Int64 = 0
    private var pendingActions: [[SyncOutboxEntry]] = []
    private var pushedSubscriptionIDs: [Int64] = []
    private var pushedActionIDs: [Int64] = []

    package init(_ facts: Facts) {
        self.facts = facts
        self.cursor = facts.cursor
    }

    package mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.done, _):
            return []
        case (_, .failed(let error)):
            phase = .done
            return [.fail(error, cursor)]
        case (.idle, .started):
            // The gpoddersync app knows no devices to register.
            if facts.flavor == .nextcloud || facts.registered { return pushSubscriptions() }
            phase = .registering
            return [.send(.registerDevice)]
        case (.registering, .registered):
            return pushSubscriptions()
        case (.pushingSubscriptions, .subscriptionsPushed(let response)):
            // The server's spelling of a URL it rewrote names the local podcast from now on.
            for (local, remote) in response.updateURLs { cursor.aliases[remote] = cursor.aliases[local] ?? local }
            serverNow = max(serverNow, response.timestamp)
            cursor.uploadedAll = true
            return pullSubscriptions()
        case (.listingDevices, .devicesListed(let devices)):
            devicesToPull = devices.map(\.id).filter { $0 != facts.device }
            return pullNextDevice()
        case (.pullingSubscriptions, .subscriptionsPulled(let device, let changes)):
            let firstPull = cursor.devicesSince[device] == nil
            remoteAdds += changes.add.map(local)
            // A device's first answer lists every removal it ever made: none of them is news.
            if !firstPull { remoteRemoves += changes.remove.map(local) }
            report.skippedEntries += changes.skipped
            cursor.devicesSince[device] = changes.timestamp
            serverNow = max(serverNow, changes.timestamp)
            return pullNextDevice()
        case (.applyingSubscriptions, .subscriptionsApplied(let failed)):
            // A phone's subscription whose feed was down must not be lost: the devices are asked again from the
            // same point next time (what was applied is applied again as a no-op).
            if failed > 0 { cursor.devicesSince = facts.cursor.devicesSince }
            phase = .pullingActions
            return [.acknowledge(pushedSubscriptionIDs, cursor), .send(.pullActions(since: actionsSince))]
        case (.pullingActions, .actionsPulled(let remote)):
            report.skippedEntries += remote.skipped
            // Some servers answer the time of the newest action, which a phone's clock may have put in the future:
            // the server's own clock bounds the cursor. Otherwise never backwards: the window reaches back anyway.
            let answered = max(cursor.actionsSince, remote.timestamp)
            cursor.actionsSince = serverNow > 0 ? min(answered, serverNow) : answered
            phase = .applyingActions
            let (played, unplayed) = decideActions(remote.actions)
            return [.applyActions(played: played, unplayed: unplayed)]
        case (.applyingActions, .actionsApplied(let unmatched)):
            report.ignoredActions += unmatched
            pendingActions = Self.batches(facts.outbox.filter { !$0.kind.isSubscription }, size: Self.actionBatch)
            return pushNextActions()
        case (.pushingActions, .actionsPushed):
            let acknowledged = pushedActionIDs
            report.uploadedActions += acknowledged.count
            return [.acknowledge(acknowledged, cursor)] + pushNextActions()
        default:
            preconditionFailure("sync: event \(event) in phase \(phase)")
        }
    }

    /// Counts the service reports after applying (played and unplayed marks that changed something).
    package mutating func recordApplied(played: Int, unplayed: Int, subscribed: Int, unsubscribed: Int) {
        report.markedPlayed += played
        report.markedUnplayed += unplayed
        report.subscribed += subscribed
        report.unsubscribed += unsubscribed
    }

    /// A URL as the server writes it → the URL subscribed to here.
    private func local(_ url: String) -> String { cursor.aliases[url] ?? url }

    /// How far back the first sync asks for episode actions: an account's whole history can hold hundreds of
    /// thousands, more than an answer may carry, and plays that old decide nothing retention has not decided.
    package static let firstActionsWindow: Int64 = 90 * 86_400

    /// How far before the cursor later syncs ask for episode actions again, for a phone that uploads plays late
    /// to a server that files them by their own time (see the type's comment).
    package static let lateActionsWindow: Int64 = 30 * 86_400

    /// Where the episode actions are asked from: the late-upload window before the cursor, or on the first sync the
    /// first window before the server's own time (its clock, so that a skewed local clock does not matter).
    private var actionsSince: Int64 {
        if cursor.actionsSince > 0 { return max(0, cursor.actionsSince - Self.lateActionsWindow) }
        if serverNow == 0 { return 0 }
        return max(0, serverNow - Self.firstActionsWindow)
    }

    /// After the upload: the other devices' changes (the Nextcloud flavour's one list per account).
    private mutating func pullSubscriptions() -> [Action] {
        if facts.flavor == .nextcloud {
            devicesToPull = [""]
            return pullNextDevice()
        }
        phase = .listingDevices
        return [.send(.listDevices)]
    }

    private mutating func pullNextDevice() -> [Action] {
        if let device = devicesToPull.first {
            devicesToPull.removeFirst()
            phase = .pullingSubscriptions
            return [.send(.pullSubscriptions(device: device, since: cursor.devicesSince[device] ?? 0))]
        }
        phase = .applyingSubscriptions
        let (subscribe, unsubscribe) = decideSubscriptions()
        return [.applySubscriptions(subscribe: subscribe, unsubscribe: unsubscribe)]
    }

    /// The remote subscription changes to apply here, after the conflict rule.
    private mutating func decideSubscriptions() -> (subscribe: [String], unsubscribe: [String]) {
        // The last pending local change of each URL.
        var pending: [String: SyncOutboxEntry.Kind] = [:]
        for entry in facts.outbox where entry.kind.isSubscription { pending[entry.podcastURL] = entry.kind }
        var subscribe: [String] = []
        var unsubscribe: [String] = []
        var seen: Set<String> = []
        let removed = Set(remoteRemoves)
        for url in remoteAdds where !facts.localFeeds.contains(url) && seen.insert(url).inserted {
            if pending[url] == .remove {
                report.keptUnsubscribed += 1
                continue
            }
            // Added by one device and removed by another in the same period: the removal is not applied either
            // way, the add stands (the user still has it somewhere).
            subscribe.append(url)
        }
        for url in removed where facts.localFeeds.contains(url) && pending[url] != .add && !remoteAdds.contains(url) {
            unsubscribe.append(url)
        }
        return (subscribe, unsubscribe.sorted())
    }

    /// Uploads the local subscription changes (on the first sync, every subscription), before anything is pulled.
    private mutating func pushSubscriptions() -> [Action] {
        var last: [String: SyncOutboxEntry.Kind] = [:]
        var order: [String] = []
        for entry in facts.outbox where entry.kind.isSubscription {
            if last.updateValue(entry.kind, forKey: entry.podcastURL) == nil { order.append(entry.podcastURL) }
        }
        // The first sync uploads every subscription, so that the server starts from what is here.
        if !cursor.uploadedAll {
            for url in facts.localFeeds.sorted() where last[url] == nil {
                last[url] = .add
                order.append(url)
            }
        }
        pushedSubscriptionIDs = facts.outbox.filter(\.kind.isSubscription).map(\.id)
        // One URL may not be both added and removed in a request: only its last change goes.
        let add = order.filter { last[$0] == .add }
        let remove = order.filter { last[$0] == .remove }
        phase = .pushingSubscriptions
        report.uploadedSubscriptionChanges = add.count + remove.count
        if add.isEmpty && remove.isEmpty && cursor.uploadedAll { return pullSubscriptions() }
        return [.send(.pushSubscriptions(add: add, remove: remove))]
    }

    /// The remote actions to apply: the latest play or new per episode, unless it is singlecast's own (uploaded
    /// before: read again in the overlap) or a pending local change of that episode is newer.
    private mutating func decideActions(_ actions: [SyncWire.Action]) -> ([EpisodeKey], [EpisodeKey]) {
        // Only a local played or unplayed mark competes with a remote one: a completed download or a deleted file
        // says nothing about whether the episode was heard.
        var localLatest: [String: Int64] = [:]
        for entry in facts.outbox where entry.kind == .play || entry.kind == .new {
            guard let episode = entry.episodeURL else { continue }
            let key = entry.podcastURL + "\n" + episode
            localLatest[key] = max(localLatest[key] ?? .min, entry.at)
        }
        var latest: [String: SyncWire.Action] = [:]
        var order: [String] = []
        for var action in actions {
            action.podcast = local(action.podcast)
            guard action.kind == .play || action.kind == .new else {
                if action.device != facts.device { report.ignoredActions += 1 }
                continue
            }
            let key = action.podcast + "\n" + action.episode
            if let previous = latest[key] {
                if (action.timestamp ?? 0) >= (previous.timestamp ?? 0) { latest[key] = action }
            } else {
                latest[key] = action
                order.append(key)
            }
        }
        var played: [EpisodeKey] = []
        var unplayed: [EpisodeKey] = []
        for key in order {
            guard let action = latest[key], action.device != facts.device else { continue }
            if let local = localLatest[key], local >= (action.timestamp ?? 0).saturatingMultiply(1000) { continue }
            let episode = EpisodeKey(podcast: action.podcast, episode: action.episode, guid: action.guid)
            if action.kind == .new {
                unplayed.append(episode)
            } else if action.reachedEnd {
                played.append(episode)
            } else {
                // A play that stopped before the end leaves the episode as it is.
                report.ignoredActions += 1
            }
        }
        return (played, unplayed)
    }

    private mutating func pushNextActions() -> [Action] {
        guard let batch = pendingActions.first else {
            phase = .done
            return [.finish(report, cursor)]
        }
        pendingActions.removeFirst()
        pushedActionIDs = batch.map(\.id)
        phase = .pushingActions
        return [.send(.pushActions(batch))]
    }

    private static func batches(_ entries: [SyncOutboxEntry], size: Int) -> [[SyncOutboxEntry]] {
        stride(from: 0, to: entries.count, by: size).map { Array(entries[$0..<min($0 + size, entries.count)]) }
    }
}
