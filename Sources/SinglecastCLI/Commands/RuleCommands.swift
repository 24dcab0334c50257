import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// The episode-rule options `set` and `rules` share: each passes its value to the daemon, which owns the syntax
/// (the configuration file's) and says what is wrong with a value.
enum RuleOptions {
    /// Option name, rule key, value name, help.
    static let all: [(option: String, key: String, valueName: String, help: String)] = [
        (
            "title-include", "title_include", "text",
            "Download only episodes whose title contains this (any case), or matches it as /regex/."
        ),
        ("title-exclude", "title_exclude", "text", "Never download episodes whose title contains (matches) this."),
        ("min-duration", "min_duration", "duration", "Skip episodes shorter than this (90s, 10m, 1h)."),
        ("max-duration", "max_duration", "duration", "Skip episodes longer than this."),
        ("max-age", "max_age", "age", "Skip episodes published longer ago than this (12h, 30d, 2w)."),
        ("episode-types", "episode_types", "types", "Download only these types: full, trailer, bonus (a,b)."),
        ("delete-played-after", "delete_played_after", "delay", "Delete a played episode's file this long after."),
        ("delete-older-than", "delete_older_than", "age", "Delete files of episodes older than this."),
    ]

    static var arguments: [ArgumentSpec] {
        all.map {
            .option(
                $0.option,
                valueName: $0.valueName,
                help: $0.help + " 'default' goes back to the configured rule, 'none' turns it off for this podcast."
            )
        }
    }

    /// The rules given, by key; `default` (the configured rule) is sent as "".
    static func parse(_ arguments: ParsedArguments) -> [String: String]? {
        var changes: [String: String] = [:]
        for option in all {
            if let value = arguments.option(option.option) { changes[option.key] = value == "default" ? "" : value }
        }
        return changes.isEmpty ? nil : changes
    }
}

/// `singlecastctl rules`: what a podcast's rules would download and delete now, and why episodes are skipped.
package struct RulesCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Show what a podcast's rules would download and delete.",
        discussion: """
            Lists the rules that apply (the podcast's own, else the configured ones), then the episodes the rules \
            would queue now, the files they would delete and why, and the episodes they skip and why. Nothing is \
            changed. With --auto, --keep or rule options, shows the same for those changes before they are made \
            (as 'singlecastctl set ... --dry-run' does).

            Examples:
              singlecastctl rules 3
              singlecastctl rules daily --title-exclude trailer --max-age 30d
            """,
        arguments: [PodcastArguments.podcast(), PodcastArguments.auto(), PodcastArguments.keep()]
            + RuleOptions.arguments
    )

    package var options: GlobalOptions
    package var params: RulesParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let auto = try PodcastArguments.auto(arguments)
        params = RulesParams(
            podcast: try PodcastArguments.podcast(arguments) ?? "",
            changes: RuleOptions.parse(arguments),
            autoDownload: auto,
            keep: try PodcastArguments.keep(arguments, auto: auto)
        )
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .rules,
            params: try WireCoding.value(of: params),
            options: options,
            as: RulesResult.self
        ) { Self.render($0, style: context.style) }
    }

    /// The rules with their sources, then the three lists (each left out when empty).
    package static func render(
        _ result: RulesResult,
        timeZone: LocalTimeZone = .system,
        style: TextStyle = .plain
    ) -> String {
        var text = PodcastText.name(result.podcast)
        text += result.dryRun ? " (dry run: nothing was changed)\n\n" : "\n\n"
        var rows = [["RULE", "VALUE", "FROM"]]
        rows.append(["auto", result.autoDownload.description, "podcast"])
        rows.append(["keep", PodcastText.keep(result.keep), "podcast"])
        rows += result.rules.map { [$0.key, $0.value, $0.source] }
        text += Formatting.columns(rows, style: style)
        func list(_ heading: String, _ episodes: [RulesResult.Episode], withReasons: Bool) {
            guard !episodes.isEmpty else { return }
            text += "\n\(heading) (\(episodes.count)):\n"
            var rows = [["ID", "DATE", "TITLE"] + (withReasons ? ["WHY"] : [])]
            for episode in episodes {
                rows.append(
                    [
                        String(episode.id), episode.published.map { PodcastText.day($0, timeZone: timeZone) } ?? "-",
                        episode.title,
                    ] + (withReasons ? [episode.reason ?? ""] : [])
                )
            }
            text += Formatting.columns(rows, style: style)
        }
        list("Would download", result.download, withReasons: false)
        list("Would delete", result.delete, withReasons: true)
        list("Skipped", result.skipped, withReasons: true)
        if result.download.isEmpty && result.delete.isEmpty {
            text += "\nNothing to download or delete now.\n"
        }
        return text
    }
}

