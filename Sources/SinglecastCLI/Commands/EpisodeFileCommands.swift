import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// Reading episode IDs from the command line.
enum EpisodeIDs {
    static let argument = ArgumentSpec.positional(
        "episode",
        help: "An episode's ID, as 'singlecastctl episodes' or 'singlecastctl inbox' lists it.",
        repeating: true,
        required: true
    )

    /// The IDs given, repeats dropped.
    static func parse(_ arguments: ParsedArguments) throws -> [Int64] {
        var ids: [Int64] = []
        let spec = arguments.spec("episode", kind: .positional)
        for word in arguments.arguments("episode") {
            guard word.allSatisfy(\.isASCII), let id = Int64(word), id > 0 else {
                throw UsageError.invalidValue(word, for: spec, reason: "an episode ID is a positive whole number")
            }
            if !ids.contains(id) { ids.append(id) }
        }
        if ids.isEmpty { throw UsageError.validation("Give at least one episode ID") }
        return ids
    }
}

/// `singlecastctl delete`: deletes downloaded episodes' files.
package struct DeleteCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete downloaded episodes' files.",
        discussion: """
            A download still running is cancelled with its partial file. A file that an episode of another \
            podcast also has stays for it. The episodes stay listed and can be downloaded again.

            Examples:
              singlecastctl delete 815
              singlecastctl delete 815 816 817
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
            .delete,
            params: try WireCoding.value(of: params),
            options: options,
            as: DeleteResult.self
        ) { Self.render($0, asked: params.episodes) }
    }

    /// Per file `Moved <file> to the Trash: <where>` or `Deleted <file> for good (use_trash is off)`, `Kept <file>
    /// (another podcast's episode has it)`; or why nothing was deleted.
    package static func render(_ result: DeleteResult, asked: [Int64] = []) -> String {
        if result.deletedFiles.isEmpty && result.keptFiles.isEmpty {
            guard result.episodes.isEmpty else { return "Cancelled the downloads.\n" }
            guard !asked.isEmpty else { return "Nothing to delete.\n" }
            let ids = asked.map(String.init)
            let named =
                ids.count == 1
                ? "episode \(ids[0]) has"
                : "episodes \(ids.dropLast().joined(separator: ", ")) and \(ids.last ?? "") have"
            return "Nothing to delete: \(named) no download.\n"
        }
        let deleted = result.deletedFiles.map { file in
            result.trashedTo?[file].map { "Moved \(file) to the Trash: \($0)\n" }
                ?? "Deleted \(file) for good (use_trash is off)\n"
        }
        return deleted.joined() + result.keptFiles.map { "Kept \($0) (another podcast's episode has it)\n" }.joined()
    }
}

/// `singlecastctl redownload`: fetches episodes again.
package struct RedownloadCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "redownload",
        abstract: "Download episodes again.",
        discussion: """
            Deletes each episode's file as 'singlecastctl delete' does, then queues the episode again. Every \
            episode is checked first, so a refused request deletes nothing.

            Examples:
              singlecastctl redownload 815
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
            .redownload,
            params: try WireCoding.value(of: params),
            options: options,
            as: EnqueueResult.self
        ) { EnqueueCommand.render($0) }
    }
}

/// `singlecastctl inbox`: new episodes of every podcast.
package struct InboxCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "inbox",
        abstract: "List new episodes of every podcast, newest first.",
        discussion: """
            An episode is new when it appeared after you subscribed and is not downloaded yet. Queue episodes by \
            ID with 'singlecastctl enqueue <id> ...'.

            Examples:
              singlecastctl inbox
              singlecastctl inbox --limit 20
            """,
        arguments: [.option("limit", valueName: "n", help: "Show at most this many.", defaultDescription: "all")]
    )

    package var options: GlobalOptions
    package var params: InboxParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = InboxParams(limit: try EpisodesCommand.limit(arguments))
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .inbox,
            params: try WireCoding.value(of: params),
            options: options,
            as: InboxResult.self
        ) { Self.render($0, style: context.style) }
    }

    /// A table of ID, DATE, DURATION, PODCAST and TITLE, or `No new episodes.`.
    package static func render(
        _ result: InboxResult,
        timeZone: LocalTimeZone = .system,
        style: TextStyle = .plain
    ) -> String {
        if result.episodes.isEmpty { return "No new episodes.\n" }
        let titles = Dictionary(result.podcasts.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first })
        let header = ["ID", "DATE", "DURATION", "PODCAST", "TITLE"]
        let rows = result.episodes.map { episode in
            [
                String(episode.id),
                episode.published.map { PodcastText.day($0, timeZone: timeZone) } ?? "-",
                PodcastText.duration(seconds: episode.durationSeconds),
                titles[episode.podcastID] ?? String(episode.podcastID),
                episode.title,
            ]
        }
        return Formatting.columns([header] + rows, style: style)
    }
}
