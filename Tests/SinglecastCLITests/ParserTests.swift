import SinglecastCLI
import Testing

// A small tree shaped like the subcommands still to come, to exercise the framework beyond today's commands.

private struct Tool: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "tool",
        abstract: "A test tool.",
        version: "9.9.9",
        inheritedArguments: [.flag("verbose", short: "v", help: "Talk more.")],
        subcommands: [Enqueue.self, Queue.self]
    )
    init(_ arguments: ParsedArguments) throws {}
    func run(_ context: CommandContext) async throws {}
}

private struct Enqueue: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Add episodes to the download queue.",
        arguments: [
            .positional("url", help: "Feed or episode URLs.", repeating: true),
            .option("to", valueName: "dir", help: "Where to save.", required: true),
            .option("priority", short: "p", valueName: "n", help: "Queue priority.", defaultDescription: "0"),
            .option("maximum-concurrent-downloads", valueName: "count", help: "A long label."),
        ]
    )
    var verbose: Bool
    var urls: [String]
    var directory: String
    var priority: Int

    init(_ arguments: ParsedArguments) throws {
        verbose = arguments.flag("verbose")
        urls = arguments.arguments("url")
        directory = arguments.option("to")!
        priority = try arguments.option("priority", as: Int.self) ?? 0
        if priority > 10 {
            throw UsageError.invalidValue(
                String(priority),
                for: arguments.spec("priority", kind: .option),
                reason: "at most 10"
            )
        }
    }
    func run(_ context: CommandContext) async throws {}
}

private struct Queue: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Manage the queue.",
        subcommands: [Pause.self]
    )
    init(_ arguments: ParsedArguments) throws {}
    func run(_ context: CommandContext) async throws {}
}

private struct Pause: CLICommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause downloads.",
        arguments: [
            .flag("all", short: "a", help: "Pause every download."),
            .positional("id", help: "Downloads to pause.", repeating: true, required: false),
        ]
    )
    var all: Bool
    var ids: [Int]
    init(_ arguments: ParsedArguments) throws {
        all = arguments.flag("all")
        ids = try arguments.arguments("id", as: Int.self)
        if all == !ids.isEmpty { throw UsageError.validation("Give download IDs or --all, not both or neither.") }
    }
    func run(_ context: CommandContext) async throws {}
}

private func command<T: CLICommand>(_ arguments: [String], as type: T.Type) throws -> T {
    guard case .run(let path, let parsed) = CommandParser.parse(arguments, root: Tool.self) else {
        Issue.record("\(arguments) did not parse to a command")
        throw ExitCode.failure
    }
    return try #require(try path[path.count - 1].init(parsed) as? T)
}

/// The usage error the CLI would print, whether the parser or the command's `init` found it.
private func usageError(_ arguments: [String]) -> String? {
    switch CommandParser.parse(arguments, root: Tool.self) {
    case .usageError(let error, let path):
        return HelpFormatter.usageErrorMessage(error, path: path)
    case .run(let path, let parsed):
        do {
            _ = try path[path.count - 1].init(parsed)
            return nil
        } catch let error as UsageError {
            return HelpFormatter.usageErrorMessage(error, path: path)
        } catch {
            return nil
        }
    case .help, .version:
        return nil
    }
}

@Suite struct ParserTests {
    @Test func optionsPositionalsAndInheritedFlagsInAnyOrder() throws {
        let enqueue = try command(
            ["-v", "enqueue", "https://a", "--to=/music", "https://b", "-p", "-3", "--", "--odd"],
            as: Enqueue.self
        )
        #expect(enqueue.verbose)
        #expect(enqueue.urls == ["https://a", "https://b", "--odd"])
        #expect(enqueue.directory == "/music")
        #expect(enqueue.priority == -3)
    }

    @Test func lastValueOfARepeatedSingleOptionWins() throws {
        let enqueue = try command(["enqueue", "u", "--to", "/a", "--to", "/b"], as: Enqueue.self)
        #expect(enqueue.directory == "/b")
    }

    @Test func nestedGroup() throws {
        let pause = try command(["queue", "pause", "3", "4"], as: Pause.self)
        #expect(pause.ids == [3, 4])
        #expect(try command(["queue", "pause", "--all"], as: Pause.self).all)
    }