/// `played`, `unplayed`, `pin` and `unpin`: one command, four marks.
package protocol EpisodeMark: Sendable {
    static var method: Method { get }
    static var abstract: String { get }
    static var discussion: String { get }
    /// `Marked played:` in `Marked played: 2 episodes.`
    static var done: String { get }
    /// `played` in `1 episode was played already.`
    static var already: String { get }
    /// What to use instead when nothing changed: `'singlecastctl unplayed' takes the mark back`.
    static var instead: String { get }
}

/// `singlecastctl played|unplayed|pin|unpin EPISODE...` or `--all PODCAST`.
package struct EpisodeMarkCommand<Mark: EpisodeMark>: CLICommand {
    package static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Mark.method.rawValue,
            abstract: Mark.abstract,
            discussion: Mark.discussion,
            arguments: [
                .positional(
                    "episode",
                    help: "Episode IDs, as 'singlecastctl episodes' lists them; with --all, one podcast instead.",
                    repeating: true,
                    required: true
                ),
                .flag("all", help: "Mark every episode of the podcast given instead of episode IDs."),
            ]
        )
    }

    package var options: GlobalOptions
    package var params: EpisodeMarkParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        if arguments.flag("all") {
            let words = arguments.arguments("episode")
            guard words.count == 1, let podcast = words.first, !podcast.allSatisfy(\.isWhitespace) else {
                throw UsageError.validation("With --all, give one podcast (its ID or part of its title)")
            }
            params = EpisodeMarkParams(podcast: podcast, all: true)
        } else {
            params = EpisodeMarkParams(episodes: try EpisodeIDs.parse(arguments))
        }
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            Mark.method,
            params: try WireCoding.value(of: params),
            options: options,
            as: EpisodeMarkResult.self
        ) { Self.render($0) }
    }

    /// `Marked played: 2 episodes.` and `1 episode was played already.`, each when it applies.
    package static func render(_ result: EpisodeMarkResult) -> String {
        var text = ""
        if !result.changed.isEmpty { text += "\(Mark.done) \(Formatting.count(result.changed.count, "episode")).\n" }
        if !result.unchanged.isEmpty {
            let verb = result.unchanged.count == 1 ? "was" : "were"
            let already = "\(Formatting.count(result.unchanged.count, "episode")) \(verb) \(Mark.already) already"
            text += text.isEmpty ? "Nothing to mark: \(already); \(Mark.instead).\n" : "\(already).\n"
        }
        return text.isEmpty ? "No episodes.\n" : text
    }
}

package enum Played: EpisodeMark {
    package static let method = Method.played
    package static let abstract = "Mark episodes played."
    package static let discussion = """
        A played episode is not downloaded by the rules again, and with delete_played_after its file goes \
        that long after. 'singlecastctl unplayed' takes the mark back.

        Examples:
          singlecastctl played 815 816
          singlecastctl played --all daily
        """
    package static let done = "Marked played:"
    package static let already = "played"
    package static let instead = "'singlecastctl unplayed' takes the mark back"
}

package enum Unplayed: EpisodeMark {
    package static let method = Method.unplayed
    package static let abstract = "Mark episodes not played."
    package static let discussion = """
        Examples:
          singlecastctl unplayed 815
          singlecastctl unplayed --all daily
        """
    package static let done = "Marked not played:"
    package static let already = "unplayed"
    package static let instead = "'singlecastctl played' marks them played"
}

package enum Pin: EpisodeMark {
    package static let method = Method.pin
    package static let abstract = "Keep episodes' files whatever the rules say."
    package static let discussion = """
        No rule deletes a pinned episode's file: not keep, delete_played_after, delete_older_than or \
        max_storage. 'singlecastctl delete' still does.

        Examples:
          singlecastctl pin 815
        """
    package static let done = "Pinned"
    package static let already = "pinned"
    package static let instead = "'singlecastctl unpin' lets the rules have them"
}

package enum Unpin: EpisodeMark {
    package static let method = Method.unpin
    package static let abstract = "Let the rules delete episodes' files again."
    package static let discussion = """
        Examples:
          singlecastctl unpin 815
        """
    package static let done = "Unpinned"
    package static let already = "unpinned"
    package static let instead = "'singlecastctl pin' keeps their files"
}

package typealias PlayedCommand = EpisodeMarkCommand<Played>
package typealias UnplayedCommand = EpisodeMarkCommand<Unplayed>
package typealias PinCommand = EpisodeMarkCommand<Pin>
package typealias UnpinCommand = EpisodeMarkCommand<Unpin>
