import SinglecastCLI
import Testing

/// Every local check of the podcast commands: exit 64 with ArgumentParser's
/// three-part message, before any connection (nothing listens at the socket these runs use).
@Suite struct PodcastUsageErrorTests {
    typealias Case = UsageErrorTests.Case

    static func usage(_ command: String, _ arguments: String) -> String {
        """
        Usage: singlecastctl \(command) [--socket <path>] [--json]\(arguments.isEmpty ? "" : " " + arguments)
          See 'singlecastctl \(command) --help' for more information.

        """
    }

    static let usages: [String: String] = [
        "subscribe": """
        Usage: singlecastctl subscribe [<options>] [<feed-url>]
          See 'singlecastctl subscribe --help' for more information.

        """,
        "unsubscribe": usage("unsubscribe", "<podcast> [--delete-files]"),
        "podcasts": usage("podcasts", "[--limit <n>] [--after <id>]"),
        "episodes": usage("episodes", "<podcast> [--new] [--unplayed] [--limit <n>]"),
        "refresh": usage("refresh", "[<podcast>]"),
        "set": """
        Usage: singlecastctl set [<options>] <podcast>
          See 'singlecastctl set --help' for more information.

        """,
        "download": usage("download", "<podcast> --latest <n> [--now]"),
        "import": usage("import", "<file>"),
        "export": usage("export", "[<file>]"),
        "trash": usage("trash", "[--older-than <duration>] [<action>] [<id> ...]"),
    ]

    static let subscribe = usages["subscribe"]!
    static let unsubscribe = usages["unsubscribe"]!
    static let episodes = usages["episodes"]!
    static let refresh = usages["refresh"]!
    static let set = usages["set"]!
    static let download = usages["download"]!
    static let importUsage = usages["import"]!
    static let export = usages["export"]!
    static let trash = usages["trash"]!

    static let feed = "https://feeds.example.com/daily.xml"
    static let podcastHelp =
        "Help:  <podcast>  The podcast's ID, or part of its title, as 'podcasts' lists them.\n"
    static let autoHelp =
        "Help:  --auto <policy>  What to download after each refresh: off, all-new (every new episode) or latest:N "
        + "(the N newest).\n"
    static let keepHelp =
        "Help:  --keep <n>  How many downloaded episodes to keep; older files are deleted. 0 keeps all.\n"
    static let badAuto = "expected off, all-new or latest:N with N from 1 to 10000"
    static let limitHelp = "Help:  --limit <n>  Show at most this many.\n"
    static let latestHelp = "Help:  --latest <n>  How many of the newest episodes to download.\n"
    static let fileHelp = "Help:  <file>  The OPML file; '-' reads standard input.\n"

