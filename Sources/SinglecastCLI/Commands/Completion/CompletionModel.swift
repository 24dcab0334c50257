import FoundationEssentials
import SinglecastSupport

/// What a shell may offer at one point of a `singlecastctl` command line.
package enum CompletionValue: Hashable, Sendable {
    /// Free text: nothing to offer.
    case none
    /// One of these words, from the `(values: …)` list in the argument's help.
    case choices([String])
    case file
    case directory
    /// Podcast ids, and the titles no other podcast shares (equal titles are told apart by id), asked from the
    /// running daemon (`singlecastctl --json podcasts`).
    case podcast
    /// Download ids, asked from the running daemon (`singlecastctl --json downloads`).
    case download
    /// Episode ids of the new episodes, asked from the running daemon (`singlecastctl --json inbox`).
    case episode
    /// Ids of singlecast's files in the Trash, asked from the running daemon (`singlecastctl --json trash`).
    case trashed
}

/// One flag or option as the completion scripts offer it.
package struct CompletionOption: Hashable, Sendable {
    package var long: String
    package var short: Character?
    package var help: String
    /// `nil` for a flag; what its value may be for an option.
    package var value: CompletionValue?
}

/// One command of the tree, flattened for the script generators.
package struct CompletionNode: Hashable, Sendable {
    /// Subcommand names from the root, e.g. `["enqueue"]`; empty for the root.
    package var path: [String]
    package var abstract: String
    /// Inherited options first, then the command's own, then `--help` (and `--version` where enabled).
    package var options: [CompletionOption]
    /// Child command names with their abstracts, in help order.
    package var subcommands: [(name: String, abstract: String)]
    /// What the positional arguments take; the last repeats when the command's last positional does.
    package var positionals: [CompletionValue]

    package static func == (lhs: CompletionNode, rhs: CompletionNode) -> Bool {
        lhs.path == rhs.path
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(path) }
}

/// The command table as the completion scripts see it: derived from ``CommandConfiguration``s alone, so a new
/// command, option or value list is completed without touching the generators.
package enum CompletionModel {
    /// Every command from `root` down, parents before children.
    package static func nodes(root: CommandPath = [Singlecastctl.self]) -> [CompletionNode] {
        guard let command = root.last else { return [] }
        let configuration = command.configuration
        var options = root.visibleArguments.filter { $0.kind != .positional }.map(option)
        if root.versionString != nil {
            options.append(CompletionOption(long: "version", short: nil, help: "Show the version.", value: nil))
        }
        options.append(CompletionOption(long: "help", short: "h", help: "Show help information.", value: nil))
        let node = CompletionNode(
            path: root.dropFirst().map { $0.configuration.commandName },
            abstract: configuration.abstract,
            options: options,
            subcommands: configuration.allSubcommands.map {
                (name: $0.configuration.commandName, abstract: $0.configuration.abstract)
            },
            positionals: configuration.arguments.filter { $0.kind == .positional }.map(value)
        )
        return [node] + configuration.allSubcommands.flatMap { nodes(root: root + [$0]) }
    }

    static func option(_ spec: ArgumentSpec) -> CompletionOption {
        CompletionOption(
            long: spec.name,
            short: spec.shortName,
            help: spec.help,
            value: spec.kind == .flag ? nil : value(spec)
        )
    }

    /// What an option's value or a positional argument takes, read from its names and help text.
    static func value(_ spec: ArgumentSpec) -> CompletionValue {
        if let choices = choices(inHelp: spec.help) { return .choices(choices) }
        let names = [spec.name, spec.valueName]
        if names.contains("policy") { return .choices(policies) }
        if names.contains("podcast") { return .podcast }
        if names.contains("episode") { return .episode }
        if names.contains("id"), spec.help.lowercased().contains("download") { return .download }
        if names.contains("id"), spec.help.contains("'singlecastctl trash'") { return .trashed }
        if names.contains("file") || names.contains("path") { return .file }
        if names.contains("dir") { return .directory }
        return .none
    }

    /// The auto-download policies offered for `--auto`: `latest:N` with a few common Ns.
    static let policies = ["off", "all-new", "latest:1", "latest:3", "latest:5", "latest:10"]

    /// The words of a help text's `(values: a, b, c)`, as the help shows an argument's choices.
    static func choices(inHelp help: String) -> [String]? {
        guard let start = help.firstRange(of: "(values: "), let end = help[start.upperBound...].firstIndex(of: ")")
        else {
            return nil
        }
        return help[start.upperBound..<end].split(separator: ",").map { $0.trimmingWhitespace() }
    }
}
