import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl search`: finds podcasts in Apple's directory.
package struct SearchCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search Apple's podcast directory.",
        discussion:
            "Podcasts marked * have no public feed: they are shown for reference but cannot be subscribed to. "
            + "Answers are cached by the daemon for a while (search_cache_ttl).",
        arguments: [
            .positional("term", help: "Words to search for.", repeating: true),
            .option("limit", valueName: "n", help: "Podcasts to show, from 1 to 200.", defaultDescription: "50"),
            .option(
                "country",
                valueName: "cc",
                help: "Store country, a two-letter ISO 3166 code.",
                defaultDescription: "search_country in the daemon's configuration"
            ),
        ]
    )

    package var options: GlobalOptions
    package var params: SearchParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = SearchParams(
            term: arguments.arguments("term").joined(separator: " "),
            limit: try DirectoryArguments.limit(arguments),
            country: try DirectoryArguments.country(arguments)
        )
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .search,
            params: try WireCoding.value(of: params),
            options: options,
            as: SearchResult.self
        ) { Self.render($0) }
    }

    /// The table of podcasts, or `No podcasts found for 'term'.`
    package static func render(_ result: SearchResult, style: TextStyle = .plain) -> String {
        if result.podcasts.isEmpty { return "No podcasts found for '\(result.term)'.\n" }
        let header = ["ID", "TITLE", "AUTHOR", "EPISODES", "GENRE"]
        let rows = result.podcasts.map { podcast in
            [
                String(podcast.id),
                DirectoryArguments.clip(podcast.title, 50) + (podcast.subscribable ? "" : " *"),
                DirectoryArguments.clip(podcast.author ?? "-", 30),
                podcast.episodeCount.map(String.init) ?? "-",
                podcast.genre ?? "-",
            ]
        }
        var text = Formatting.columns([header] + rows, style: style)
        if result.podcasts.contains(where: { !$0.subscribable }) {
            text += "\n* No public feed: shown for reference, cannot be subscribed to.\n"
        }
        return text
    }
}

/// `singlecastctl lookup`: one podcast of Apple's directory by its id.
package struct LookupCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Show one podcast of Apple's directory, with its feed.",
        arguments: [.positional("id", help: "The podcast's iTunes id, as 'search' and 'top' show it.")]
    )

    package var options: GlobalOptions
    package var id: Int64

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let word = arguments.argument("id") ?? ""
        guard word.allSatisfy(\.isASCII), let id = Int64(word), id > 0 else {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("id", kind: .positional),
                reason: "an iTunes id is a positive whole number such as 1470039059"
            )
        }
        self.id = id
    }

    package func run(_ context: CommandContext) async throws {
        let params = try WireCoding.value(of: LookupParams(id: id))
        try await context.callAndPrint(.lookup, params: params, options: options, as: LookupResult.self) { found in
            Self.render(found.podcast, style: context.style)
        }
    }

    /// The key/value table; rows Apple gave no value for are left out.
    package static func render(
        _ podcast: DirectoryPodcast,
        style: TextStyle = .plain,
        zone: LocalTimeZone = .system
    ) -> String {
        var rows: [(label: String, value: String)] = [("ID", String(podcast.id)), ("Title", podcast.title)]
        if let author = podcast.author { rows.append(("Author", author)) }
        rows.append(("Feed", podcast.feedURL ?? "none: Apple lists no public feed, so it cannot be subscribed to"))
        if let count = podcast.episodeCount { rows.append(("Episodes", String(count))) }
        if let genre = podcast.genre { rows.append(("Genre", genre)) }
        if let date = podcast.releaseDate { rows.append(("Latest", Timestamps.text(date, zone: zone))) }
        if let artwork = podcast.artworkURL { rows.append(("Artwork", artwork)) }
        if let page = podcast.storeURL { rows.append(("Page", page)) }
        return Formatting.table(rows, style: style)
    }
}

/// `singlecastctl top`: Apple's top-podcasts chart.
package struct TopCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Show Apple's top-podcasts chart.",
        discussion: "Chart entries carry no feed; 'singlecastctl lookup <id>' shows a podcast's feed.",
        arguments: [
            .option(
                "country",
                valueName: "cc",
                help: "Store country, a two-letter ISO 3166 code.",
                defaultDescription: "search_country in the daemon's configuration"
            ),
            .option("limit", valueName: "n", help: "Places to show, from 1 to 200.", defaultDescription: "25"),
        ]
    )

    package var options: GlobalOptions
    package var params: TopParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = TopParams(
            country: try DirectoryArguments.country(arguments),
            limit: try DirectoryArguments.limit(arguments)
        )
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .top,
            params: try WireCoding.value(of: params),
            options: options,
            as: TopResult.self
        ) { Self.render($0) }
    }

    /// The chart as a table, or `The US chart is empty.`
    package static func render(_ result: TopResult, style: TextStyle = .plain) -> String {
        if result.podcasts.isEmpty { return "The \(result.country) chart is empty.\n" }
        let header = ["RANK", "ID", "TITLE", "AUTHOR", "GENRE"]
        let rows = result.podcasts.map { entry in
            [
                String(entry.rank),
                String(entry.id),
                DirectoryArguments.clip(entry.title, 50),
                DirectoryArguments.clip(entry.author ?? "-", 30),
                entry.genre ?? "-",
            ]
        }
        return Formatting.columns([header] + rows, style: style)
    }
}

/// The options `search` and `top` share, and text helpers for their tables.
enum DirectoryArguments {
    static let limits = 1...200

    /// `--limit`, checked.
    static func limit(_ arguments: ParsedArguments) throws -> Int? {
        guard let word = arguments.option("limit") else { return nil }
        guard let limit = Int(word), limits.contains(limit) else {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("limit", kind: .option),
                reason: "expected a whole number from \(limits.lowerBound) to \(limits.upperBound)"
            )
        }
        return limit
    }

    /// `--country`, checked and upper-cased.
    static func country(_ arguments: ParsedArguments) throws -> String? {
        guard let word = arguments.option("country") else { return nil }
        guard word.utf8.count == 2, word.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("country", kind: .option),
                reason: "expected a two-letter country code such as US or DE"
            )
        }
        return word.uppercased()
    }

    /// `text`, cut to `width` characters with `…` when longer, so one long title does not widen the whole table.
    static func clip(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }
}
