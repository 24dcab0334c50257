import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl show-podcast`: one podcast's feed, settings, refreshes, rules and disk use.
package struct ShowPodcastCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "show-podcast",
        abstract: "Show a podcast's feed, settings, rules and disk use.",
        discussion: """
            Settings and rules say where they come from: the podcast's own (set with 'set') or the configured \
            ones. Disk use counts its downloaded files as they were downloaded.

            Examples:
              singlecastctl show-podcast 3
              singlecastctl show-podcast daily --json
            """,
        arguments: [PodcastArguments.podcast()]
    )

    package var options: GlobalOptions
    package var params: PodcastParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = PodcastParams(podcast: try PodcastArguments.podcast(arguments) ?? "")
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .podcast,
            params: try WireCoding.value(of: params),
            options: options,
            as: PodcastDetailResult.self
        ) { Self.render($0, style: context.style) }
    }

    /// A `label  value` block, then the rules, one a line.
    package static func render(
        _ result: PodcastDetailResult,
        style: TextStyle = .plain,
        zone: LocalTimeZone = .system
    ) -> String {
        let podcast = result.podcast
        var rows: [(label: String, value: String)] = [
            ("Podcast", String(podcast.id)),
            ("Title", podcast.title),
            ("Feed", podcast.feedURL),
            ("Folder", podcast.folder ?? "\(podcast.title) (its title)"),
            ("Name template", podcast.nameTemplate ?? "configured"),
            ("Refresh every", podcast.refreshInterval.map { Formatting.duration(seconds: Double($0)) } ?? "configured"),
        ]
        func row(_ label: String, _ value: String?) { if let value { rows.append((label, value)) } }
        row("Refreshed", podcast.refreshedAt.map { Timestamps.text($0, zone: zone) })
        row("Next refresh", podcast.nextRefreshAt.map { Timestamps.text($0, zone: zone) })
        row("Last error", podcast.lastError)
        row("Auto-download", podcast.autoDownload.description)
        row("Keep", podcast.keep.map(String.init) ?? "all")
        row("Episodes", "\(podcast.episodes) (\(podcast.newEpisodes) new)")
        row("Disk use", "\(Formatting.count(result.files, "file")), \(Formatting.byteCount(result.diskBytes))")
        var text = Formatting.table(rows, style: style)
        if !result.rules.isEmpty {
            text += "\nRules:\n"
            text += result.rules.map { "  \($0.key) = \(TerminalText.escaped($0.value))  (\($0.source))\n" }.joined()
        }
        return text
    }
}
