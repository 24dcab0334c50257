import SinglecastProtocol

/// `singlecastctl sync`: synchronise with the phone through the gPodder server now, or show the sync's state.
package struct SyncCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync subscriptions and played episodes with the phone.",
        discussion: """
            Uploads the local subscription changes, downloaded and deleted episodes and played marks the server \
            has not acknowledged yet, and applies the other devices' subscription changes and played episodes. \
            Waits for the result. The server and account are set in the configuration (sync_server, sync_user, \
            sync_password_file).

            Examples:
              singlecastctl sync
              singlecastctl sync --status
            """,
        arguments: [
            .flag("status", help: "Show the server, device, last sync, pending changes and last error; do not sync.")
        ]
    )

    package var options: GlobalOptions
    package var statusOnly: Bool

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        statusOnly = arguments.flag("status")
    }

    package func run(_ context: CommandContext) async throws {
        let params = try WireCoding.value(of: SyncParams(status: statusOnly ? true : nil))
        var slow = context
        slow.responseTimeout = context.responseTimeout * PodcastTimeouts.networkFactor
        let (result, _) = try await slow.call(.sync, params: params, options: options)
        if options.json {
            try context.printJSON(result)
            return
        }
        context.stdout.write(
            Self.render(try context.decode(SyncResult.self, from: result, method: .sync), style: context.style)
        )
    }

    package static func render(_ result: SyncResult, style: TextStyle = .plain) -> String {
        var text = ""
        if let report = result.report {
            var done: [String] = []
            func add(_ count: Int, _ what: String) { if count > 0 { done.append("\(count) \(what)") } }
            add(report.subscribed, "subscribed")
            add(report.unsubscribed, "unsubscribed")
            add(report.keptUnsubscribed, "kept unsubscribed")
            add(report.markedPlayed, "marked played")
            add(report.markedUnplayed, "marked unplayed")
            add(report.uploadedSubscriptionChanges, "subscription change(s) uploaded")
            add(report.uploadedActions, "episode action(s) uploaded")
            add(report.ignoredActions, "action(s) ignored")
            text += "Synced: " + (done.isEmpty ? "nothing to do" : done.joined(separator: ", ")) + "\n"
            return text
        }
        let status = result.status
        guard status.enabled else { return "Sync is off: set sync_server in the configuration.\n" }
        var rows: [(label: String, value: String)] = [
            ("Server", "\(status.server ?? "") (\(status.flavor))"),
            ("User", status.user ?? ""),
            ("Device", status.device),
            ("Last success", status.lastSuccess ?? "never"),
        ]
        if let attempt = status.lastAttempt { rows.append(("Last attempt", attempt)) }
        rows.append(("Pending", Formatting.count(status.pending, "change")))
        if let error = status.lastError { rows.append(("Last error", TerminalText.escaped(error))) }
        rows.append(("Next sync", status.running ? "running now" : status.nextAttempt ?? "after a reload or 'sync'"))
        return Formatting.table(rows, style: style)
    }
}
