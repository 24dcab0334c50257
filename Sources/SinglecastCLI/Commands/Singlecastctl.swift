import SinglecastProtocol

/// The root command: a group of subcommands sharing `--socket` and `--json`.
package struct Singlecastctl: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "singlecastctl",
        abstract: "Control the singlecast download daemon.",
        version: SinglecastVersion.current,
        inheritedArguments: GlobalOptions.arguments,
        subcommands: [StatusCommand.self, PingCommand.self, VersionCommand.self, WatchCommand.self]
    )

    package init(_ arguments: ParsedArguments) throws {}

    /// Never called: the parser shows a group's help when no subcommand is given.
    package func run(_ context: CommandContext) async throws {
        context.stdout.write(HelpFormatter.help(for: [Self.self]) + "\n")
    }
}
