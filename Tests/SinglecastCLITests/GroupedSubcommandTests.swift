import SinglecastCLI
import Testing

// Small trees with grouped subcommands, to check the parser and the help beyond singlecastctl's own.

private struct Leaf: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "leaf",
        abstract: "A leaf.",
        arguments: [.positional("word", help: "A word.", required: false)]
    )
    var word: String?
    init(_ arguments: ParsedArguments) throws { word = arguments.argument("word") }
    func run(_ context: CommandContext) async throws {}
}

private struct Fetch: CLICommand {
    static let configuration = CommandConfiguration(commandName: "fetch", abstract: "Fetch things.")
    init(_ arguments: ParsedArguments) throws {}
    func run(_ context: CommandContext) async throws {}
}

private struct Store: CLICommand {
    static let configuration = CommandConfiguration(commandName: "store", abstract: "Store things.")
    init(_ arguments: ParsedArguments) throws {}
    func run(_ context: CommandContext) async throws {}
}

private struct Mixed: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "mixed",
        abstract: "Plain and grouped subcommands.",
        groupedSubcommands: [
            CommandGroup(name: "Network", subcommands: [Fetch.self]),
            CommandGroup(name: "Disk", subcommands: [Store.self]),
        ],
        subcommands: [Leaf.self]
    )
    init(_ arguments: ParsedArguments) throws {}
    func run(_ context: CommandContext) async throws {}
}

private struct OnlyGroups: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "only",
        abstract: "Grouped subcommands alone.",
        groupedSubcommands: [CommandGroup(name: "Network", subcommands: [Fetch.self, Store.self])]
    )
    init(_ arguments: ParsedArguments) throws {}
    func run(_ context: CommandContext) async throws {}
}

@Suite struct GroupedSubcommandTests {
    @Test func helpListsEachGroupUnderItsOwnHeading() {
        #expect(
            HelpFormatter.help(for: [Mixed.self]) == """
                OVERVIEW: Plain and grouped subcommands.

                USAGE: mixed <subcommand>

                OPTIONS:
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  leaf                    A leaf.

                NETWORK SUBCOMMANDS:
                  fetch                   Fetch things.

                DISK SUBCOMMANDS:
                  store                   Store things.

                  See 'mixed help <subcommand>' for detailed help.
                """
        )
    }

    @Test func aGroupAloneHasNoPlainSection() {
        #expect(
            HelpFormatter.help(for: [OnlyGroups.self]) == """
                OVERVIEW: Grouped subcommands alone.

                USAGE: only <subcommand>

                OPTIONS:
                  -h, --help              Show help information.

                NETWORK SUBCOMMANDS:
                  fetch                   Fetch things.
                  store                   Store things.

                  See 'only help <subcommand>' for detailed help.
                """
        )
    }

    @Test func groupedSubcommandsParseLikeAnyOther() {
        guard case .run(let path, _) = CommandParser.parse(["store"], root: Mixed.self) else {
            Issue.record("store did not parse")
            return
        }
        #expect(path.map { $0.configuration.commandName } == ["mixed", "store"])
        guard case .help(let helpPath) = CommandParser.parse(["help", "fetch"], root: OnlyGroups.self) else {
            Issue.record("help fetch did not parse")
            return
        }
        #expect(helpPath.map { $0.configuration.commandName } == ["only", "fetch"])
        guard case .help(let groupPath) = CommandParser.parse([], root: OnlyGroups.self) else {
            Issue.record("a group without a subcommand did not show its help")
            return
        }
        #expect(groupPath.count == 1)
    }

    @Test func suggestionsCoverGroupedSubcommands() {
        guard case .usageError(let error, _) = CommandParser.parse(["stor"], root: Mixed.self) else {
            Issue.record("stor parsed")
            return
        }
        #expect(error == .unknownSubcommand("stor", suggestion: "store"))
    }

    @Test func allSubcommandsKeepsTheOrder() {
        #expect(
            Mixed.configuration.allSubcommands.map { $0.configuration.commandName } == ["leaf", "fetch", "store"]
        )
    }
}
