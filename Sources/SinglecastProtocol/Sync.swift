/// Params of `sync`: with `status` true, only the state is read and no sync runs.
package struct SyncParams: Codable, Hashable, Sendable {
    package var status: Bool?

    package init(status: Bool? = nil) { self.status = status }
}

/// What one sync did (`sync`'s `report`, and the params of `sync.completed`).
package struct SyncReportInfo: Codable, Hashable, Sendable {
    package var subscribed: Int
    package var unsubscribed: Int
    /// Remote adds of podcasts unsubscribed here since the last sync, which stay unsubscribed.
    package var keptUnsubscribed: Int
    package var markedPlayed: Int
    package var markedUnplayed: Int
    package var ignoredActions: Int
    package var skippedEntries: Int
    package var uploadedSubscriptionChanges: Int
    package var uploadedActions: Int

    package init(
        subscribed: Int,
        unsubscribed: Int,
        keptUnsubscribed: Int,
        markedPlayed: Int,
        markedUnplayed: Int,
        ignoredActions: Int,
        skippedEntries: Int,
        uploadedSubscriptionChanges: Int,
        uploadedActions: Int
    ) {
        self.subscribed = subscribed
        self.unsubscribed = unsubscribed
        self.keptUnsubscribed = keptUnsubscribed
        self.markedPlayed = markedPlayed
        self.markedUnplayed = markedUnplayed
        self.ignoredActions = ignoredActions
        self.skippedEntries = skippedEntries
        self.uploadedSubscriptionChanges = uploadedSubscriptionChanges
        self.uploadedActions = uploadedActions
    }

    enum CodingKeys: String, CodingKey {
        case subscribed, unsubscribed
        case keptUnsubscribed = "kept_unsubscribed"
        case markedPlayed = "marked_played"
        case markedUnplayed = "marked_unplayed"
        case ignoredActions = "ignored_actions"
        case skippedEntries = "skipped_entries"
        case uploadedSubscriptionChanges = "uploaded_subscription_changes"
        case uploadedActions = "uploaded_actions"
    }
}

/// The sync's state (`sync --status`).
package struct SyncStatusInfo: Codable, Hashable, Sendable {
    package var enabled: Bool
    package var server: String?
    package var flavor: String
    package var user: String?
    package var device: String
    package var running: Bool
    /// ISO 8601, UTC.
    package var lastSuccess: String?
    package var lastAttempt: String?
    package var lastError: String?
    /// Local changes the server has not acknowledged yet.
    package var pending: Int
    package var nextAttempt: String?

    package init(
        enabled: Bool,
        server: String?,
        flavor: String,
        user: String?,
        device: String,
        running: Bool,
        lastSuccess: String?,
        lastAttempt: String?,
        lastError: String?,
        pending: Int,
        nextAttempt: String?
    ) {
        self.enabled = enabled
        self.server = server
        self.flavor = flavor
        self.user = user
        self.device = device
        self.running = running
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.lastError = lastError
        self.pending = pending
        self.nextAttempt = nextAttempt
    }

    enum CodingKeys: String, CodingKey {
        case enabled, server, flavor, user, device, running, pending
        case lastSuccess = "last_success"
        case lastAttempt = "last_attempt"
        case lastError = "last_error"
        case nextAttempt = "next_attempt"
    }
}

/// Result of `sync`: the report of the sync just run (absent with `status`), and the state after it.
package struct SyncResult: Codable, Hashable, Sendable {
    package var report: SyncReportInfo?
    package var status: SyncStatusInfo

    package init(report: SyncReportInfo?, status: SyncStatusInfo) {
        self.report = report
        self.status = status
    }
}

/// Events of the `sync` topic.
package enum SyncEvent: String, CaseIterable, Codable, Sendable {
    case completed = "sync.completed"
    case failed = "sync.failed"
}

/// Params of `sync.completed` and `sync.failed`.
package struct SyncEventParams: Codable, Hashable, Sendable {
    /// ISO 8601, UTC.
    package var at: String
    package var report: SyncReportInfo?
    /// For `sync.failed`: the error's reason (`sync_unauthorized`, `sync_unreachable`, …) and message.
    package var reason: String?
    package var message: String?

    package init(at: String, report: SyncReportInfo? = nil, reason: String? = nil, message: String? = nil) {
        self.at = at
        self.report = report
        self.reason = reason
        self.message = message
    }
}
