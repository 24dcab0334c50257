import SinglecastCLI
import Testing

/// Golden help of the download queue commands and of `status --watch`.
@Suite struct DownloadHelpTests {
    static let goldens: [String: String] = [
        "enqueue": """
        OVERVIEW: Add episodes or URLs to the download queue.

        An argument made only of digits is an episode ID, as 'episodes' lists it: the
        episode is saved in its podcast's folder under the configured name template, so
        --to and --name apply to URLs only. A URL or episode that is already queued, or
        downloaded with its file still there, is not added twice; --name with another
        name (or 'redownload' for an episode) fetches a downloaded URL again, and --to
        or --name naming another place than an unfinished download's is refused. The
        password is read from the first line of --password-file ('-' reads standard
        input), so it never appears in the process list or the shell history. Outside
        the configured download windows and on a metered network new downloads wait,
        paused; --now lets the downloads of this request run anyway, also ones that
        were already queued.

        -i reads URLs (or episode IDs) from a file, one a line, as aria2c does; '-'
        reads standard input. Blank lines and lines starting with '#' are skipped. A
        line that is no http or https URL is reported with its number and left out; the
        others are queued in one request, and the command then ends with status 1. The
        reply names the episode of each episode ID, so an ID meant for a download (such
        as a paused one: 'singlecastctl resume <id> --now') shows at once what it was
        taken for.

        Examples:
          singlecastctl enqueue 812 815
          singlecastctl enqueue 812 --now
          singlecastctl enqueue https://cdn.example.com/ep1.mp3 --to ~/Music
          singlecastctl enqueue -i urls.txt --to ~/Music

        USAGE: singlecastctl enqueue [--socket <path>] [--json] [<url-or-episode> ...] [--input-file <file>] [--to <dir>] [--name <file>] [--header <header> ...] [--user <user>] [--password-file <file>] [--priority <n>] [--now]

        ARGUMENTS:
          <url-or-episode>        HTTP or HTTPS URLs of the files to download, or
                                  episode IDs.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          -i, --input-file <file> Also read URLs from this file, one a line; '-' reads
                                  standard input.
          --to <dir>              Directory to save the files in. (default: the
                                  daemon's download directory)
          --name <file>           File name to save as; only with a single URL.
          --header <header>       Extra request header as 'Name: value'; repeat for
                                  several.
          --user <user>           User name for HTTP Basic authentication.
          --password-file <file>  File whose first line is the password for --user; '-'
                                  reads standard input.
          --priority <n>          Higher runs first. (default: 0)
          --now                   Start even outside the download windows or on a
                                  metered network.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "downloads": """
        OVERVIEW: List downloads and their progress.

        A PRIORITY column shows when any download has a priority other than 0 (higher
        runs first). Sizes and speeds are in decimal units: 1 kB is 1000 bytes, 1 MB/s
        a million bytes per second. An active download that receives no bytes shows
        'stalled' for its speed, with how long when the daemon says ('stalled 30s'),
        and no ETA; an ETA under a second reads '<1s'. Names longer than 60 columns are
        cut with '…'; 'show' and --json give them whole.

        Unfinished downloads come first, in queue order (active, then queued and paused
        by priority and place); then failed ones, newest first; then completed ones,
        the most recently completed first. So --limit 10 shows what is running and
        waiting, then what ended last. An episode's download shows the EPISODE's ID
        (another number than the download's ID, which the commands for downloads take),
        its PODCAST and the episode's title as its NAME.

        Examples:
          singlecastctl downloads --podcast "the daily" --limit 10
          singlecastctl downloads --state failed

        USAGE: singlecastctl downloads [--socket <path>] [--json] [--state <state>] [--podcast <podcast>] [--limit <n>]

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --state <state>         Show only downloads in this state. (values: queued,
                                  active, paused, failed, completed)
          --podcast <podcast>     Show only the downloads of this podcast's episodes:
                                  its ID, or the start of its title.
          --limit <n>             Show at most this many. (default: all)
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "show": """
        OVERVIEW: Show everything about one download.

        USAGE: singlecastctl show [--socket <path>] [--json] <id>

        ARGUMENTS:
          <id>                    ID of the download, as 'downloads' lists it.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "pause": """
        OVERVIEW: Pause downloads.

        A paused download keeps its partial file and continues from there on 'resume'.

        USAGE: singlecastctl pause [--socket <path>] [--json] [<id> ...] [--all]

        ARGUMENTS:
          <id>                    IDs of the downloads to pause.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --all                   Pause every queued and active download.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "resume": """
        OVERVIEW: Resume paused downloads.

        This also releases downloads the daemon paused itself, e.g. when the disk was
        full. Outside the configured download windows (download_window) and on a
        metered network (metered = pause) resumed downloads wait for the gate to open,
        and the reply says so; --now lets them run anyway.

        USAGE: singlecastctl resume [--socket <path>] [--json] [<id> ...] [--all] [--now]

        ARGUMENTS:
          <id>                    IDs of the downloads to resume.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --all                   Resume every paused download.
          --now                   Start even outside the download windows or on a
                                  metered network.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "retry": """
        OVERVIEW: Queue failed downloads again.

        USAGE: singlecastctl retry [--socket <path>] [--json] [<id> ...] [--all]

        ARGUMENTS:
          <id>                    IDs of the failed downloads to retry.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --all                   Retry every failed download.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "cancel": """
        OVERVIEW: Stop downloads and remove them from the queue.

        The partial file ('<file>.part') stays on disk unless you give --delete-partial.

        USAGE: singlecastctl cancel [--socket <path>] [--json] <id> ... [--delete-partial]

        ARGUMENTS:
          <id>                    IDs of the downloads to cancel.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --delete-partial        Delete the partial files too.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "move": """
        OVERVIEW: Change a download's place in the queue.

        Give exactly one of --top, --bottom and --before. The queue runs by priority
        first, so a move across priorities changes the download's priority: --top
        raises it to the first download's, --bottom lowers it to the last one's,
        --before takes that download's; the reply says so.

        USAGE: singlecastctl move [--socket <path>] [--json] <id> [--top] [--bottom] [--before <id>]

        ARGUMENTS:
          <id>                    ID of the download to move.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --top                   Move it to the front of the queue.
          --bottom                Move it to the end of the queue.
          --before <id>           Move it in front of this download.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "clear": """
        OVERVIEW: Remove finished downloads from the list.

        Only the entries go; downloaded files stay on disk, and so do the partial files
        of failed downloads unless --delete-partial is given (empty ones are always
        removed). Give --completed, --failed or both.

        USAGE: singlecastctl clear [--socket <path>] [--json] [--completed] [--failed] [--delete-partial]

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --completed             Remove completed downloads.
          --failed                Remove failed downloads.
          --delete-partial        Also delete the partial files of the failed downloads
                                  removed.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "limit": """
        OVERVIEW: Show or set the global download speed limit.

        Without a rate, shows the current limit. The limit applies to all downloads
        together, and lasts across restarts of the daemon, in place of speed_limit in
        the configuration, until 'limit default' goes back to that. K, M and G count
        1024 bytes, as in the configuration file, while speeds are shown in decimal
        units (1 MB/s is a million bytes per second), so a limit of 2M reads 2.1 MB/s.

        USAGE: singlecastctl limit [--socket <path>] [--json] [<rate>]

        ARGUMENTS:
          <rate>                  Bytes per second, with an optional K, M or G suffix
                                  (1024-based), e.g. 500K or 1.5M; 0, off or none
                                  removes the limit; default goes back to the
                                  configured one.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "status": """
        OVERVIEW: Show what the daemon is doing and where its files are.

        USAGE: singlecastctl status [--socket <path>] [--json] [--watch]

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --watch                 Show the status again every second until you press
                                  Control-C.
          --version               Show the version.
          -h, --help              Show help information.


        """,
    ]

    @Test(arguments: goldens.keys.sorted())
    func help(_ command: String) async throws {
        let expected = try #require(Self.goldens[command])
        for arguments in [[command, "--help"], ["help", command]] {
            let run = await runCLI(arguments)
            #expect(run.status == 0)
            #expect(run.stderr == "")
            #expect(run.stdout == expected, "\(arguments)")
        }
    }
}
