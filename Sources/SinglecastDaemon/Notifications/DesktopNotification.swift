import FoundationEssentials
import SinglecastProtocol

/// One notification to show: what `org.freedesktop.Notifications.Notify` gets.
package struct DesktopNotification: Hashable, Sendable {
    package var summary: String
    package var body: String
    /// A freedesktop icon name.
    package var icon: String

    package init(summary: String, body: String, icon: String) {
        self.summary = summary
        self.body = body
        self.icon = icon
    }
}

/// Which daemon events become notifications, and what they say. Pure: an event line in, a
/// ``NotificationGrouping/Event`` or nothing out; ``NotificationGrouping`` makes the notifications.
package enum NotificationPolicy {
    /// The events the policy needs for `kinds`, and no others: the bus builds no progress event for it; none when
    /// it is off.
    package static func selection(for kinds: NotificationKinds) -> EventSelection {
        var events: Set<String> = []
        if kinds.contains(.downloads) { events.insert(DownloadEvent.completed.rawValue) }
        if kinds.contains(.failures) { events.insert(DownloadEvent.failed.rawValue) }
        if kinds.contains(.episodes) { events.insert(PodcastEvent.refreshed.rawValue) }
        return events.isEmpty ? .none : EventSelection(events: events)
    }

    /// What one event line, as the ``EventBus`` sends it, has to show, or `nil` when `kinds` does not ask for it.
    ///
    /// - Parameter downloadDirectory: the configured download directory, so that a download in a podcast's folder
    ///   is shown with the podcast's name.
    package static func event(
        forEventLine line: Data,
        kinds: NotificationKinds,
        downloadDirectory: String?
    ) -> NotificationGrouping.Event? {
        guard let method = try? JSONDecoder().decode(Method.self, from: line).method else { return nil }
        switch method {
        case DownloadEvent.completed.rawValue where kinds.contains(.downloads):
            guard let download = decode(DownloadEventParams.self, line)?.download else { return nil }
            return .completed(.init(file: download.file, downloadDirectory: downloadDirectory))
        case DownloadEvent.failed.rawValue where kinds.contains(.failures):
            guard let download = decode(DownloadEventParams.self, line)?.download else { return nil }
            // The message is the text written for people; the error value itself never reaches the popup.
            return .failed(
                .init(file: download.file, downloadDirectory: downloadDirectory),
                reason: download.lastError?.message
            )
        case PodcastEvent.refreshed.rawValue where kinds.contains(.episodes):
            // One event per refresh of a podcast, however many episodes it found.
            guard let event = decode(Refreshed.self, line), let count = event.newEpisodes, count > 0 else {
                return nil
            }
            return .newEpisodes(podcast: event.podcast.title, count: count)
        default:
            return nil
        }
    }

    /// The notification one event line makes on its own, or `nil` when `kinds` does not ask for one.
    package static func notification(forEventLine line: Data, kinds: NotificationKinds) -> DesktopNotification? {
        guard let event = event(forEventLine: line, kinds: kinds, downloadDirectory: nil) else { return nil }
        var grouping = NotificationGrouping()
        grouping.receive(event, at: .now)
        return grouping.flush().first
    }

    private struct Method: Decodable { var method: String }

    /// The part of `podcast.refreshed` (``PodcastEventParams``) a notification shows.
    private struct Refreshed: Decodable {
        struct Podcast: Decodable { var title: String }
        var podcast: Podcast
        var newEpisodes: Int?

        enum CodingKeys: String, CodingKey {
            case podcast
            case newEpisodes = "new_episodes"
        }
    }
    private struct Notification<Params: Decodable>: Decodable { var params: Params }

    private static func decode<Params: Decodable>(_ type: Params.Type, _ line: Data) -> Params? {
        try? JSONDecoder().decode(Notification<Params>.self, from: line).params
    }
}
