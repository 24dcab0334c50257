import SinglecastCLI
import Testing

/// Golden usage errors: ArgumentParser's `Error:` / `Usage:` / `See …` shape on stderr, exit status 64.
@Suite struct UsageErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var stderr: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let statusUsage = """
        Usage: singlecastctl status [--socket <path>] [--json] [--watch]
          See 'singlecastctl status --help' for more information.

        """
    static let rootUsage = """
        Usage: singlecastctl [--socket <path>] [--json] <subcommand>
          See 'singlecastctl --help' for more information.

        """

    static let cases: [Case] = [
        Case(arguments: ["status", "--frob"], stderr: "Error: Unknown option '--frob'\n" + statusUsage),
        Case(arguments: ["--frob", "status"], stderr: "Error: Unknown option '--frob'\n" + statusUsage),
        Case(
            arguments: ["status", "--jsno"],
            stderr: "Error: Unknown option '--jsno'. Did you mean '--json'?\n" + statusUsage
        ),
        Case(arguments: ["status", "-x"], stderr: "Error: Unknown option '-x'\n" + statusUsage),
        Case(
            arguments: ["stauts"],
            stderr: "Error: Unknown subcommand 'stauts'. Did you mean 'status'?\n" + rootUsage
        ),
        Case(arguments: ["frobnicate"], stderr: "Error: Unknown subcommand 'frobnicate'\n" + rootUsage),
        Case(
            arguments: ["help", "wach"],
            stderr: "Error: Unknown subcommand 'wach'. Did you mean 'watch'?\n" + rootUsage
        ),
        Case(
            arguments: ["--socket"],
            stderr: """
                Error: Missing value for '--socket <path>'
                Help:  --socket <path>  Path of the daemon's control socket.

                """ + rootUsage
        ),
        Case(
            // `--json` here would ask for the error as JSON (JSONErrorTests); another flag shows the text.
            arguments: ["status", "--socket", "--watch"],
            stderr: """
                Error: Missing value for '--socket <path>'
                Help:  --socket <path>  Path of the daemon's control socket.

                """ + statusUsage
        ),
        Case(
            arguments: ["status", "--socket="],
            stderr: """
                Error: The value '' is invalid for '--socket <path>': the path is empty
                Help:  --socket <path>  Path of the daemon's control socket.

                """ + statusUsage
        ),
        Case(arguments: ["status", "x"], stderr: "Error: Unexpected argument 'x'\n" + statusUsage),
        Case(arguments: ["status", "--", "--json"], stderr: "Error: Unexpected argument '--json'\n" + statusUsage),
        Case(arguments: ["status", "x", "y"], stderr: "Error: 2 unexpected arguments: 'x', 'y'\n" + statusUsage),
        Case(
            arguments: ["status", "--json=yes"],
            stderr: "Error: The option '--json' does not take any value, but 'yes' was specified.\n" + statusUsage
        ),
        Case(
            arguments: ["watch", "--topic"],
            stderr: """
                Error: Missing value for '--topic <topic>'
                Help:  --topic <topic>  Print only events of this topic, and daemon.stopping; repeat for several. (values: daemon, downloads, podcasts, episodes, sync)
                Usage: singlecastctl watch [--socket <path>] [--json] [--topic <topic> ...] [--event <name> ...]
                  See 'singlecastctl watch --help' for more information.

                """
        ),
    ]

    @Test(arguments: cases)
    func usageError(_ testCase: Case) async {
        let run = await runCLI(testCase.arguments)
        #expect(run.status == 64)
        #expect(run.stdout == "")
        #expect(run.stderr == testCase.stderr)
    }

    @Test(arguments: [
        ("status", "stauts", 2), ("status", "status", 0), ("ping", "pong", 1), ("", "abc", 3), ("kitten", "sitting", 3),
    ])
    func editDistance(_ a: String, _ b: String, _ distance: Int) {
        #expect(EditDistance.between(a, b) == distance)
        #expect(EditDistance.between(b, a) == distance)
    }

    @Test func suggestionNeedsTwoEditsOrFewer() {
        let names = ["status", "ping", "version", "watch"]
        #expect(EditDistance.suggestion(for: "stats", among: names) == "status")
        #expect(EditDistance.suggestion(for: "verison", among: names) == "version")
        #expect(EditDistance.suggestion(for: "xyz", among: names) == nil)
        #expect(EditDistance.suggestion(for: "pin", among: names) == "ping")
    }
}
