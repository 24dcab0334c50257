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

/// Which daemon events become notifications, and their text. Pure: an event line in, a notification or
/// nothing out.
package enum NotificationPolicy {
    /// The event topics the policy needs for `kinds`; none when it is off.
    package static func topics(for kinds: NotificationKinds) -> Set<EventTopic> {
        var topics: Set<EventTopic> = []
        if !kinds.isDisjoint(with: [.downloads, .failures]) { topics.insert(.downloads) }
        if kinds.contains(.episodes) { topics.insert(.podcasts) }
        return topics
    }

    /// The notification for one event line as the ``EventBus`` sends it, or `nil` when `kinds` does not ask
    /// for one.
    package static func notification(forEventLine line: Data, kinds: NotificationKinds) -> DesktopNotification? {
        guard let method = try? JSONDecoder().decode(Method.self, from: line).method else { return nil }
        switch method {
        case DownloadEvent.completed.rawValue where kinds.contains(.downloads):
            guard let download = decode(DownloadEventParams.self, line)?.download else { return nil }
            return DesktopNotification(
                summary: "Download complete",
                body: name(of: download),
                icon: "document-save"
            )
        case DownloadEvent.failed.rawValue where kinds.contains(.failures):
            guard let download = decode(DownloadEventParams.self, line)?.download else { return nil }
            let reason = download.lastError.map { ": \($0.message)" } ?? ""
            return DesktopNotification(
                summary: "Download failed",
                body: name(of: download) + reason,
                icon: "dialog-error"
            )
        case PodcastEvent.refreshed.rawValue where kinds.contains(.episodes):
            // One notification per refresh of a podcast, however many episodes it found.
            guard let event = decode(Refreshed.self, line), let count = event.newEpisodes, count > 0 else {
                return nil
            }
            return DesktopNotification(
                summary: event.podcast.title,
                body: count == 1 ? "1 new episode" : "\(count) new episodes",
                icon: "audio-x-generic"
            )
        default:
            return nil
        }
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

    /// The file's name without its directories.
    private static func name(of download: DownloadInfo) -> String {
        download.file.split(separator: "/").last.map(String.init) ?? download.file
    }
}
