/// A command of `singlecastctl`: one node of the tree whose root is ``Singlecastctl``.
///
/// This plays the part of ArgumentParser's `ParsableCommand`. There are no property wrappers, so a command
/// declares its arguments in ``CommandConfiguration/arguments`` and reads what the user typed in
/// ``init(_:)``. Adding a subcommand means writing one conforming struct and listing it in its parent's
/// ``CommandConfiguration/subcommands``.
package protocol CLICommand: Sendable {
    /// Name, help text, arguments and subcommands.
    static var configuration: CommandConfiguration { get }

    /// Builds the command from parsed arguments.
    ///
    /// - Throws: ``UsageError`` when the values are well-formed but unacceptable (the counterpart of
    ///   ArgumentParser's `ValidationError`); the user sees the usage line and the process exits with 64.
    init(_ arguments: ParsedArguments) throws

    /// Does the work.
    ///
    /// - Throws: ``UsageError`` (exit 64), ``ExitCode`` (that status, nothing printed) or any other error,
    ///   which is printed as `Error: <description>` and ends the process with the error's
    ///   ``CLIExitStatusProviding/exitStatus`` or 1.
    func run(_ context: CommandContext) async throws
}

/// Static description of a command, the counterpart of ArgumentParser's `CommandConfiguration`.
package struct CommandConfiguration: Sendable {
    /// The word typed to select the command, or the tool name for the root.
    package var commandName: String
    /// One sentence, shown after `OVERVIEW:` and in the parent's `SUBCOMMANDS:` list.
    package var abstract: String
    /// Optional paragraphs shown below the overview.
    package var discussion: String
    /// Enables `--version` on this command and its descendants, printing this string.
    package var version: String?
    /// Flags, options and positional arguments of this command alone, in usage order.
    package var arguments: [ArgumentSpec]
    /// Flags and options that this command *and every descendant* accept, like an `@OptionGroup` that every
    /// subcommand includes. They come first in each descendant's usage and help.
    package var inheritedArguments: [ArgumentSpec]
    /// Child commands; a command with children is a group that prints its help when run without one.
    package var subcommands: [any CLICommand.Type]
    /// More child commands, listed in help under a heading of their own after ``subcommands``, like
    /// ArgumentParser's `groupedSubcommands`.
    package var groupedSubcommands: [CommandGroup]

    /// - Parameter groupedSubcommands: comes before `subcommands` here, unlike in help, so a command's list of
    ///   groups can be declared without touching the lines of its plain subcommands.
    package init(
        commandName: String,
        abstract: String,
        discussion: String = "",
        version: String? = nil,
        arguments: [ArgumentSpec] = [],
        inheritedArguments: [ArgumentSpec] = [],
        groupedSubcommands: [CommandGroup] = [],
        subcommands: [any CLICommand.Type] = []
    ) {
        precondition(
            inheritedArguments.allSatisfy { $0.kind != .positional },
            "inherited arguments must be flags or options"
        )
        let positionals = arguments.filter { $0.kind == .positional }
        precondition(
            positionals.dropLast().allSatisfy { !$0.isRepeating },
            "only the last positional argument may repeat"
        )
        precondition(
            (subcommands.isEmpty && groupedSubcommands.isEmpty) || positionals.isEmpty,
            "a command group takes no positional arguments"
        )
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.arguments = arguments
        self.inheritedArguments = inheritedArguments
        self.subcommands = subcommands
        self.groupedSubcommands = groupedSubcommands
    }

    /// Every child command: ``subcommands`` first, then each group's in order.
    package var allSubcommands: [any CLICommand.Type] {
        subcommands + groupedSubcommands.flatMap(\.subcommands)
    }
}

/// Child commands shown together under `<NAME> SUBCOMMANDS:` in their parent's help, like ArgumentParser's
/// `CommandGroup`.
package struct CommandGroup: Sendable {
    /// The heading's first word, e.g. `Podcasts`; help shows it upper-cased.
    package var name: String
    package var subcommands: [any CLICommand.Type]

    package init(name: String, subcommands: [any CLICommand.Type]) {
        self.name = name
        self.subcommands = subcommands
    }
}

/// Ends the process with a status and prints nothing more, like ArgumentParser's `ExitCode`.
package struct ExitCode: Error, Hashable, Sendable {
    package var rawValue: Int32

    package init(_ rawValue: Int32) { self.rawValue = rawValue }

    package static let success = ExitCode(0)
    package static let failure = ExitCode(1)
    /// `EX_USAGE` from sysexits.h.
    package static let usage = ExitCode(64)
    /// `EX_UNAVAILABLE` from sysexits.h: the daemon cannot be reached.
    package static let unavailable = ExitCode(69)
}

/// An error that chooses the exit status the CLI ends with after printing it.
package protocol CLIExitStatusProviding: Error {
    var exitStatus: ExitCode { get }
}

/// A chain of commands from the root to the one being parsed, helped or run.
package typealias CommandPath = [any CLICommand.Type]

extension Array where Element == any CLICommand.Type {
    /// `singlecastctl status`: the names as typed.
    package var commandLine: String {
        map { $0.configuration.commandName }.joined(separator: " ")
    }

    /// Flags and options the last command accepts, inherited ones first, then its own arguments.
    package var visibleArguments: [ArgumentSpec] {
        flatMap { $0.configuration.inheritedArguments } + (last?.configuration.arguments ?? [])
    }

    /// The version string `--version` prints, when some command on the path enables it.
    package var versionString: String? {
        lazy.compactMap { $0.configuration.version }.first
    }
}
