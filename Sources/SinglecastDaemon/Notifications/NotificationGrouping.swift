/// Turns the events that arrive close together into one notification per kind: thirty downloads failing in one
/// bulk operation are "30 downloads failed", not thirty popups. Pure: events and the time in, notifications out.
///
/// A group closes once nothing new came for ``quiet``, or ``longest`` after its first event, whichever is first,
/// so that a steady trickle of events still shows within ``longest``.
package struct NotificationGrouping: Sendable {
    /// One fact a notification may show.
    package enum Event: Hashable, Sendable {
        case completed(DownloadName)
        /// `reason` is the download's error message, as text.
        case failed(DownloadName, reason: String?)
        case newEpisodes(podcast: String, count: Int)
    }

    /// What a download is called: its podcast's folder, when it is in one, and its file's name.
    package struct DownloadName: Hashable, Sendable {
        package var podcast: String?
        package var episode: String

        package init(podcast: String?, episode: String) {
            self.podcast = podcast
            self.episode = episode
        }

        /// Reads the name from the download's path: a download event carries no podcast or episode title, and
        /// the name template puts an episode in its podcast's folder (`{podcast}/{date} {title}.{ext}`).
        ///
        /// - Parameter downloadDirectory: the configured download directory; a file directly in it, or outside
        ///   it, has no podcast.
        package init(file: String, downloadDirectory: String?) {
            episode = DownloadDirectory.components(file).last.map(String.init) ?? file
            podcast = nil
            if let downloadDirectory, let relative = DownloadDirectory.relative(file, below: downloadDirectory) {
                podcast = DownloadDirectory.components(relative).dropLast().first.map(String.init)
            }
        }

        var text: String { podcast.map { "\($0): \(episode)" } ?? episode }
    }

    package static let quiet: Duration = .seconds(2)
    package static let longest: Duration = .seconds(10)
    /// The lines a grouped notification's body lists; the others are counted in a last line.
    package static let listedLines = 5

    private var pending: [Event] = []
    private var openedAt: ContinuousClock.Instant?
    private var lastAt: ContinuousClock.Instant?

    package init() {}

    /// When the waiting group is due; `nil` when nothing waits.
    package var deadline: ContinuousClock.Instant? {
        guard let openedAt, let lastAt else { return nil }
        return min(lastAt + Self.quiet, openedAt + Self.longest)
    }

    package mutating func receive(_ event: Event, at now: ContinuousClock.Instant) {
        if pending.isEmpty { openedAt = now }
        pending.append(event)
        lastAt = now
    }

    /// The notifications due at `now`: none before ``deadline``.
    package mutating func due(at now: ContinuousClock.Instant) -> [DesktopNotification] {
        guard let deadline, now >= deadline else { return [] }
        return flush()
    }

    /// Every waiting notification at once, as when the daemon stops.
    package mutating func flush() -> [DesktopNotification] {
        defer {
            pending = []
            openedAt = nil
            lastAt = nil
        }
        var completed: [DownloadName] = []
        var failed: [String] = []
        var episodes: [(podcast: String, count: Int)] = []
        for event in pending {
            switch event {
            case .completed(let name): completed.append(name)
            case .failed(let name, let reason): failed.append(name.text + (reason.map { ": \($0)" } ?? ""))
            case .newEpisodes(let podcast, let count):
                if let index = episodes.firstIndex(where: { $0.podcast == podcast }) {
                    episodes[index].count += count
                } else {
                    episodes.append((podcast, count))
                }
            }
        }
        var notifications: [DesktopNotification] = []
        if !completed.isEmpty {
            notifications.append(
                DesktopNotification(
                    summary: completed.count == 1 ? "Download complete" : "\(completed.count) downloads completed",
                    body: Self.list(completed.map(\.text)),
                    icon: "document-save"
                )
            )
        }
        if !failed.isEmpty {
            notifications.append(
                DesktopNotification(
                    summary: failed.count == 1 ? "Download failed" : "\(failed.count) downloads failed",
                    body: Self.list(failed),
                    icon: "dialog-error"
                )
            )
        }
        if let only = episodes.first, episodes.count == 1 {
            notifications.append(
                DesktopNotification(summary: only.podcast, body: Self.newEpisodes(only.count), icon: "audio-x-generic")
            )
        } else if !episodes.isEmpty {
            notifications.append(
                DesktopNotification(
                    summary: Self.newEpisodes(episodes.reduce(0) { $0 + $1.count }),
                    body: Self.list(episodes.map { "\($0.podcast): \(Self.newEpisodes($0.count))" }),
                    icon: "audio-x-generic"
                )
            )
        }
        return notifications
    }

    private static func newEpisodes(_ count: Int) -> String {
        count == 1 ? "1 new episode" : "\(count) new episodes"
    }

    /// One line per item, at most ``listedLines`` of them counting the "and N more" line.
    private static func list(_ lines: [String]) -> String {
        guard lines.count > listedLines else { return lines.joined(separator: "\n") }
        let shown = lines.prefix(listedLines - 1)
        return (shown + ["and \(lines.count - shown.count) more"]).joined(separator: "\n")
    }
}
