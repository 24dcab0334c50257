import SinglecastCLI
import Testing

/// Every local check of the download commands: exit 64 with ArgumentParser's three-part message, before any
/// connection (no socket exists at the default path these runs would use).
@Suite struct DownloadUsageErrorTests {
    typealias Case = UsageErrorTests.Case

    static func usage(_ command: String, _ arguments: String) -> String {
        """
        Usage: singlecastctl \(command) [--socket <path>] [--json] \(arguments)
          See 'singlecastctl \(command) --help' for more information.

        """
    }

    static let enqueue = usage(
        "enqueue",
        "[<url-or-episode> ...] [--input-file <file>] [--to <dir>] [--name <file>] [--header <header> ...] [--user <user>] "
            + "[--password-file <file>] [--priority <n>] [--now]"
    )
    static let downloads = usage("downloads", "[--state <state>] [--podcast <podcast>] [--limit <n>]")
    static let show = usage("show", "<id>")
    static let pause = usage("pause", "[<id> ...] [--all]")
    static let resume = usage("resume", "[<id> ...] [--all] [--now]")
    static let retry = usage("retry", "[<id> ...] [--all]")
    static let cancel = usage("cancel", "<id> ... [--delete-partial]")
    static let move = usage("move", "<id> [--top] [--bottom] [--before <id>]")
    static let clear = usage("clear", "[--completed] [--failed] [--delete-partial]")
    static let limit = usage("limit", "[<rate>]")

    static let headerHelp = "Help:  --header <header>  Extra request header as 'Name: value'; repeat for several.\n"
    static let idHelp = "Help:  <id>  ID of the download, as 'downloads' lists it.\n"
    static let idsHelp = "Help:  <id>  IDs of the downloads to pause.\n"
    static let badID = "a download ID is a positive whole number"

