import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl trash [restore ID… | empty [--older-than D]]`: what singlecast put in the Trash.
package struct TrashCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "trash",
        abstract: "List, restore or empty what singlecast trashed.",
        discussion: """
            Retention and 'singlecastctl delete' move files to the freedesktop.org Trash (unless use_trash = \
            false). Without an action, lists them: ID, when deleted, size, podcast, episode and original path. \
            'restore ID...' moves each file back to where it was, refusing when something is there now, and makes \
            its episode downloaded again, pinned so that retention does not delete it again at once ('singlecastctl \
            unpin EPISODE' lets retention have it). 'empty' deletes singlecast's own files from the Trash for \
            good; nothing else in the Trash is listed or touched.

            Examples:
              singlecastctl trash
              singlecastctl trash restore 3fa2c9d1
              singlecastctl trash empty --older-than 30d
            """,
        arguments: [
            .option(
                "older-than",
                valueName: "duration",
                help: "With 'empty': only files deleted at least this long ago (12h, 30d, 2w).",
                defaultDescription: "all"
            ),
            .positional(
                "action",
                help: "What to do; without one, lists the files. (values: restore, empty)",
                required: false
            ),
            .positional(
                "id",
                help: "With 'restore': IDs as 'singlecastctl trash' lists them.",
                repeating: true,
                required: false
            ),
        ]
    )

    package enum Action: Hashable, Sendable {
        case list
        case restore([String])
        case empty(olderThan: String?)
    }

    package var options: GlobalOptions
    package var action: Action

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let ids = arguments.arguments("id")
        let olderThan = arguments.option("older-than")
        switch arguments.argument("action") {
        case nil:
            action = .list
        case "restore":
            if ids.isEmpty {
                throw UsageError.validation("Give the IDs to restore, as 'singlecastctl trash' lists them")
            }
            action = .restore(ids.reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
        case "empty":
            if !ids.isEmpty { throw UsageError.unexpectedArguments(ids) }
            action = .empty(olderThan: olderThan)
        case let word?:
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("action", kind: .positional),
                reason: "the action is 'restore' or 'empty'"
            )
        }
        switch action {
        case .list where !ids.isEmpty: throw UsageError.unexpectedArguments(ids)
        case .list, .restore: if olderThan != nil { throw UsageError.validation("--older-than goes with 'empty' only") }
        case .empty: break
        }
    }

    package func run(_ context: CommandContext) async throws {
        switch action {
        case .list:
            try await context.callAndPrint(.trash, options: options, as: TrashResult.self) {
                Self.render($0, style: context.style)
            }
        case .restore(let ids):
            try await report(.restore, RestoreParams(ids: ids), context, as: RestoreResult.self) {
                (Self.render($0), !$0.refused.isEmpty)
            }
        case .empty(let olderThan):
            try await report(.purge, PurgeParams(olderThan: olderThan), context, as: PurgeResult.self) {
                (Self.render($0), !$0.failed.isEmpty)
            }
        }
    }

    /// Calls `method`, prints its result (JSON or text), and ends with 1 when `render` says some of it failed.
    private func report<Result: Decodable>(
        _ method: SinglecastProtocol.Method,
        _ params: some Encodable,
        _ context: CommandContext,
        as type: Result.Type,
        render: (Result) -> (text: String, failed: Bool)
    ) async throws {
        let (result, _) = try await context.call(method, params: try WireCoding.value(of: params), options: options)
        let (text, failed) = render(try context.decode(type, from: result, method: method))
        if options.json { try context.printJSON(result) } else { context.stdout.write(text) }
        if failed { throw ExitCode.failure }
    }

    /// Rows shown before a long list is summarised.
    static let shownRows = 50

    /// A table of ID, DELETED, SIZE, PODCAST, EPISODE and ORIGINAL, then the total; a long list ends with
    /// `… and N more`.
    package static func render(
        _ result: TrashResult,
        timeZone: LocalTimeZone = .system,
        style: TextStyle = .plain
    ) -> String {
        guard result.useTrash || !result.files.isEmpty else {
            return "use_trash is off: deleted files are deleted for good, not put in the Trash.\n"
        }
        if result.files.isEmpty { return "singlecast has nothing in the Trash.\n" }
        let header = ["ID", "DELETED", "SIZE", "PODCAST", "EPISODE", "ORIGINAL"]
        let rows = result.files.prefix(shownRows).map { file in
            [
                file.id,
                PodcastText.time(file.trashedAt, timeZone: timeZone),
                Formatting.byteCount(file.size),
                file.podcastTitle ?? "-",
                file.episode.map { id in file.episodeTitle.map { "\(id) \($0)" } ?? String(id) } ?? "-",
                file.original,
            ]
        }
        var text = Formatting.columns([header] + rows, style: style)
        let more = result.files.count - rows.count
        if more > 0 { text += "… and \(more) more ('--json' lists them all)\n" }
        text += "\(result.files.count) file(s), \(Formatting.byteCount(result.totalBytes)) in the Trash.\n"
        return text
    }

    /// `Restored <file> (episode N, download M, pinned…)` per file, `Kept <id> in the Trash: <why>` per refusal.
    package static func render(_ result: RestoreResult) -> String {
        var text = ""
        for file in result.restored {
            var detail: String
            if let episode = file.episode, let download = file.download {
                detail = "episode \(episode) is downloaded again as download \(download)"
                if file.pinned {
                    detail += "; pinned so that retention keeps it ('singlecastctl unpin \(episode)' lets it go)"
                }
            } else {
                detail = "no episode of a subscription has it now, so nothing tracks it"
            }
            text += "Restored \(file.file): \(detail).\n"
        }
        for refusal in result.refused {
            text += "Kept \(refusal.id) in the Trash: \(refusal.reason).\n"
        }
        return text
    }

    /// `Emptied N file(s) (SIZE) from the Trash.`, and each file that stays with why.
    package static func render(_ result: PurgeResult) -> String {
        var text =
            result.purged.isEmpty
            ? "Nothing of singlecast's to empty from the Trash.\n"
            : "Emptied \(result.purged.count) file(s) (\(Formatting.byteCount(result.freedBytes))) from the Trash.\n"
        for failure in result.failed { text += "Could not empty \(failure.file): \(failure.reason).\n" }
        return text
    }
}
