import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl podcasts`: the subscriptions as a table.
package struct PodcastsCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "podcasts",
        abstract: "List subscribed podcasts.",
        discussion: """
            NEW counts episodes not downloaded yet that appeared after subscribing. REFRESHED is the last time \
            the feed was fetched, in local time. A title marked [error] failed its last refresh (the episodes \
            from the last good one stay); [gone] means the feed answered 410 Gone; it is asked again once a day (set --feed-url gives it a new URL).

            Podcasts are listed by ID. The table asks the daemon for them a page at a time; --limit shows one page \
            and, when more follow, the command that shows the next one (--after, the last ID shown). With --json \
            and no --limit the daemon's answer lists every podcast at once.

            Examples:
              singlecastctl podcasts
              singlecastctl podcasts --limit 50
              singlecastctl podcasts --limit 50 --after 1234
              singlecastctl podcasts --json
            """,
        arguments: [
            .option("limit", valueName: "n", help: "Show at most this many.", defaultDescription: "all"),
            .option("after", valueName: "id", help: "Show only podcasts with a greater ID."),
        ]
    )

    /// Podcasts per request when the table lists them all: each page is a short answer, where the whole listing of
    /// 10,000 podcasts is one 4 MiB line the daemon spends over 100 ms building while other clients wait.
    package static let pageSize = 500

    package var options: GlobalOptions
    package var params: PodcastsParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let after = try arguments.option("after").map { word in
            guard let id = OutsideNumber.decimal(word) else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("after", kind: .option),
                    reason: "a podcast ID, a whole number"
                )
            }
            return id
        }
        params = PodcastsParams(limit: try EpisodesCommand.limit(arguments, of: "podcasts"), after: after)
    }

    package func run(_ context: CommandContext) async throws {
        // A script's --json gets the daemon's one answer, every podcast without --limit (completions read it so); so
        // does --limit, one page. The table without --limit is read page by page.
        guard !options.json, params.limit == nil else {
            let sent = params == PodcastsParams() ? nil : try WireCoding.value(of: params)
            try await context.callAndPrint(.podcasts, params: sent, options: options, as: PodcastsResult.self) { page in
                Self.render(page.podcasts, style: context.style)
                    + (page.next.map { Self.nextPage(after: $0, limit: params.limit ?? Self.pageSize) } ?? "")
            }
            return
        }
        let podcasts = try await Self.everyPage(after: params.after, context: context, options: options)
        context.stdout.write(Self.render(podcasts, style: context.style))
    }

    /// Every podcast after `after`, asked a page of ``pageSize`` at a time on one connection.
    static func everyPage(after: Int64?, context: CommandContext, options: GlobalOptions) async throws -> [PodcastInfo]
    {
        let path = context.socketPath(options)
        let timeout = context.responseTimeout
        return try await Blocking.run {
            let connection = try ControlConnection(path: path)
            var page = PodcastsParams(limit: pageSize, after: after)
            var podcasts: [PodcastInfo] = []
            while true {
                let line = try connection.responseLine(
                    "podcasts",
                    params: try WireCoding.value(of: page),
                    timeout: timeout
                )
                let result: PodcastsResult
                do {
                    result = try ControlConnection.result(PodcastsResult.self, in: line) ?? PodcastsResult(podcasts: [])
                } catch {
                    throw ClientError.invalidResponse("the result of 'podcasts' has an unexpected shape (\(error))")
                }
                podcasts += result.podcasts
                guard let next = result.next else { return podcasts }
                // A cursor that does not move on would ask for the same page forever.
                guard next > page.after ?? .min else {
                    throw ClientError.invalidResponse("the 'next' of 'podcasts' does not move past \(page.after ?? 0)")
                }
                page.after = next
            }
        }
    }

    /// The line after a page that more podcasts follow.
    static func nextPage(after: Int64, limit: Int) -> String {
        "\nMore follow: singlecastctl podcasts --limit \(limit) --after \(after)\n"
    }

    /// The table, then one line per podcast with a problem; `No podcasts.` with a hint when there are none.
    package static func render(
        _ podcasts: [PodcastInfo],
        timeZone: LocalTimeZone = .system,
        style: TextStyle = .plain
    ) -> String {
        if podcasts.isEmpty { return "No podcasts. Subscribe with 'singlecastctl subscribe <feed-url>'.\n" }
        let header = ["ID", "EPISODES", "NEW", "AUTO", "KEEP", "REFRESHED", "TITLE"]
        let rows = podcasts.map { podcast in
            [
                String(podcast.id),
                String(podcast.episodes),
                String(podcast.newEpisodes),
                podcast.autoDownload.description,
                PodcastText.keep(podcast.keep),
                podcast.refreshedAt.map { PodcastText.time($0, timeZone: timeZone) } ?? "never",
                podcast.title + (PodcastText.marker(podcast).map { " \($0)" } ?? ""),
            ]
        }
        var text = Formatting.columns([header] + rows, style: style)
        let problems = podcasts.compactMap { podcast in
            PodcastText.marker(podcast).map {
                "\($0) \(PodcastText.name(podcast)): \(TerminalText.escaped(PodcastText.problem(podcast) ?? ""))\n"
            }
        }
        if !problems.isEmpty { text += "\n" + problems.joined() }
        return text
    }
}

/// `singlecastctl episodes`: one podcast's episodes, newest first.
package struct EpisodesCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "episodes",
        abstract: "List a podcast's episodes, newest first.",
        discussion: """
            DATE is the publication day in local time and DURATION the length the feed gives. STATE is new (not \
            downloaded, appeared after subscribing), queued, downloading, paused, failed, downloaded or played \
            (marked with 'singlecastctl played'), with ', pinned' for a pinned one; for an episode the \
            podcast's rules do not download, it says which rule skipped it (skipped: title excludes \
            "trailer"). DOWNLOAD is the id of the episode's download, as 'singlecastctl downloads' lists it: \
            another number than the episode's ID. Queue episodes by ID with 'singlecastctl enqueue <id> ...'.

            Examples:
              singlecastctl episodes 3 --limit 10
              singlecastctl episodes "the daily" --new
            """,
        arguments: [
            PodcastArguments.podcast(),
            .flag("new", help: "Show only new episodes."),
            .flag("unplayed", help: "Show only episodes not marked played."),
            .option("limit", valueName: "n", help: "Show at most this many.", defaultDescription: "all"),
        ]
    )

    package var options: GlobalOptions
    package var params: EpisodesParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = EpisodesParams(
            podcast: try PodcastArguments.podcast(arguments) ?? "",
            new: arguments.flag("new") ? true : nil,
            limit: try Self.limit(arguments),
            // The table shows none of the show notes and links; --json prints every field.
            brief: options.json ? nil : true,
            unplayed: arguments.flag("unplayed") ? true : nil
        )
    }

    /// `--limit <n>`, a whole number of `things` of at least 1, if given (also `inbox`'s and `podcasts`').
    static func limit(_ arguments: ParsedArguments, of things: String = "episodes") throws -> Int? {
        try arguments.option("limit").map { word in
            guard word.allSatisfy(\.isASCII), let value = Int(word), value >= 1 else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("limit", kind: .option),
                    reason: "a whole number of \(things), at least 1"
                )
            }
            return value
        }
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .episodes,
            params: try WireCoding.value(of: params),
            options: options,
            as: EpisodesResult.self
        ) { list in Self.render(list, onlyNew: params.new == true, style: context.style) }
    }

    /// `3  The Daily: 120 episodes, 2 new`, a blank line and the table (or `No new episodes.`).
    package static func render(
        _ result: EpisodesResult,
        onlyNew: Bool = false,
        timeZone: LocalTimeZone = .system,
        style: TextStyle = .plain
    ) -> String {
        let podcast = result.podcast
        var text =
            "\(PodcastText.name(podcast)): \(Formatting.count(podcast.episodes, "episode")), "
            + "\(podcast.newEpisodes) new\n\n"
        if result.episodes.isEmpty { return text + (onlyNew ? "No new episodes.\n" : "No episodes.\n") }
        let header = ["ID", "DATE", "DURATION", "STATE", "DOWNLOAD", "TITLE"]
        let rows = result.episodes.map { episode in
            [
                String(episode.id),
                episode.published.map { PodcastText.day($0, timeZone: timeZone) } ?? "-",
                PodcastText.duration(seconds: episode.durationSeconds),
                PodcastText.state(episode),
                episode.downloadID.map(String.init) ?? "-",
                episode.title,
            ]
        }
        text += Formatting.columns([header] + rows, style: style)
        return text
    }
}

/// `singlecastctl refresh`: fetches feeds now instead of waiting for the next scheduled refresh.
package struct RefreshCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Fetch podcast feeds now.",
        discussion: """
            Refreshes one podcast, or every one when none is named, and applies each podcast's auto-download \
            policy to the new episodes. Prints a line for each podcast whose feed changed or failed, and counts the \
            unchanged ones in a last line (--json lists each one). Ends with status 1 when a feed could not be \
            fetched or read, or is gone (HTTP 410).

            Examples:
              singlecastctl refresh
              singlecastctl refresh daily
            """,
        arguments: [
            PodcastArguments.podcast(
                "The podcast's ID, or part of its title; every podcast when left out.",
                required: false
            )
        ]
    )

    package var options: GlobalOptions
    package var params: RefreshParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let podcast = try PodcastArguments.podcast(arguments)
        // A refresh of every podcast prints a line for those that changed, and counts the rest.
        params = RefreshParams(podcast: podcast, brief: podcast == nil && !options.json ? true : nil)
    }

    package func run(_ context: CommandContext) async throws {
        var slow = context
        slow.responseTimeout = context.responseTimeout * PodcastTimeouts.networkFactor
        let (result, _) = try await slow.call(.refresh, params: try WireCoding.value(of: params), options: options)
        let refreshed = try context.decode(RefreshResult.self, from: result, method: .refresh)
        if options.json {
            try context.printJSON(result)
        } else {
            context.stdout.write(Self.render(refreshed))
        }
        if refreshed.refreshed.contains(where: { $0.outcome == "failed" || $0.outcome == "gone" }) {
            throw ExitCode.failure
        }
    }

    /// One line per podcast listed, `3  The Daily: updated, 2 new episodes; queued 41, 42`, then how many a brief
    /// answer left out as not modified: `998 podcasts not modified.`
    package static func render(_ result: RefreshResult) -> String {
        let unchanged = result.notModified?.count ?? 0
        if result.refreshed.isEmpty && unchanged == 0 { return "No podcasts to refresh.\n" }
        var text = result.refreshed.map { entry in
            "\(PodcastText.name(entry.podcast)): \(TerminalText.escaped(outcome(entry)))\n"
        }.joined()
        if unchanged > 0 { text += "\(Formatting.count(unchanged, "podcast")) not modified.\n" }
        return text
    }

    /// `updated, no new episodes`, `not modified`, `moved to <url>, 1 new episode`, `gone (HTTP 410), …`,
    /// `failed: <why>`, plus `; queued …`.
    static func outcome(_ entry: RefreshResult.Entry) -> String {
        var text: String
        switch entry.outcome {
        case "updated": text = "updated, " + PodcastText.newEpisodes(entry.newEpisodes)
        case "not_modified": text = "not modified"
        case "moved": text = "moved to \(entry.podcast.feedURL), " + PodcastText.newEpisodes(entry.newEpisodes)
        case "gone": text = "gone (HTTP 410), asked again once a day"
        case "failed": text = "failed: " + (entry.error ?? "unknown error")
        default: text = DownloadText.humanize(entry.outcome) + (entry.error.map { ": \($0)" } ?? "")
        }
        if !entry.queued.isEmpty { text += "; queued \(PodcastText.ids(entry.queued))" }
        return text
    }
}

/// `singlecastctl download`: queues a podcast's newest episodes.
package struct DownloadLatestCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download a podcast's newest episodes.",
        discussion: """
            Episodes go to the podcast's folder under the configured name template. An episode that is already \
            queued or downloaded is not queued again. The episode rules do not apply: these are the newest \
            episodes whatever their title, length or age, as you asked for them ('singlecastctl rules' shows \
            what the rules would take); only episode_types counts, as it says what is an episode of the podcast \
            at all (with 'full', a trailer or bonus is not among its newest). To pick episodes one by one, pass their IDs to \
            'singlecastctl enqueue'. Outside the configured download windows and on a metered network the \
            downloads wait, paused, unless --now is given.

            Examples:
              singlecastctl download 3 --latest 5
              singlecastctl download 3 --latest 1 --now
              singlecastctl download daily --latest 1
            """,
        arguments: [
            PodcastArguments.podcast(),
            .option("latest", valueName: "n", help: "How many of the newest episodes to download.", required: true),
            .flag("now", help: "Start even outside the download windows or on a metered network."),
        ]
    )

    package var options: GlobalOptions
    package var params: DownloadLatestParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let word = arguments.option("latest") ?? ""
        guard word.allSatisfy(\.isASCII), let latest = Int(word), latest >= 1 else {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("latest", kind: .option),
                reason: "a whole number of episodes, at least 1"
            )
        }
        params = DownloadLatestParams(
            podcast: try PodcastArguments.podcast(arguments) ?? "",
            latest: latest,
            now: arguments.flag("now") ? true : nil
        )
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .download,
            params: try WireCoding.value(of: params),
            options: options,
            as: EnqueueResult.self
        ) { Self.render($0) }
    }

    /// The lines of `enqueue`, or `The podcast has no episodes to download.`.
    package static func render(_ result: EnqueueResult) -> String {
        result.downloads.isEmpty ? "The podcast has no episodes to download.\n" : EnqueueCommand.render(result)
    }
}