    @Test func usageErrorsOfLaterSubcommands() {
        #expect(
            usageError(["enqueue", "--to", "/a"]) == """
                Error: Missing expected argument '<url>'
                Help:  <url>  Feed or episode URLs.
                Usage: tool enqueue [--verbose] <url> ... --to <dir> [--priority <n>] [--maximum-concurrent-downloads <count>]
                  See 'tool enqueue --help' for more information.

                """
        )
        #expect(usageError(["enqueue", "u"])?.hasPrefix("Error: Missing expected argument '--to <dir>'\n") == true)
        #expect(
            usageError(["enqueue", "u", "--to", "/a", "-p", "high"])?.hasPrefix(
                """
                Error: The value 'high' is invalid for '--priority <n>'
                Help:  --priority <n>  Queue priority.

                """
            ) == true
        )
        #expect(
            usageError(["queue", "pause", "x"])?.hasPrefix("Error: The value 'x' is invalid for '<id>'\n") == true
        )
        #expect(
            usageError(["queue", "pauze"])?.hasPrefix("Error: Unknown subcommand 'pauze'. Did you mean 'pause'?\n")
                == true
        )
    }

    @Test func errorsThrownByCommandsShowUsageToo() async throws {
        guard case .run(let path, let parsed) = CommandParser.parse(["queue", "pause"], root: Tool.self) else {
            Issue.record("expected a command")
            return
        }
        #expect(throws: UsageError.validation("Give download IDs or --all, not both or neither.")) {
            try path[path.count - 1].init(parsed)
        }
        #expect(path.commandLine == "tool queue pause")
    }

    @Test func leafHelpWithArgumentsAndLongLabels() {
        guard case .help(let path) = CommandParser.parse(["help", "enqueue"], root: Tool.self) else {
            Issue.record("expected help")
            return
        }
        #expect(
            HelpFormatter.help(for: path) == """
                OVERVIEW: Add episodes to the download queue.

                USAGE: tool enqueue [--verbose] <url> ... --to <dir> [--priority <n>] [--maximum-concurrent-downloads <count>]

                ARGUMENTS:
                  <url>                   Feed or episode URLs.

                OPTIONS:
                  -v, --verbose           Talk more.
                  --to <dir>              Where to save.
                  -p, --priority <n>      Queue priority. (default: 0)
                  --maximum-concurrent-downloads <count>
                                          A long label.
                  --version               Show the version.
                  -h, --help              Show help information.

                """
        )
    }

    @Test func nestedGroupHelpPointsAtHelpSubcommand() {
        guard case .help(let path) = CommandParser.parse(["queue"], root: Tool.self) else {
            Issue.record("a group without a subcommand shows its help")
            return
        }
        #expect(
            HelpFormatter.help(for: path) == """
                OVERVIEW: Manage the queue.

                USAGE: tool queue [--verbose] <subcommand>

                OPTIONS:
                  -v, --verbose           Talk more.
                  --version               Show the version.
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  pause                   Pause downloads.

                  See 'tool help queue <subcommand>' for detailed help.
                """
        )
    }

    @Test func manyOptionsCollapseInUsage() {
        struct Big: CLICommand {
            static let configuration = CommandConfiguration(
                commandName: "big",
                abstract: "",
                arguments: (1...13).map { .flag("f\($0)", help: "") } + [.positional("term", help: "")]
            )
            init(_ arguments: ParsedArguments) throws {}
            func run(_ context: CommandContext) async throws {}
        }
        #expect(HelpFormatter.usage(for: [Big.self]) == "big [<options>] <term>")
    }

    @Test func wrapKeepsLongWordsWhole() {
        // As in ArgumentParser, only the last line may fill the width exactly.
        #expect(HelpFormatter.wrap("aaa bbb ccc", to: 7) == "aaa\nbbb ccc")
        #expect(HelpFormatter.wrap("aaa bbb ccc", to: 8) == "aaa bbb\nccc")
        #expect(HelpFormatter.wrap("aaaaaaaaaa bb", to: 5, wrappingIndent: 1) == " aaaaaaaaaa\n bb")
        #expect(HelpFormatter.wrap("one\n\ntwo", to: 80) == "one\n\ntwo")
    }
}
