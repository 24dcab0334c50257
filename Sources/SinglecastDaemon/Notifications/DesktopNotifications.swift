import FoundationEssentials

/// The `notify` setting at work: watches the ``EventBus`` like a client would, turns the events that
/// ``NotificationPolicy`` picks into facts for ``NotificationGrouping`` and shows what it makes of them when it is
/// due. It never touches the queue or the subscriptions.
package struct DesktopNotifications: Service {
    package var kinds: NotificationKinds
    package var events: EventBus
    package var environment: [String: String]
    package var logger: Logger
    /// Names the podcast of a download in one of its folders; `nil` names files only.
    package var downloadDirectory: String?

    package init(
        kinds: NotificationKinds,
        events: EventBus,
        environment: [String: String],
        logger: Logger,
        downloadDirectory: String? = nil
    ) {
        self.kinds = kinds
        self.events = events
        self.environment = environment
        self.logger = logger
        self.downloadDirectory = downloadDirectory
    }

    /// An event line, or the wake-up for a group that is due.
    private enum Input: Sendable {
        case line(Data)
        case due
    }

    /// Returns at once when `kinds` is empty (no bus connection, no subscription); otherwise runs until
    /// cancelled, and then shows what was still waiting.
    package func run() async throws {
        guard !kinds.isEmpty else { return }
        let (id, lines) = events.subscribe()
        events.select(NotificationPolicy.selection(for: kinds), for: id)
        let logger = logger
        let sender = SessionBusSender(environment: environment) { logger.warning($0) }
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
        let forwarder = Task {
            for await line in lines { input.yield(.line(line)) }
            input.finish()
        }
        var timer: Task<Void, Never>?
        defer {
            forwarder.cancel()
            timer?.cancel()
            events.remove(id)
            sender.stop()
        }
        let clock = ContinuousClock()
        var grouping = NotificationGrouping()
        for await next in inputs {
            if case .line(let line) = next,
                let event = NotificationPolicy.event(
                    forEventLine: line,
                    kinds: kinds,
                    downloadDirectory: downloadDirectory
                )
            {
                let before = grouping.deadline
                grouping.receive(event, at: clock.now)
                if let deadline = grouping.deadline, deadline != before {
                    timer?.cancel()
                    timer = Task {
                        guard (try? await Task.sleep(until: deadline, clock: clock)) != nil else { return }
                        input.yield(.due)
                    }
                }
            }
            for notification in grouping.due(at: clock.now) { sender.send(notification) }
        }
        for notification in grouping.flush() { sender.send(notification) }
    }
}
