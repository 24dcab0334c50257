import SinglecastCLI
import SinglecastProtocol
import Testing

/// Golden help text, compared in full: ArgumentParser's layout is the specification.
@Suite struct HelpTests {
    static let rootHelp = """
        OVERVIEW: Control the singlecast download daemon.

        USAGE: singlecastctl [--socket <path>] [--json] <subcommand>

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          status                  Show what the daemon is doing and where its files are.
          enqueue                 Add episodes or URLs to the download queue.
          downloads               List downloads and their progress.
          show                    Show everything about one download.
          pause                   Pause downloads.
          resume                  Resume paused downloads.
          retry                   Queue failed downloads again.
          cancel                  Stop downloads and remove them from the queue.
          move                    Change a download's place in the queue.
          clear                   Remove finished downloads from the list.
          limit                   Show or set the global download speed limit.
          watch                   Print daemon events as they happen.
          ping                    Check that the daemon answers.
          version                 Show client and daemon versions.
          completion              Print a shell completion script.
          search                  Search Apple's podcast directory.
          lookup                  Show one podcast of Apple's directory, with its feed.
          top                     Show Apple's top-podcasts chart.
          http-password           Print the user and password of the HTTP listener.
          sync                    Sync subscriptions and played episodes with the phone.

        PODCASTS SUBCOMMANDS:
          subscribe               Subscribe to a podcast feed.
          unsubscribe             Unsubscribe from a podcast.
          podcasts                List subscribed podcasts.
          show-podcast            Show a podcast's feed, settings, rules and disk use.
          episodes                List a podcast's episodes, newest first.
          show-episode            Show an episode, its download and its description.
          inbox                   List new episodes of every podcast, newest first.
          refresh                 Fetch podcast feeds now.
          set                     Change a podcast's download policy, rules and
                                  settings.
          download                Download a podcast's newest episodes.
          delete                  Delete downloaded episodes' files.
          redownload              Download episodes again.
          trash                   List, restore or empty what singlecast trashed.
          played                  Mark episodes played.
          unplayed                Mark episodes not played.
          pin                     Keep episodes' files whatever the rules say.
          unpin                   Let the rules delete episodes' files again.
          rules                   Show what a podcast's rules would download and delete.
          import                  Subscribe to the feeds of an OPML file.
          export                  Write the subscriptions as an OPML file.

          See 'singlecastctl help <subcommand>' for detailed help.

        """

    static func leafHelp(_ name: String, _ overview: String) -> String {
        """
        OVERVIEW: \(overview)

        USAGE: singlecastctl \(name) [--socket <path>] [--json]

        OPTIONS:
          --socket <path>         Path of the daemon's control socket. (default:
                                  $XDG_RUNTIME_DIR/singlecast/control.sock)
          --json                  Print machine-readable JSON; errors too, on stderr.
          --version               Show the version.
          -h, --help              Show help information.


        """
    }

    @Test(arguments: [[], ["--help"], ["-h"], ["help"], ["--json"], ["--socket", "/x", "-h"]])
    func rootHelp(_ arguments: [String]) async {
        let run = await runCLI(arguments)
        #expect(run.status == 0)
        #expect(run.stdout == Self.rootHelp)
        #expect(run.stderr == "")
    }

    @Test func statusHelp() async throws {
        let expected = try #require(DownloadHelpTests.goldens["status"])
        for arguments in [["status", "--help"], ["status", "-h"], ["help", "status"], ["-h", "status"]] {
            let run = await runCLI(arguments)
            #expect(run.status == 0, "\(arguments)")
            #expect(run.stdout == expected, "\(arguments)")
        }
    }

    @Test func pingHelp() async {
        let run = await runCLI(["ping", "--help"])
        #expect(run.stdout == Self.leafHelp("ping", "Check that the daemon answers."))
    }

    @Test func versionHelp() async {
        let run = await runCLI(["help", "version"])
        #expect(run.stdout == Self.leafHelp("version", "Show client and daemon versions."))
    }

    @Test func httpPasswordHelp() async {
        let run = await runCLI(["http-password", "--help"])
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                OVERVIEW: Print the user and password of the HTTP listener.

                The daemon makes the password the first time it is needed and keeps it,
                readable only by you, in http-password in its state directory. Give it to a
                podcast app or a browser with the user name singlecast. --reset makes a new
                one; the old one stops working at once.

                USAGE: singlecastctl http-password [--socket <path>] [--json] [--reset]

                OPTIONS:
                  --socket <path>         Path of the daemon's control socket. (default:
                                          $XDG_RUNTIME_DIR/singlecast/control.sock)
                  --json                  Print machine-readable JSON; errors too, on stderr.
                  --reset                 Replace the password with a new one.
                  --version               Show the version.
                  -h, --help              Show help information.


                """
        )
    }

    @Test func watchHelp() async {
        let run = await runCLI(["watch", "--frob", "--help"])
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                OVERVIEW: Print daemon events as they happen.

                Runs until the daemon stops or you press Control-C. On a terminal, active
                downloads show live progress bars; otherwise each event is one line, with
                progress at most every 5 seconds per download. Podcast events (subscribed,
                refreshed, unsubscribed) and episode events (played, unplayed, deleted) are one
                line each.

                USAGE: singlecastctl watch [--socket <path>] [--json] [--topic <topic> ...] [--event <name> ...]

                OPTIONS:
                  --socket <path>         Path of the daemon's control socket. (default:
                                          $XDG_RUNTIME_DIR/singlecast/control.sock)
                  --json                  Print machine-readable JSON; errors too, on stderr.
                  --topic <topic>         Print only events of this topic, and daemon.stopping;
                                          repeat for several. (values: daemon, downloads,
                                          podcasts, episodes, sync)
                  --event <name>          Print only this event, such as download.completed,
                                          and daemon.stopping; repeat for several. With
                                          --topic, each event must be of one of the topics.
                  --version               Show the version.
                  -h, --help              Show help information.


                """
        )
    }

    @Test func wideTerminalUsesItsWidth() async {
        let run = await runCLI(["--help"], environment: ["COLUMNS": "120"])
        #expect(
            run.stdout.contains(
                "  --socket <path>         Path of the daemon's control socket. (default: $XDG_RUNTIME_DIR/singlecast/control.sock)\n"
            )
        )
    }

    @Test(arguments: [["--version"], ["status", "--version"], ["--version", "--json"]])
    func version(_ arguments: [String]) async {
        let run = await runCLI(arguments)
        #expect(run.status == 0)
        #expect(run.stdout == "\(SinglecastVersion.current)\n")
        #expect(run.stderr == "")
    }

    @Test func helpWinsOverVersion() async {
        let run = await runCLI(["--version", "--help"])
        #expect(run.stdout == Self.rootHelp)
    }
}
