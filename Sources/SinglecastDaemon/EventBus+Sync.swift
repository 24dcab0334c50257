import SinglecastProtocol

/// The sync's events as the protocol's: built here and nowhere else.
extension EventBus {
    func syncCompleted(_ report: SyncReport, at: Int64) {
        publish(
            .sync,
            method: SyncEvent.completed.rawValue,
            params: SyncEventParams(at: iso8601(at), report: SyncReportInfo(report))
        )
    }

    func syncFailed(_ error: SyncError, at: Int64) {
        publish(
            .sync,
            method: SyncEvent.failed.rawValue,
            params: SyncEventParams(at: iso8601(at), reason: error.code.rawValue, message: error.message)
        )
    }
}

extension SyncReportInfo {
    init(_ report: SyncReport) {
        self.init(
            subscribed: report.subscribed,
            unsubscribed: report.unsubscribed,
            keptUnsubscribed: report.keptUnsubscribed,
            markedPlayed: report.markedPlayed,
            markedUnplayed: report.markedUnplayed,
            ignoredActions: report.ignoredActions,
            skippedEntries: report.skippedEntries,
            uploadedSubscriptionChanges: report.uploadedSubscriptionChanges,
            uploadedActions: report.uploadedActions
        )
    }
}

extension SyncStatusInfo {
    init(_ status: SyncService.Status) {
        self.init(
            enabled: status.enabled,
            server: status.server,
            flavor: status.flavor.rawValue,
            user: status.user,
            device: status.device,
            running: status.running,
            lastSuccess: status.lastSuccess.map(iso8601),
            lastAttempt: status.lastAttempt.map(iso8601),
            lastError: status.lastError,
            pending: status.pending,
            nextAttempt: status.nextAttempt.map(iso8601)
        )
    }
}
