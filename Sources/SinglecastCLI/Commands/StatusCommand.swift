import SinglecastProtocol

/// `singlecastctl status`: what the daemon is doing and where its files are.
package struct StatusCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the daemon is doing and where its files are."
    )

    package var options: GlobalOptions

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
    }

    package func run(_ context: CommandContext) async throws {
        let (result, _) = try await context.call(.status, options: options)
        if options.json {
            try context.printJSON(result)
            return
        }
        let status = try context.decode(StatusResult.self, from: result, method: .status)
        context.stdout.write(Self.render(status, style: context.style))
    }

    /// The human-readable table.
    package static func render(_ status: StatusResult, style: TextStyle = .plain) -> String {
        let store = status.store
        let connections = status.connections
        var rows: [(label: String, value: String)] = [
            ("Daemon", "singlecastd \(status.version) (protocol \(status.protocolVersion))"),
            ("PID", "\(status.pid)"),
            ("Uptime", "\(Formatting.duration(seconds: status.uptimeSeconds)) (since \(status.startedAt))"),
            ("Log level", status.logLevel),
            (
                "Config",
                status.paths.config + (status.paths.configLoaded ? "" : " (not present, embedded defaults)")
            ),
            ("State directory", status.paths.stateDirectory),
            (
                "Database",
                "\(status.paths.database) (schema \(store.schemaVersion), "
                    + "\(Formatting.byteCount(store.sizeBytes)), SQLite \(store.sqliteVersion))"
            ),
            ("Downloads", status.paths.downloadDirectory),
            ("Socket", status.paths.socket + (status.socketActivated ? " (socket-activated)" : "")),
            (
                "Clients",
                "\(connections.clients) connected, \(connections.watchers) watching, "
                    + "\(connections.refused) refused"
            ),
            ("Requests served", "\(connections.requestsServed)"),
            ("Daemon starts", startsSummary(store)),
        ]
        if let reload = status.lastReload {
            var value = "\(reload.at), " + (reload.ok ? "ok" : "failed, previous configuration kept")
            if let message = reload.message { value += ": \(message)" }
            rows.append(("Last reload", value))
        }
        return Formatting.table(rows, style: style)
    }

    private static func startsSummary(_ store: StatusResult.Store) -> String {
        let unclean = Formatting.count(store.uncleanShutdowns, "unclean shutdown")
        switch store.previousRunClean {
        case nil: return "\(store.daemonStarts) (first start), \(unclean)"
        case true?: return "\(store.daemonStarts), \(unclean); the previous run shut down cleanly"
        case false?: return "\(store.daemonStarts), \(unclean); the previous run did not shut down cleanly"
        }
    }
}
