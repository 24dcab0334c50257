import FoundationEssentials

/// The `notify` setting at work: watches the ``EventBus`` like a client would and turns the events that
/// ``NotificationPolicy`` picks into desktop notifications. It never touches the queue or the subscriptions.
package struct DesktopNotifications: Service {
    package var kinds: NotificationKinds
    package var events: EventBus
    package var environment: [String: String]
    package var logger: Logger

    package init(kinds: NotificationKinds, events: EventBus, environment: [String: String], logger: Logger) {
        self.kinds = kinds
        self.events = events
        self.environment = environment
        self.logger = logger
    }

    /// Returns at once when `kinds` is empty (no bus connection, no subscription); otherwise runs until
    /// cancelled.
    package func run() async throws {
        guard !kinds.isEmpty else { return }
        let (id, lines) = events.subscribe()
        events.setTopics(NotificationPolicy.topics(for: kinds), for: id)
        let logger = logger
        let sender = SessionBusSender(environment: environment) { logger.warning($0) }
        defer {
            events.remove(id)
            sender.stop()
        }
        for await line in lines {
            if let notification = NotificationPolicy.notification(forEventLine: line, kinds: kinds) {
                sender.send(notification)
            }
        }
    }
}
