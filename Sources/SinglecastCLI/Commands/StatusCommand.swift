import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl status`: what the daemon is doing and where its files are.
package struct StatusCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the daemon is doing and where its files are.",
        arguments: [.flag("watch", help: "Show the status again every second until you press Control-C.")]
    )

    package var options: GlobalOptions
    package var watch: Bool

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        watch = arguments.flag("watch")
    }

    package func run(_ context: CommandContext) async throws {
        if watch {
            try await watchLoop(context, interval: .seconds(1))
        } else {
            context.stdout.write(try await frame(context))
        }
    }

    /// Prints the status every `interval`; stops after `frames` frames, or never when `nil`.
    ///
    /// On a terminal each frame replaces the screen; elsewhere frames follow each other, separated by a blank
    /// line (or one JSON line each with `--json`).
    package func watchLoop(_ context: CommandContext, interval: Duration, frames: Int? = nil) async throws {
        let isTerminal = context.stdout.isTerminal && context.environment["TERM"] != "dumb"
        var count = 0
        while frames.map({ count < $0 }) ?? true {
            let text = try await frame(context)
            if isTerminal && !options.json {
                context.stdout.write(Self.clearScreen + text)
            } else {
                context.stdout.write((count == 0 || options.json ? "" : "\n") + text)
            }
            count += 1
            if frames.map({ count < $0 }) ?? true { try await Task.sleep(for: interval) }
        }
    }

    /// Cursor home, then erase the whole screen.
    static let clearScreen = "\u{1B}[H\u{1B}[2J"

    private func frame(_ context: CommandContext) async throws -> String {
        let (result, _) = try await context.call(.status, options: options)
        if options.json {
            let data = try WireCoding.encoder().encode(result)
            return String(decoding: data, as: UTF8.self) + "\n"
        }
        let status = try context.decode(StatusResult.self, from: result, method: .status)
        return Self.render(status, downloads: Self.downloadCounts(in: result), style: context.style)
    }

    /// The `downloads` object of a status result from a daemon that sends one.
    ///
    /// ``StatusResult`` does not declare it yet, so it is read from the raw result; a missing or malformed
    /// object leaves the row out rather than failing the whole command.
    package static func downloadCounts(in result: JSONValue) -> DownloadCounts? {
        guard case .object(let fields) = result, let downloads = fields["downloads"], downloads != .null else {
            return nil
        }
        return try? WireCoding.decode(DownloadCounts.self, from: downloads)
    }

    /// The human-readable table.
    package static func render(
        _ status: StatusResult,
        downloads: DownloadCounts? = nil,
        style: TextStyle = .plain,
        zone: LocalTimeZone = .system
    ) -> String {
        let store = status.store
        let connections = status.connections
        var rows: [(label: String, value: String)] = [
            ("Daemon", "singlecastd \(status.version) (protocol \(status.protocolVersion))"),
            ("PID", "\(status.pid)"),
            (
                "Uptime",
                Formatting.duration(seconds: status.uptimeSeconds) + " (since "
                    + Timestamps.text(status.startedAt, zone: zone) + ")"
            ),
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
            ("Download directory", status.paths.downloadDirectory),
        ]
        if let downloads { rows.append(("Downloads", downloadsSummary(downloads))) }
        if let gate = downloads?.gate { rows.append(("Download gate", gateSummary(gate, zone: zone))) }
        if let podcasts = status.podcasts { rows.append(("Podcasts", podcastsSummary(podcasts, zone: zone))) }
        rows += [
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
            var value =
                "\(Timestamps.text(reload.at, zone: zone)), "
                + (reload.ok ? "ok" : "failed, previous configuration kept")
            if let message = reload.message { value += ": \(message)" }
            rows.append(("Last reload", value))
        }
        return Formatting.table(rows, style: style)
    }

    /// `12 subscribed, 1 failing, 1 gone; next refresh 2026-11-29 14:02`.
    package static func podcastsSummary(_ podcasts: StatusResult.Podcasts, zone: LocalTimeZone = .system) -> String {
        var text = "\(podcasts.subscribed) subscribed"
        if podcasts.failing > 0 { text += ", \(podcasts.failing) failing" }
        if podcasts.gone > 0 { text += ", \(podcasts.gone) gone" }
        if let next = podcasts.nextRefreshAt.flatMap(DownloadText.parseDate) {
            text += "; next refresh \(Timestamps.text(next, zone: zone))"
        }
        return text
    }

    /// `2 active (5.1 MB/s), 7 queued, 1 paused, 0 failed, 12 completed; limit 2.0 MB/s`.
    package static func downloadsSummary(_ counts: DownloadCounts) -> String {
        let active = "\(counts.active) active" + (counts.active > 0 ? " (\(Formatting.rate(counts.rate)))" : "")
        let limit = LimitCommand.describe(counts.rateLimit)
        return "\(active), \(counts.queued) queued, \(counts.paused) paused, \(counts.failed) failed, "
            + "\(counts.completed) completed; " + (limit == "none" ? "no speed limit" : "limit \(limit)")
    }

    /// `open`, `open until 06:00 (windows 01:00-06:00)`, `closed until 01:00: outside the download windows
    /// (01:00-06:00)`, `closed: the network is metered`.
    package static func gateSummary(_ gate: DownloadGateInfo, zone: LocalTimeZone = .system) -> String {
        let change = gate.nextWindowChange.flatMap(DownloadText.parseDate).map { DownloadText.clock($0, zone: zone) }
        let windows = gate.windows.joined(separator: ", ")
        var text: String
        switch gate.closedBecause {
        case "outside_window"?:
            text = "closed" + (change.map { " until \($0)" } ?? "") + ": outside the download windows (\(windows))"
        case "metered"?:
            text = "closed: the network is metered"
        case let reason?:
            text = "closed: \(DownloadText.humanize(reason))"
        case nil:
            text =
                gate.windows.isEmpty ? "open" : "open" + (change.map { " until \($0)" } ?? "") + " (windows \(windows))"
        }
        if gate.closedBecause != "metered", gate.metered == true { text += "; the network is metered" }
        return text + "; --now downloads always run"
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
