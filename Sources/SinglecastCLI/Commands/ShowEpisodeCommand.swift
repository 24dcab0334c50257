import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl show-episode`: everything known of one episode, its download and its podcast.
///
/// A command of its own, as every other: the CLI's commands are one word each, grouped only in the help.
package struct ShowEpisodeCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "show-episode",
        abstract: "Show an episode, its download and its description.",
        discussion: """
            EPISODE is an episode id, as 'singlecastctl episodes' lists them. Download is the id of the episode's \
            download, as 'singlecastctl downloads' lists it; the two are different numbers.

            Examples:
              singlecastctl show-episode 815
              singlecastctl show-episode 815 --json
            """,
        arguments: [EpisodeIDs.argument]
    )

    package var options: GlobalOptions
    package var params: EpisodeSelectionParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = EpisodeSelectionParams(episodes: try EpisodeIDs.parse(arguments))
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .episode,
            params: try WireCoding.value(of: params),
            options: options,
            as: InboxResult.self
        ) { Self.render($0, style: context.style) }
    }

    /// One `label  value` block per episode, then its description; blocks apart by a blank line.
    package static func render(
        _ result: InboxResult,
        style: TextStyle = .plain,
        zone: LocalTimeZone = .system
    ) -> String {
        let podcasts = Dictionary(result.podcasts.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return result.episodes.map { episode in
            var rows: [(label: String, value: String)] = [
                ("Episode", String(episode.id)),
                ("Title", episode.title),
                ("Podcast", "\(episode.podcastID) " + (podcasts[episode.podcastID]?.title ?? "")),
            ]
            func row(_ label: String, _ value: String?) { if let value { rows.append((label, value)) } }
            row("Published", episode.published.map { Timestamps.text($0, zone: zone) })
            row("Duration", episode.durationSeconds.map { Formatting.duration(seconds: Double($0)) })
            row("Enclosure", episode.enclosureURL)
            row("Type", episode.enclosureType)
            row("Size", episode.enclosureLength.map(Formatting.byteCount))
            row("State", PodcastText.state(episode))
            row("Download", episode.downloadID.map { "\($0) (\(episode.downloadState?.rawValue ?? "gone"))" })
            row("File", episode.file)
            for sidecar in episode.sidecars ?? [] { row(sidecarLabel(sidecar), sidecarValue(sidecar)) }
            var text = Formatting.table(rows, style: style)
            // Its lines as the feed broke them, each escaped: a line break is the one control a description needs.
            let lines = episode.description.split(separator: "\n", omittingEmptySubsequences: false)
            if !episode.description.isEmpty {
                text += "\n" + lines.map { TerminalText.escaped(String($0)) + "\n" }.joined()
            }
            return text
        }.joined(separator: "\n")
    }

    /// `Chapters`, `Transcript`, or `Transcript en` for one with a language.
    static func sidecarLabel(_ sidecar: EpisodeSidecarInfo) -> String {
        (sidecar.kind == "chapters" ? "Chapters" : "Transcript") + (sidecar.language.map { " \($0)" } ?? "")
    }

    /// The saved file; or the feed's URL and why it is not saved (yet).
    static func sidecarValue(_ sidecar: EpisodeSidecarInfo) -> String {
        if sidecar.state == "saved", let file = sidecar.file { return file }
        let why = sidecar.state == "refused" ? "refused" : "not saved yet"
        return "\(sidecar.url) (\(why)\(sidecar.error.map { ": \($0)" } ?? ""))"
    }
}