    static let cases: [Case] = [
        // trash
        Case(
            arguments: ["trash", "restore"],
            stderr: "Error: Give the IDs to restore, as 'singlecastctl trash' lists them\n" + trash
        ),
        Case(
            arguments: ["trash", "throw"],
            stderr: "Error: The value 'throw' is invalid for '<action>': the action is 'restore' or 'empty'\n"
                + "Help:  <action>  What to do; without one, lists the files. (values: restore, empty)\n" + trash
        ),
        Case(
            arguments: ["trash", "restore", "abc", "--older-than", "1d"],
            stderr: "Error: --older-than goes with 'empty' only\n" + trash
        ),
        // subscribe
        Case(arguments: ["subscribe"], stderr: "Error: Give the feed URL of the podcast, or --itunes-id\n" + subscribe),
        Case(
            arguments: ["subscribe", feed, "--itunes-id", "1200361736"],
            stderr: "Error: Give a feed URL or --itunes-id, not both\n" + subscribe
        ),
        Case(
            arguments: ["subscribe", "--itunes-id", "daily"],
            stderr: "Error: The value 'daily' is invalid for '--itunes-id <id>': an iTunes ID is a positive whole "
                + "number such as 1200361736\n"
                + "Help:  --itunes-id <id>  Subscribe to this podcast of Apple's directory instead of a feed URL.\n"
                + subscribe
        ),
        Case(
            arguments: ["subscribe", "--itunes-id", "0"],
            stderr: "Error: The value '0' is invalid for '--itunes-id <id>': an iTunes ID is a positive whole "
                + "number such as 1200361736\n"
                + "Help:  --itunes-id <id>  Subscribe to this podcast of Apple's directory instead of a feed URL.\n"
                + subscribe
        ),
        Case(
            arguments: ["subscribe", "1200361736"],
            stderr: "Error: The value '1200361736' is invalid for '<feed-url>': not a URL; for Apple's podcast "
                + "1200361736 use --itunes-id 1200361736\n"
                + "Help:  <feed-url>  The feed's HTTP or HTTPS URL.\n" + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--user", "ada"],
            stderr: "Error: --user and --password-file go together; give both or neither\n" + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--password-file", "-"],
            stderr: "Error: --user and --password-file go together; give both or neither\n" + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--user=", "--password-file", "/p"],
            stderr: "Error: The value '' is invalid for '--user <user>': the name is empty\n"
                + "Help:  --user <user>  User name for a private feed (HTTP Basic authentication).\n" + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--auto", "sometimes"],
            stderr: "Error: The value 'sometimes' is invalid for '--auto <policy>': \(badAuto)\n" + autoHelp
                + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--auto", "latest:0"],
            stderr: "Error: The value 'latest:0' is invalid for '--auto <policy>': \(badAuto)\n" + autoHelp
                + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--keep", "-1"],
            stderr: "Error: The value '-1' is invalid for '--keep <n>': a number of episodes, or 0 to keep all\n"
                + keepHelp + subscribe
        ),
        Case(
            arguments: ["subscribe", feed, "--auto", "latest:5", "--keep", "2"],
            stderr: "Error: --keep 2 is less than the 5 of --auto latest:5; the newest episodes would be deleted "
                + "and downloaded again\n" + subscribe
        ),
        Case(arguments: ["subscribe", feed, "second"], stderr: "Error: Unexpected argument 'second'\n" + subscribe),
        Case(
            arguments: ["subscribe", feed, "--keep"],
            stderr: "Error: Missing value for '--keep <n>'\n" + keepHelp + subscribe
        ),
        // unsubscribe
        Case(
            arguments: ["unsubscribe"],
            stderr: "Error: Missing expected argument '<podcast>'\n" + podcastHelp + unsubscribe
        ),
        Case(
            arguments: ["unsubscribe", " "],
            stderr: "Error: The value ' ' is invalid for '<podcast>': give a podcast ID or the start of a title\n"
                + podcastHelp + unsubscribe
        ),
        Case(
            arguments: ["unsubscribe", "3", "--delete-file"],
            stderr: "Error: Unknown option '--delete-file'. Did you mean '--delete-files'?\n" + unsubscribe
        ),
        // podcasts
        Case(arguments: ["podcasts", "daily"], stderr: "Error: Unexpected argument 'daily'\n" + usages["podcasts"]!),
        Case(
            arguments: ["podcasts", "--limit", "0"],
            stderr: "Error: The value '0' is invalid for '--limit <n>': a whole number of podcasts, at least 1\n"
                + limitHelp + usages["podcasts"]!
        ),
        Case(
            arguments: ["podcasts", "--after", "last"],
            stderr: "Error: The value 'last' is invalid for '--after <id>': a podcast ID, a whole number\n"
                + "Help:  --after <id>  Show only podcasts with a greater ID.\n" + usages["podcasts"]!
        ),
        // episodes
        Case(
            arguments: ["episodes", "--new"],
            stderr: "Error: Missing expected argument '<podcast>'\n" + podcastHelp + episodes
        ),
        Case(
            arguments: ["episodes", "3", "--limit", "0"],
            stderr: "Error: The value '0' is invalid for '--limit <n>': a whole number of episodes, at least 1\n"
                + limitHelp + episodes
        ),
        Case(
            arguments: ["episodes", "3", "--limit", "ten"],
            stderr: "Error: The value 'ten' is invalid for '--limit <n>': a whole number of episodes, at least 1\n"
                + limitHelp + episodes
        ),
        Case(
            arguments: ["episodes", "3", "--new=yes"],
            stderr: "Error: The option '--new' does not take any value, but 'yes' was specified.\n" + episodes
        ),
        // refresh
        Case(arguments: ["refresh", "3", "4"], stderr: "Error: Unexpected argument '4'\n" + refresh),
        Case(
            arguments: ["refresh", ""],
            stderr: "Error: The value '' is invalid for '<podcast>': give a podcast ID or the start of a title\n"
                + "Help:  <podcast>  The podcast's ID, or part of its title; every podcast when left out.\n"
                + refresh
        ),
        // set
        Case(
            arguments: ["set", "3"],
            stderr: "Error: Give --auto, --keep, a rule option (such as --title-exclude), --name-template, --folder, "
                + "--refresh-interval or --feed-url\n" + set
        ),
        Case(
            arguments: ["set", "--keep", "3"],
            stderr: "Error: Missing expected argument '<podcast>'\n" + podcastHelp + set
        ),
        Case(
            arguments: ["set", "3", "--keep", "all"],
            stderr: "Error: The value 'all' is invalid for '--keep <n>': a number of episodes, or 0 to keep all\n"
                + keepHelp + set
        ),
        Case(
            arguments: ["set", "3", "--auto", "latest:4", "--keep", "3"],
            stderr: "Error: --keep 3 is less than the 4 of --auto latest:4; the newest episodes would be deleted "
                + "and downloaded again\n" + set
        ),
        Case(
            arguments: ["set", "3", "--auto", "latest"],
            stderr: "Error: The value 'latest' is invalid for '--auto <policy>': \(badAuto)\n" + autoHelp + set
        ),
        // download
        Case(
            arguments: ["download", "3"],
            stderr: "Error: Missing expected argument '--latest <n>'\n" + latestHelp + download
        ),
        Case(
            arguments: ["download", "3", "--latest", "0"],
            stderr: "Error: The value '0' is invalid for '--latest <n>': a whole number of episodes, at least 1\n"
                + latestHelp + download
        ),
        Case(
            arguments: ["download", "--latest", "2"],
            stderr: "Error: Missing expected argument '<podcast>'\n" + podcastHelp + download
        ),
        // import
        Case(arguments: ["import"], stderr: "Error: Missing expected argument '<file>'\n" + fileHelp + importUsage),
        Case(arguments: ["import", "a.opml", "b.opml"], stderr: "Error: Unexpected argument 'b.opml'\n" + importUsage),
        Case(
            arguments: ["import", ""],
            stderr: "Error: The value '' is invalid for '<file>': the path is empty\n" + fileHelp + importUsage
        ),
        // export
        Case(arguments: ["export", "a.opml", "b.opml"], stderr: "Error: Unexpected argument 'b.opml'\n" + export),
        Case(
            arguments: ["export", ""],
            stderr: "Error: The value '' is invalid for '<file>': the path is empty\n"
                + "Help:  <file>  Where to write; standard output when left out or '-'.\n" + export
        ),
        // the group's commands take part in suggestions like every other subcommand
        Case(
            arguments: ["subscibe", feed],
            stderr: "Error: Unknown subcommand 'subscibe'. Did you mean 'subscribe'?\n" + UsageErrorTests.rootUsage
        ),
        Case(
            arguments: ["help", "episode"],
            stderr: "Error: Unknown subcommand 'episode'. Did you mean 'episodes'?\n" + UsageErrorTests.rootUsage
        ),
    ]

    @Test(arguments: cases)
    func usageError(_ testCase: Case) async throws {
        try await withTemporaryDirectory { directory in
            // A socket path where nothing listens: reaching the daemon would fail with 69, not 64.
            let run = await runCLI(testCase.arguments, environment: ["SINGLECAST_SOCKET": directory + "/none.sock"])
            #expect(run.status == 64)
            #expect(run.stdout == "")
            #expect(run.stderr == testCase.stderr)
        }
    }
}
