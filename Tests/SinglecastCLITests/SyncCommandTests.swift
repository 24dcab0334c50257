import SinglecastCLI
import SinglecastProtocol
import Testing

/// `singlecastctl sync`: its help, and how its answers read.
@Suite struct SyncCommandTests {
    @Test func syncHelp() async {
        let run = await runCLI(["sync", "--help"])
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                OVERVIEW: Sync subscriptions and played episodes with the phone.

                Uploads the local subscription changes, downloaded and deleted episodes and
                played marks the server has not acknowledged yet, and applies the other
                devices' subscription changes and played episodes. Waits for the result. The
                server and account are set in the configuration (sync_server, sync_user,
                sync_password_file).

                Examples:
                  singlecastctl sync
                  singlecastctl sync --status

                USAGE: singlecastctl sync [--socket <path>] [--json] [--status]

                OPTIONS:
                  --socket <path>         Path of the daemon's control socket. (default:
                                          $XDG_RUNTIME_DIR/singlecast/control.sock)
                  --json                  Print machine-readable JSON; errors too, on stderr.
                  --status                Show the server, device, last sync, pending changes
                                          and last error; do not sync.
                  --version               Show the version.
                  -h, --help              Show help information.


                """
        )
    }

    private static let status = SyncStatusInfo(
        enabled: true,
        server: "https://gpodder.example",
        flavor: "gpodder",
        user: "ada",
        device: "home",
        running: false,
        lastSuccess: "2026-12-04T20:00:00Z",
        lastAttempt: "2026-12-04T20:15:00Z",
        lastError: "the sync server https://gpodder.example refused the user 'ada' (HTTP 401)",
        pending: 3,
        nextAttempt: nil
    )

    @Test func statusReadsAsATable() {
        let text = SyncCommand.render(SyncResult(report: nil, status: Self.status))
        #expect(text.contains("Server        https://gpodder.example (gpodder)"), "\(text)")
        #expect(text.contains("Pending       3 changes"), "\(text)")
        #expect(text.contains("refused the user 'ada'"), "\(text)")
        #expect(text.contains("Next sync     after a reload or 'sync'"), "\(text)")
    }

    @Test func reportSaysWhatChanged() {
        let report = SyncReportInfo(
            subscribed: 1,
            unsubscribed: 0,
            keptUnsubscribed: 0,
            markedPlayed: 2,
            markedUnplayed: 0,
            ignoredActions: 0,
            skippedEntries: 0,
            uploadedSubscriptionChanges: 0,
            uploadedActions: 4
        )
        #expect(
            SyncCommand.render(SyncResult(report: report, status: Self.status))
                == "Synced: 1 subscribed, 2 marked played, 4 episode action(s) uploaded\n"
        )
        let nothing = SyncReportInfo(
            subscribed: 0,
            unsubscribed: 0,
            keptUnsubscribed: 0,
            markedPlayed: 0,
            markedUnplayed: 0,
            ignoredActions: 0,
            skippedEntries: 0,
            uploadedSubscriptionChanges: 0,
            uploadedActions: 0
        )
        #expect(SyncCommand.render(SyncResult(report: nothing, status: Self.status)) == "Synced: nothing to do\n")
    }

    @Test func statusWhenOff() {
        var off = Self.status
        off.enabled = false
        #expect(SyncCommand.render(SyncResult(report: nil, status: off)).contains("Sync is off"))
    }
}
