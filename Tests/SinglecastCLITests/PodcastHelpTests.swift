import SinglecastCLI
import Testing

/// Golden help of the podcast commands: OVERVIEW, examples, USAGE, ARGUMENTS and OPTIONS in ArgumentParser's layout.
@Suite struct PodcastHelpTests {
    static let goldens: [String: String] = [
        "subscribe": """
        OVERVIEW: Subscribe to a podcast feed.

        The daemon fetches the feed before it stores anything, so a wrong URL leaves
        nothing behind; subscribing again to the same feed only applies the given
        options. The episodes already in the feed are not new: only those that appear
        later are, and --auto decides which of them are downloaded. The rule options
        (--title-exclude, --episode-types, ...) are the podcast's own from the start,
        so nothing they exclude is downloaded first; subscribing again applies new
        options as 'singlecastctl set' does, and a new --auto queues what it asks for
        at once. A URL that answers a web page subscribes to the feed the page names in
        <link rel="alternate">: its first RSS feed, and the answer names the others.
        The password is read from the first line of --password-file ('-' reads standard
        input), so it never appears in the process list or the shell history.

        Examples:
          singlecastctl subscribe https://feeds.example.com/daily.xml --auto latest:3
          singlecastctl subscribe https://example.com/d.xml --auto latest:3 \\
              --episode-types full
          singlecastctl subscribe --itunes-id 1200361736 --auto all-new --keep 10
          pass show patron | singlecastctl subscribe https://example.com/p.xml \\
              --user ada --password-file -

        USAGE: singlecastctl subscribe [<options>] [<feed-url>]

        ARGUMENTS:
          <feed-url>              The feed's HTTP or HTTPS URL.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --itunes-id <id>        Subscribe to this podcast of Apple's directory
                                  instead of a feed URL.
          --user <user>           User name for a private feed (HTTP Basic
                                  authentication).
          --password-file <file>  File whose first line is the password for --user; '-'
                                  reads standard input.
          --auto <policy>         What to download after each refresh: off, all-new
                                  (every new episode) or latest:N (the N newest).
                                  (default: off)
          --keep <n>              How many downloaded episodes to keep; older files are
                                  deleted. 0 keeps all. (default: all)
          --title-include <text>  Download only episodes whose title contains this (any
                                  case), or matches it as /regex/. 'default' goes back
                                  to the configured rule, 'none' turns it off for this
                                  podcast.
          --title-exclude <text>  Never download episodes whose title contains
                                  (matches) this. 'default' goes back to the configured
                                  rule, 'none' turns it off for this podcast.
          --min-duration <duration>
                                  Skip episodes shorter than this (90s, 10m, 1h).
                                  'default' goes back to the configured rule, 'none'
                                  turns it off for this podcast.
          --max-duration <duration>
                                  Skip episodes longer than this. 'default' goes back
                                  to the configured rule, 'none' turns it off for this
                                  podcast.
          --max-age <age>         Skip episodes published longer ago than this (12h,
                                  30d, 2w). 'default' goes back to the configured rule,
                                  'none' turns it off for this podcast.
          --episode-types <types> Download only these types: full, trailer, bonus
                                  (a,b). 'default' goes back to the configured rule,
                                  'none' turns it off for this podcast.
          --delete-played-after <delay>
                                  Delete a played episode's file this long after.
                                  'default' goes back to the configured rule, 'none'
                                  turns it off for this podcast.
          --delete-older-than <age>
                                  Delete files of episodes older than this. 'default'
                                  goes back to the configured rule, 'none' turns it off
                                  for this podcast.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "unsubscribe": """
        OVERVIEW: Unsubscribe from a podcast.

        Its unfinished downloads are cancelled. Downloaded episodes stay on disk unless
        you give --delete-files.

        Examples:
          singlecastctl unsubscribe 3
          singlecastctl unsubscribe "the daily" --delete-files

        USAGE: singlecastctl unsubscribe [--socket <path>] [--json] <podcast> [--delete-files]

        ARGUMENTS:
          <podcast>               The podcast's ID, or part of its title, as 'podcasts'
                                  lists them.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --delete-files          Delete its downloaded episodes too.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "podcasts": """
        OVERVIEW: List subscribed podcasts.

        NEW counts episodes not downloaded yet that appeared after subscribing.
        REFRESHED is the last time the feed was fetched, in local time. A title marked
        [error] failed its last refresh (the episodes from the last good one stay);
        [gone] means the feed answered 410 Gone; it is asked again once a day (set
        --feed-url gives it a new URL).

        Podcasts are listed by ID. The table asks the daemon for them a page at a time;
        --limit shows one page and, when more follow, the command that shows the next
        one (--after, the last ID shown). With --json and no --limit the daemon's
        answer lists every podcast at once.

        Examples:
          singlecastctl podcasts
          singlecastctl podcasts --limit 50
          singlecastctl podcasts --limit 50 --after 1234
          singlecastctl podcasts --json

        USAGE: singlecastctl podcasts [--socket <path>] [--json] [--limit <n>] [--after <id>]

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --limit <n>             Show at most this many. (default: all)
          --after <id>            Show only podcasts with a greater ID.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "episodes": """
        OVERVIEW: List a podcast's episodes, newest first.

        DATE is the publication day in local time and DURATION the length the feed
        gives. STATE is new (not downloaded, appeared after subscribing), queued,
        downloading, paused, failed, downloaded or played (marked with 'singlecastctl
        played'), with ', pinned' for a pinned one; for an episode the podcast's rules
        do not download, it says which rule skipped it (skipped: title excludes
        "trailer"). DOWNLOAD is the id of the episode's download, as 'singlecastctl
        downloads' lists it: another number than the episode's ID. Queue episodes by ID
        with 'singlecastctl enqueue <id> ...'.

        Examples:
          singlecastctl episodes 3 --limit 10
          singlecastctl episodes "the daily" --new

        USAGE: singlecastctl episodes [--socket <path>] [--json] <podcast> [--new] [--unplayed] [--limit <n>]

        ARGUMENTS:
          <podcast>               The podcast's ID, or part of its title, as 'podcasts'
                                  lists them.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --new                   Show only new episodes.
          --unplayed              Show only episodes not marked played.
          --limit <n>             Show at most this many. (default: all)
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "refresh": """
        OVERVIEW: Fetch podcast feeds now.

        Refreshes one podcast, or every one when none is named, and applies each
        podcast's auto-download policy to the new episodes. Prints a line for each
        podcast whose feed changed or failed, and counts the unchanged ones in a last
        line (--json lists each one). Ends with status 1 when a feed could not be
        fetched or read, or is gone (HTTP 410).

        Examples:
          singlecastctl refresh
          singlecastctl refresh daily

        USAGE: singlecastctl refresh [--socket <path>] [--json] [<podcast>]

        ARGUMENTS:
          <podcast>               The podcast's ID, or part of its title; every podcast
                                  when left out.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "set": """
        OVERVIEW: Change a podcast's download policy, rules and settings.

        Switching --auto on applies it to the episodes already there: latest:N queues
        the N newest at once. The rule options (--title-exclude, --max-age, ...) give
        the podcast rules of its own, which win over the configured ones rule by rule;
        the daemon checks them and says what is wrong. --dry-run shows what the changes
        would download and delete, as 'singlecastctl rules' does, and changes nothing.
        --name-template, --folder and --refresh-interval give this podcast settings of
        its own, for downloads queued from now on; 'default' goes back to the
        configured ones. --feed-url moves the podcast to a new feed URL (its feed
        moved, or answered 410 Gone) and fetches it at once.

        Examples:
          singlecastctl set 3 --auto latest:3 --keep 5
          singlecastctl set daily --auto off
          singlecastctl set daily --keep 0
          singlecastctl set daily --folder News --name-template
        '{podcast}/{date}.{ext}' --refresh-interval 15m
          singlecastctl set daily --title-exclude trailer --dry-run
          singlecastctl set daily --delete-played-after 7d
          singlecastctl set daily --feed-url https://example.com/new-feed.xml

        USAGE: singlecastctl set [<options>] <podcast>

        ARGUMENTS:
          <podcast>               The podcast's ID, or part of its title, as 'podcasts'
                                  lists them.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --auto <policy>         What to download after each refresh: off, all-new
                                  (every new episode) or latest:N (the N newest).
          --keep <n>              How many downloaded episodes to keep; older files are
                                  deleted. 0 keeps all.
          --name-template <template>
                                  This podcast's file names, as name_template in the
                                  configuration, or 'default'.
          --folder <name>         The folder name that {podcast} stands for instead of
                                  the title, or 'default'.
          --refresh-interval <duration>
                                  Time between this podcast's refreshes (90s, 15m, 6h,
                                  1d; 1m to 7d), or 'default'.
          --feed-url <url>        A new http or https feed URL for this podcast; it is
                                  fetched at once.
          --title-include <text>  Download only episodes whose title contains this (any
                                  case), or matches it as /regex/. 'default' goes back
                                  to the configured rule, 'none' turns it off for this
                                  podcast.
          --title-exclude <text>  Never download episodes whose title contains
                                  (matches) this. 'default' goes back to the configured
                                  rule, 'none' turns it off for this podcast.
          --min-duration <duration>
                                  Skip episodes shorter than this (90s, 10m, 1h).
                                  'default' goes back to the configured rule, 'none'
                                  turns it off for this podcast.
          --max-duration <duration>
                                  Skip episodes longer than this. 'default' goes back
                                  to the configured rule, 'none' turns it off for this
                                  podcast.
          --max-age <age>         Skip episodes published longer ago than this (12h,
                                  30d, 2w). 'default' goes back to the configured rule,
                                  'none' turns it off for this podcast.
          --episode-types <types> Download only these types: full, trailer, bonus
                                  (a,b). 'default' goes back to the configured rule,
                                  'none' turns it off for this podcast.
          --delete-played-after <delay>
                                  Delete a played episode's file this long after.
                                  'default' goes back to the configured rule, 'none'
                                  turns it off for this podcast.
          --delete-older-than <age>
                                  Delete files of episodes older than this. 'default'
                                  goes back to the configured rule, 'none' turns it off
                                  for this podcast.
          --dry-run               Show what the changes would download and delete;
                                  change nothing.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "download": """
        OVERVIEW: Download a podcast's newest episodes.

        Episodes go to the podcast's folder under the configured name template. An
        episode that is already queued or downloaded is not queued again. The episode
        rules do not apply: these are the newest episodes whatever their title, length
        or age, as you asked for them ('singlecastctl rules' shows what the rules would
        take); only episode_types counts, as it says what is an episode of the podcast
        at all (with 'full', a trailer or bonus is not among its newest). To pick
        episodes one by one, pass their IDs to 'singlecastctl enqueue'. Outside the
        configured download windows and on a metered network the downloads wait,
        paused, unless --now is given.

        Examples:
          singlecastctl download 3 --latest 5
          singlecastctl download 3 --latest 1 --now
          singlecastctl download daily --latest 1

        USAGE: singlecastctl download [--socket <path>] [--json] <podcast> --latest <n> [--now]

        ARGUMENTS:
          <podcast>               The podcast's ID, or part of its title, as 'podcasts'
                                  lists them.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --latest <n>            How many of the newest episodes to download.
          --now                   Start even outside the download windows or on a
                                  metered network.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "import": """
        OVERVIEW: Subscribe to the feeds of an OPML file.

        The file is read here and sent to the daemon, so it need not be readable by the
        daemon. Feeds already subscribed are left as they are. Each new subscription
        fetches its feed, so a long list takes a while. Ends with status 1 when a feed
        could not be subscribed to.

        Examples:
          singlecastctl import ~/Downloads/podcasts.opml
          curl -s https://example.com/list.opml | singlecastctl import -

        USAGE: singlecastctl import [--socket <path>] [--json] <file>

        ARGUMENTS:
          <file>                  The OPML file; '-' reads standard input.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "trash": """
        OVERVIEW: List, restore or empty what singlecast trashed.

        Retention and 'singlecastctl delete' move files to the freedesktop.org Trash
        (unless use_trash = false). Without an action, lists them: ID, when deleted,
        size, podcast, episode and original path. 'restore ID...' moves each file back
        to where it was, refusing when something is there now, and makes its episode
        downloaded again, pinned so that retention does not delete it again at once
        ('singlecastctl unpin EPISODE' lets retention have it). 'empty' deletes
        singlecast's own files from the Trash for good; nothing else in the Trash is
        listed or touched.

        Examples:
          singlecastctl trash
          singlecastctl trash restore 3fa2c9d1
          singlecastctl trash empty --older-than 30d

        USAGE: singlecastctl trash [--socket <path>] [--json] [--older-than <duration>] [<action>] [<id> ...]

        ARGUMENTS:
          <action>                What to do; without one, lists the files. (values:
                                  restore, empty)
          <id>                    With 'restore': IDs as 'singlecastctl trash' lists
                                  them.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --older-than <duration> With 'empty': only files deleted at least this long
                                  ago (12h, 30d, 2w). (default: all)
          --version               Show the version.
          -h, --help              Show help information.


        """,
        "export": """
        OVERVIEW: Write the subscriptions as an OPML file.

        Credentials of private feeds are not written. The file is replaced in one step,
        so an existing file is never left half-written.

        Examples:
          singlecastctl export podcasts.opml
          singlecastctl export > podcasts.opml

        USAGE: singlecastctl export [--socket <path>] [--json] [<file>]

        ARGUMENTS:
          <file>                  Where to write; standard output when left out or '-'.

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.


        """,
    ]

    @Test(arguments: goldens.keys.sorted())
    func help(_ command: String) async throws {
        let expected = try #require(Self.goldens[command])
        for arguments in [[command, "--help"], ["help", command], ["-h", command, "--frob"]] {
            let run = await runCLI(arguments)
            #expect(run.status == 0, "\(arguments)")
            #expect(run.stderr == "", "\(arguments)")
            #expect(run.stdout == expected, "\(arguments)")
        }
    }

    /// The usage lines every podcast usage error prints, kept in step with the help above.
    @Test(arguments: goldens.keys.sorted())
    func usageLineMatchesHelp(_ command: String) throws {
        let help = try #require(Self.goldens[command])
        let usage = try #require(PodcastUsageErrorTests.usages[command])
        #expect(help.contains("USAGE: " + usage.split(separator: "\n")[0].dropFirst("Usage: ".count) + "\n"))
    }
}
