import SinglecastProtocol
import SinglecastSupport

/// Reading download IDs from the command line.
package enum DownloadID {
    /// Converts words such as `12` into IDs, dropping repeats and keeping the order.
    ///
    /// - Throws: ``UsageError/invalidValue(_:for:reason:)`` for a word that is not a positive whole number.
    package static func parse(_ words: [String], spec: ArgumentSpec) throws -> [Int64] {
        var ids: [Int64] = []
        for word in words {
            let id = try parse(word, spec: spec)
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// Converts one word such as `12` into an ID.
    ///
    /// - Throws: ``UsageError/invalidValue(_:for:reason:)`` for a word that is not a positive whole number.
    package static func parse(_ word: String, spec: ArgumentSpec) throws -> Int64 {
        guard word.allSatisfy(\.isASCII), let id = Int64(word), id > 0 else {
            throw UsageError.invalidValue(word, for: spec, reason: "a download ID is a positive whole number")
        }
        return id
    }

    /// `3, 4, 12`, or the first ten and `… and 4,990 more` (``ListSummary``).
    package static func list(_ ids: [Int64]) -> String {
        ListSummary.ids(ids)
    }
}

/// `pause`, `resume`, `retry` and `cancel`: one method applied to some downloads or all of them.
package protocol SelectionCommand: CLICommand {
    /// The method to call with ``selection``.
    static var method: SinglecastProtocol.Method { get }
    /// `Paused`, as in `Paused 3, 4.`.
    static var pastTense: String { get }
    var options: GlobalOptions { get }
    var selection: SelectionParams { get }
    /// The reply's text (a requirement, so that `resume` can say more than the others).
    static func render(_ result: ChangedResult) -> String
}

extension SelectionCommand {
    /// `<id> ...`, not required when `--all` is offered (the command checks that one of them is given).
    static func idArgument(_ help: String, required: Bool = false) -> ArgumentSpec {
        .positional("id", help: help, repeating: true, required: required)
    }

    /// The IDs, or `--all` when `allowsAll`; exactly one of the two.
    ///
    /// - Throws: ``UsageError`` for a bad ID, both, or neither.
    static func selection(_ arguments: ParsedArguments, allowsAll: Bool) throws -> SelectionParams {
        let ids = try DownloadID.parse(arguments.arguments("id"), spec: arguments.spec("id", kind: .positional))
        let all = allowsAll && arguments.flag("all")
        if all, !ids.isEmpty { throw UsageError.validation("Give download IDs or --all, not both") }
        if !all, ids.isEmpty {
            throw UsageError.validation(
                allowsAll
                    ? "Give the IDs of the downloads to \(method.rawValue), or --all" : "Give at least one download ID"
            )
        }
        return all ? SelectionParams(all: true) : SelectionParams(ids: ids)
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            Self.method,
            params: try WireCoding.value(of: selection),
            options: options,
            as: ChangedResult.self
        ) { Self.render($0) }
    }

    /// `Paused 3, 4.` or `Nothing to pause.`, then why each download named was left as it was.
    package static func render(_ result: ChangedResult) -> String {
        let done = result.changed.isEmpty ? "" : "\(pastTense) \(DownloadID.list(result.changed)).\n"
        return done + unchangedLines(result, nothing: done.isEmpty)
    }

    /// `Nothing to resume: download 1 is completed; use redownload.` per download left as it was; `Nothing to
    /// resume.` when nothing changed and the daemon gave no reason.
    static func unchangedLines(_ result: ChangedResult, nothing: Bool) -> String {
        let reasons = (result.unchanged ?? []).map { "Nothing to \(method.rawValue): \($0.reason).\n" }
        return reasons.isEmpty && nothing ? "Nothing to \(method.rawValue).\n" : reasons.joined()
    }
}

/// `singlecastctl pause`: holds downloads until `resume`.
package struct PauseCommand: SelectionCommand {
    package static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause downloads.",
        discussion: "A paused download keeps its partial file and continues from there on 'resume'.",
        arguments: [
            idArgument("IDs of the downloads to pause."),
            .flag("all", help: "Pause every queued and active download."),
        ]
    )
    package static let method = SinglecastProtocol.Method.pause
    package static let pastTense = "Paused"

    package var options: GlobalOptions
    package var selection: SelectionParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        selection = try Self.selection(arguments, allowsAll: true)
    }
}

/// `singlecastctl resume`: releases paused downloads, including those the daemon paused itself.
package struct ResumeCommand: SelectionCommand {
    package static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume paused downloads.",
        discussion: """
            This also releases downloads the daemon paused itself, e.g. when the disk was full. Outside the \
            configured download windows (download_window) and on a metered network (metered = pause) resumed \
            downloads wait for the gate to open, and the reply says so; --now lets them run anyway.
            """,
        arguments: [
            idArgument("IDs of the downloads to resume."),
            .flag("all", help: "Resume every paused download."),
            .flag("now", help: "Start even outside the download windows or on a metered network."),
        ]
    )
    package static let method = SinglecastProtocol.Method.resume
    package static let pastTense = "Resumed"

    package var options: GlobalOptions
    package var selection: SelectionParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        selection = try Self.selection(arguments, allowsAll: true)
        if arguments.flag("now") { selection.now = true }
    }

    /// `Resumed 3, 4.`, and for those the closed gate keeps paused, what they wait for and how to pass it.
    package static func render(_ result: ChangedResult) -> String {
        let held = result.held ?? []
        guard !held.isEmpty else {
            let done = result.changed.isEmpty ? "" : "Resumed \(DownloadID.list(result.changed)).\n"
            return done + unchangedLines(result, nothing: done.isEmpty)
        }
        let running = result.changed.filter { !held.contains($0) }
        var text = running.isEmpty ? "" : "Resumed \(DownloadID.list(running)).\n"
        let why =
            result.gate == "metered"
            ? "the network is metered (metered = pause)" : "outside the download windows (download_window)"
        text += "Not started: \(DownloadID.list(held)) wait for the download gate: \(why).\n"
        text += "Start them anyway with 'singlecastctl resume --now \(held.map(String.init).joined(separator: " "))', "
        text += "or change the setting in the configuration.\n"
        return text + unchangedLines(result, nothing: false)
    }
}

/// `singlecastctl retry`: queues failed downloads again.
package struct RetryCommand: SelectionCommand {
    package static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Queue failed downloads again.",
        arguments: [
            idArgument("IDs of the failed downloads to retry."),
            .flag("all", help: "Retry every failed download."),
        ]
    )
    package static let method = SinglecastProtocol.Method.retry
    package static let pastTense = "Queued again:"

    package var options: GlobalOptions
    package var selection: SelectionParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        selection = try Self.selection(arguments, allowsAll: true)
    }
}

/// `singlecastctl cancel`: stops downloads and removes them from the queue.
package struct CancelCommand: SelectionCommand {
    package static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Stop downloads and remove them from the queue.",
        discussion: "The partial file ('<file>.part') stays on disk unless you give --delete-partial.",
        arguments: [
            idArgument("IDs of the downloads to cancel.", required: true),
            .flag("delete-partial", help: "Delete the partial files too."),
        ]
    )
    package static let method = SinglecastProtocol.Method.cancel
    package static let pastTense = "Cancelled"

    package var options: GlobalOptions
    package var selection: SelectionParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        selection = try Self.selection(arguments, allowsAll: false)
        if arguments.flag("delete-partial") { selection.deletePartial = true }
    }
}
