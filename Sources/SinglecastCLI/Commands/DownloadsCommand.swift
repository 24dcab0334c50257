import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl downloads`: the queue as a table.
package struct DownloadsCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "downloads",
        abstract: "List downloads and their progress.",
        discussion: """
            A PRIORITY column shows when any download has a priority other than 0 (higher runs first). \
            Sizes and speeds are in decimal units: 1 kB is 1000 bytes, 1 MB/s a million bytes per second. An \
            active download that receives no bytes shows 'stalled' for its speed, with how long when the daemon \
            says ('stalled 30s'), and no ETA; an ETA under a second reads '<1s'. Names longer than \
            \(Formatting.maximumCellWidth) columns are cut with '…'; 'show' and --json give them whole.

            Unfinished downloads come first, in queue order (active, then queued and paused by priority and \
            place); then failed ones, newest first; then completed ones, the most recently completed first. So \
            --limit 10 shows what is running and waiting, then what ended last. An episode's download shows the \
            EPISODE's ID (another number than the download's ID, which the commands for downloads take), its \
            PODCAST and the episode's title as its NAME.

            Examples:
              singlecastctl downloads --podcast "the daily" --limit 10
              singlecastctl downloads --state failed
            """,
        arguments: [
            .option(
                "state",
                valueName: "state",
                help: "Show only downloads in this state. (values: " + stateNames + ")"
            ),
            .option(
                "podcast",
                valueName: "podcast",
                help: "Show only the downloads of this podcast's episodes: its ID, or the start of its title."
            ),
            .option("limit", valueName: "n", help: "Show at most this many.", defaultDescription: "all"),
        ]
    )

    /// The states a listing can hold (a cancelled download is gone from it).
    static let stateNames = DownloadState.allCases.filter { $0 != .cancelled }.map { $0.rawValue }
        .joined(separator: ", ")

    package var options: GlobalOptions
    package var state: DownloadState?
    package var podcast: String?
    package var limit: Int?

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        podcast = try arguments.option("podcast").map { word in
            guard !word.allSatisfy(\.isWhitespace) else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("podcast", kind: .option),
                    reason: "give a podcast ID or the start of a title"
                )
            }
            return word
        }
        limit = try arguments.option("limit").map { word in
            guard let value = OutsideNumber.decimal(word), value >= 1, let limit = Int(exactly: value) else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("limit", kind: .option),
                    reason: "a whole number of downloads, at least 1"
                )
            }
            return limit
        }
        state = try arguments.option("state").map { word in
            guard let state = DownloadState(rawValue: word), state != .cancelled else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("state", kind: .option),
                    reason: "expected one of " + Self.stateNames
                )
            }
            return state
        }
    }

    package func run(_ context: CommandContext) async throws {
        let params = try WireCoding.value(of: DownloadsParams(state: state, podcast: podcast, limit: limit))
        try await context.callAndPrint(.downloads, params: params, options: options, as: DownloadsResult.self) { list in
            Self.render(list.downloads, state: state, now: Date(), style: context.style)
        }
    }

    /// The table, or `No downloads.` (`No failed downloads.` with a state filter).
    ///
    /// - Parameters:
    ///   - now: the time to count retry delays from.
    package static func render(
        _ downloads: [DownloadInfo],
        state: DownloadState? = nil,
        now: Date,
        style: TextStyle = .plain
    ) -> String {
        if downloads.isEmpty { return "No \(state.map { "\($0.rawValue) " } ?? "")downloads.\n" }
        // Priorities decide the order before positions do; the column appears once one is not the default.
        let prioritized = downloads.contains { $0.priority != 0 }
        // Episode ids are small integers like download ids: an episode's download shows which episode it is, in a
        // column of its own, with its podcast, and the episode's title for a name.
        let ofEpisodes = downloads.contains { $0.episode != nil }
        let header =
            ["ID"] + (prioritized ? ["PRIORITY"] : []) + ["STATE", "PROGRESS", "SIZE", "SPEED", "ETA"]
            + (ofEpisodes ? ["EPISODE", "PODCAST"] : []) + ["NAME"]
        let rows = downloads.map { download -> [String] in
            var row = [String(download.id)]
            if prioritized { row.append(String(download.priority)) }
            row += [
                DownloadText.state(download, now: now),
                DownloadText.progress(download),
                DownloadText.size(download),
                DownloadText.speed(download, now: now) ?? "-",
                DownloadText.eta(download, now: now) ?? "-",
            ]
            if ofEpisodes {
                row.append(download.episode.map { String($0.id) } ?? "-")
                row.append(download.episode?.podcast ?? "-")
            }
            row.append(download.episode?.title ?? DownloadText.name(download))
            return row
        }
        return Formatting.columns([header] + rows, style: style)
    }
}

/// `singlecastctl show`: everything the daemon knows about one download.
package struct ShowCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show everything about one download.",
        arguments: [.positional("id", help: "ID of the download, as 'downloads' lists it.")]
    )

    package var options: GlobalOptions
    package var id: Int64

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        id = try DownloadID.parse(arguments.argument("id") ?? "", spec: arguments.spec("id", kind: .positional))
    }

    package func run(_ context: CommandContext) async throws {
        let params = try WireCoding.value(of: ShowParams(id: id))
        try await context.callAndPrint(.show, params: params, options: options, as: DownloadInfo.self) { download in
            Self.render(download, now: Date(), style: context.style)
        }
    }

    /// The key/value table; rows that do not apply (speed of a paused download, no error) are left out.
    package static func render(
        _ download: DownloadInfo,
        now: Date,
        style: TextStyle = .plain,
        zone: LocalTimeZone = .system
    ) -> String {
        var rows: [(label: String, value: String)] = [
            ("ID", String(download.id)),
            ("URL", download.url),
        ]
        if let finalURL = download.finalURL, finalURL != download.url { rows.append(("Final URL", finalURL)) }
        rows.append(("File", download.file))
        if let episode = download.episode {
            rows.append(("Episode", "\(episode.id) \"\(episode.title)\""))
            rows.append(("Podcast", "\(episode.podcastID) \"\(episode.podcast)\""))
        }
        rows.append(("State", DownloadText.state(download, now: now)))
        rows.append(("Progress", DownloadText.progress(download)))
        rows.append(("Size", DownloadText.size(download)))
        if let speed = DownloadText.speed(download, now: now) { rows.append(("Speed", speed)) }
        if let eta = DownloadText.eta(download, now: now) { rows.append(("ETA", eta)) }
        rows.append(("Attempts", String(download.attempts)))
        if let error = download.lastError { rows.append(("Last error", DownloadText.error(error))) }
        if let nextRetryAt = download.nextRetryAt {
            let when =
                DownloadText.isDue(nextRetryAt, now: now)
                ? "due, waiting for a slot" + (download.waitingForHost.map { " on \($0)" } ?? "")
                : DownloadText.retryTime(nextRetryAt, now: now)
            rows.append(("Next retry", "\(Timestamps.text(nextRetryAt, zone: zone)) (\(when))"))
        }
        rows.append(("Added", Timestamps.text(download.addedAt, zone: zone)))
        if let completedAt = download.completedAt {
            rows.append(("Completed", Timestamps.text(completedAt, zone: zone)))
        }
        rows.append(("Priority", "\(download.priority), position \(download.position)"))
        rows.append(("Headers", download.headerNames.isEmpty ? "none" : download.headerNames.joined(separator: ", ")))
        rows.append(("Credentials", download.hasCredentials ? "yes (hidden)" : "no"))
        return Formatting.table(rows, style: style)
    }
}
