import SinglecastProtocol

/// The root command: a group of subcommands sharing `--socket` and `--json`.
package struct Singlecastctl: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "singlecastctl",
        abstract: "Control the singlecast download daemon.",
        version: SinglecastVersion.current,
        inheritedArguments: GlobalOptions.arguments,
        groupedSubcommands: [podcastCommands],
        subcommands: [
            StatusCommand.self, EnqueueCommand.self, DownloadsCommand.self, ShowCommand.self, PauseCommand.self,
            ResumeCommand.self, RetryCommand.self, CancelCommand.self, MoveCommand.self, ClearCommand.self,
            LimitCommand.self, WatchCommand.self, PingCommand.self, VersionCommand.self, CompletionCommand.self,
            SearchCommand.self, LookupCommand.self, TopCommand.self, HTTPPasswordCommand.self, SyncCommand.self,
        ]
    )

    package init(_ arguments: ParsedArguments) throws {}

    /// Never called: the parser shows a group's help when no subcommand is given.
    package func run(_ context: CommandContext) async throws {
        context.stdout.write(HelpFormatter.help(for: [Self.self]) + "\n")
    }
}