    static let cases: [Case] = [
        // enqueue
        Case(
            arguments: ["enqueue"],
            stderr: "Error: Give URLs or episode IDs to enqueue, or -i with a file of URLs\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "-i", "-", "--user", "me", "--password-file", "-"],
            stderr: "Error: -i and --password-file cannot both read standard input\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "-i", "urls.txt", "--name", "x.mp3"],
            stderr: "Error: --name needs exactly one URL, not -i\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "https://a/2.mp3", "--name", "x.mp3"],
            stderr: "Error: --name needs exactly one URL, not 2\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--name", "sub/x.mp3"],
            stderr: "Error: The value 'sub/x.mp3' is invalid for '--name <file>': a file name, not a path; "
                + "use --to for the directory\n"
                + "Help:  --name <file>  File name to save as; only with a single URL.\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--name", ".."],
            stderr: "Error: The value '..' is invalid for '--name <file>': not a file name\n"
                + "Help:  --name <file>  File name to save as; only with a single URL.\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--header", "Authorization"],
            stderr: "Error: The value 'Authorization' is invalid for '--header <header>': expected 'Name: value'\n"
                + headerHelp + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--header", "X-A: 1", "--header", ": value"],
            stderr: "Error: The value ': value' is invalid for '--header <header>': the header name is empty\n"
                + headerHelp + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--header", "X A: 1"],
            stderr: "Error: The value 'X A: 1' is invalid for '--header <header>': the header name contains a space\n"
                + headerHelp + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--header", "X-A: 1\r\nX-B: 2"],
            stderr: "Error: The value 'X-A: 1\r\nX-B: 2' is invalid for '--header <header>': a header must be a "
                + "single line\n" + headerHelp + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--user", "me"],
            stderr: "Error: --user and --password-file go together; give both or neither\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--password-file", "/p"],
            stderr: "Error: --user and --password-file go together; give both or neither\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--user=", "--password-file", "/p"],
            stderr: "Error: The value '' is invalid for '--user <user>': the name is empty\n"
                + "Help:  --user <user>  User name for HTTP Basic authentication.\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--priority", "high"],
            stderr: "Error: The value 'high' is invalid for '--priority <n>'\n"
                + "Help:  --priority <n>  Higher runs first.\n" + enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "--to="],
            stderr: "Error: The value '' is invalid for '--to <dir>': the path is empty\n"
                + "Help:  --to <dir>  Directory to save the files in.\n" + enqueue
        ),
        // downloads
        Case(
            arguments: ["downloads", "--state", "done"],
            stderr: "Error: The value 'done' is invalid for '--state <state>': expected one of queued, active, "
                + "paused, failed, completed\n"
                + "Help:  --state <state>  Show only downloads in this state. (values: queued, active, paused, "
                + "failed, completed)\n" + downloads
        ),
        Case(
            arguments: ["downloads", "--limit", "0"],
            stderr: "Error: The value '0' is invalid for '--limit <n>': a whole number of downloads, at least 1\n"
                + "Help:  --limit <n>  Show at most this many.\n" + downloads
        ),
        Case(
            arguments: ["downloads", "--podcast", " "],
            stderr: "Error: The value ' ' is invalid for '--podcast <podcast>': give a podcast ID or the start of a "
                + "title\nHelp:  --podcast <podcast>  Show only the downloads of this podcast's episodes: its ID, or "
                + "the start of its title.\n" + downloads
        ),
        // show
        Case(arguments: ["show"], stderr: "Error: Missing expected argument '<id>'\n" + idHelp + show),
        Case(
            arguments: ["show", "0"],
            stderr: "Error: The value '0' is invalid for '<id>': \(badID)\n" + idHelp + show
        ),
        Case(
            arguments: ["show", "twelve"],
            stderr: "Error: The value 'twelve' is invalid for '<id>': \(badID)\n" + idHelp + show
        ),
        Case(arguments: ["show", "1", "2"], stderr: "Error: Unexpected argument '2'\n" + show),
        // pause, resume, retry, cancel
        Case(arguments: ["pause"], stderr: "Error: Give the IDs of the downloads to pause, or --all\n" + pause),
        Case(arguments: ["pause", "3", "--all"], stderr: "Error: Give download IDs or --all, not both\n" + pause),
        Case(
            arguments: ["pause", "3", "-4"],
            stderr: "Error: The value '-4' is invalid for '<id>': \(badID)\n" + idsHelp + pause
        ),
        Case(
            arguments: ["pause", "3.5"],
            stderr: "Error: The value '3.5' is invalid for '<id>': \(badID)\n" + idsHelp + pause
        ),
        Case(arguments: ["resume"], stderr: "Error: Give the IDs of the downloads to resume, or --all\n" + resume),
        Case(arguments: ["resume", "--all", "1"], stderr: "Error: Give download IDs or --all, not both\n" + resume),
        Case(
            arguments: ["retry", "0"],
            stderr: "Error: The value '0' is invalid for '<id>': \(badID)\n"
                + "Help:  <id>  IDs of the failed downloads to retry.\n" + retry
        ),
        Case(arguments: ["retry"], stderr: "Error: Give the IDs of the downloads to retry, or --all\n" + retry),
        Case(
            arguments: ["cancel"],
            stderr: "Error: Missing expected argument '<id>'\nHelp:  <id>  IDs of the downloads to cancel.\n" + cancel
        ),
        Case(arguments: ["cancel", "--all"], stderr: "Error: Unknown option '--all'\n" + cancel),
        // move
        Case(arguments: ["move", "3"], stderr: "Error: Give one of --top, --bottom or --before <id>\n" + move),
        Case(
            arguments: ["move", "3", "--top", "--bottom"],
            stderr: "Error: Give only one of --top, --bottom and --before <id>\n" + move
        ),
        Case(
            arguments: ["move", "3", "--bottom", "--before", "4"],
            stderr: "Error: Give only one of --top, --bottom and --before <id>\n" + move
        ),
        Case(
            arguments: ["move", "3", "--before", "3"],
            stderr: "Error: A download cannot move before itself\n" + move
        ),
        Case(
            arguments: ["move", "3", "--before", "first"],
            stderr: "Error: The value 'first' is invalid for '--before <id>': \(badID)\n"
                + "Help:  --before <id>  Move it in front of this download.\n" + move
        ),
        Case(
            arguments: ["move", "x", "--top"],
            stderr: "Error: The value 'x' is invalid for '<id>': \(badID)\n"
                + "Help:  <id>  ID of the download to move.\n" + move
        ),
        Case(
            arguments: ["move", "--top"],
            stderr: "Error: Missing expected argument '<id>'\n"
                + "Help:  <id>  ID of the download to move.\n" + move
        ),
        // clear
        Case(arguments: ["clear"], stderr: "Error: Give --completed, --failed or both\n" + clear),
        Case(
            arguments: ["clear", "--completed", "--delete-partial"],
            stderr: "Error: --delete-partial applies to --failed\n" + clear
        ),
        // limit
        Case(
            arguments: ["limit", "fast"],
            stderr: "Error: The value 'fast' is invalid for '<rate>': expected a number with an optional K, M or G "
                + "suffix, off or default\n"
                + "Help:  <rate>  Bytes per second, with an optional K, M or G suffix (1024-based), e.g. 500K or "
                + "1.5M; 0, off or none removes the limit; default goes back to the configured one.\n" + limit
        ),
        Case(arguments: ["limit", "1M", "2M"], stderr: "Error: Unexpected argument '2M'\n" + limit),
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
