import FoundationEssentials
import SinglecastProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The arguments the podcast commands share: the podcast selector and the download policy options.
package enum PodcastArguments {
    /// `<podcast>`: the daemon resolves it, so the client only checks that something was typed.
    static func podcast(
        _ help: String = "The podcast's ID, or part of its title, as 'podcasts' lists them.",
        required: Bool = true
    ) -> ArgumentSpec {
        .positional("podcast", help: help, required: required)
    }

    static func auto(defaultDescription: String? = nil) -> ArgumentSpec {
        .option(
            "auto",
            valueName: "policy",
            help: "What to download after each refresh: off, all-new (every new episode) or latest:N (the N "
                + "newest).",
            defaultDescription: defaultDescription
        )
    }

    static func keep(defaultDescription: String? = nil) -> ArgumentSpec {
        .option(
            "keep",
            valueName: "n",
            help: "How many downloaded episodes to keep; older files are deleted. 0 keeps all.",
            defaultDescription: defaultDescription
        )
    }

    /// The `<podcast>` word, passed through as typed.
    ///
    /// - Throws: ``UsageError`` when it is empty or blank, which no podcast could match.
    static func podcast(_ arguments: ParsedArguments) throws -> String? {
        guard let word = arguments.argument("podcast") else { return nil }
        if word.allSatisfy(\.isWhitespace) {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("podcast", kind: .positional),
                reason: "give a podcast ID or the start of a title"
            )
        }
        return word
    }

    /// `--auto`, if given.
    ///
    /// - Throws: ``UsageError`` for anything but `off`, `all-new` and `latest:N`.
    static func auto(_ arguments: ParsedArguments) throws -> AutoDownload? {
        try arguments.option("auto").map { word in
            guard let policy = AutoDownload(word) else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("auto", kind: .option),
                    reason: "expected off, all-new or latest:N with N from 1 to 10000"
                )
            }
            return policy
        }
    }

    /// `--keep`, if given, checked against `--auto` when both are.
    ///
    /// - Throws: ``UsageError`` for a negative or non-numeric count, or one smaller than `latest:N`, which would
    ///   delete the newest episodes only to download them again.
    static func keep(_ arguments: ParsedArguments, auto: AutoDownload?) throws -> Int? {
        guard let word = arguments.option("keep") else { return nil }
        guard word.allSatisfy(\.isASCII), let keep = Int(word), keep >= 0 else {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("keep", kind: .option),
                reason: "a number of episodes, or 0 to keep all"
            )
        }
        if case .latest(let count)? = auto, keep > 0, keep < count {
            throw UsageError.validation(
                "--keep \(keep) is less than the \(count) of --auto latest:\(count); the newest episodes would be "
                    + "deleted and downloaded again"
            )
        }
        return keep
    }
}

/// `singlecastctl subscribe`: follows a podcast feed.
package struct SubscribeCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Subscribe to a podcast feed.",
        discussion: """
            The daemon fetches the feed before it stores anything, so a wrong URL leaves nothing behind; \
            subscribing again to the same feed only applies the given options. The episodes already in the feed \
            are not new: only those that appear later are, and --auto decides which of them are downloaded. The \
            rule options (--title-exclude, --episode-types, ...) are the podcast's own from the start, so nothing \
            they exclude is downloaded first; subscribing again applies new options as 'singlecastctl set' does, \
            and a new --auto queues what it asks for at once. A URL that answers a web page subscribes to \
            the feed the page names in <link rel="alternate">: its first RSS feed, and the answer names the \
            others. The \
            password is read from the first line of --password-file ('-' reads standard input), so it never \
            appears in the process list or the shell history.

            Examples:
              singlecastctl subscribe https://feeds.example.com/daily.xml --auto latest:3
              singlecastctl subscribe https://example.com/d.xml --auto latest:3 \\
                  --episode-types full
              singlecastctl subscribe --itunes-id 1200361736 --auto all-new --keep 10
              pass show patron | singlecastctl subscribe https://example.com/p.xml \\
                  --user ada --password-file -
            """,
        arguments: [
            .positional("feed-url", help: "The feed's HTTP or HTTPS URL.", required: false),
            .option(
                "itunes-id",
                valueName: "id",
                help: "Subscribe to this podcast of Apple's directory instead of a feed URL."
            ),
            .option("user", valueName: "user", help: "User name for a private feed (HTTP Basic authentication)."),
            .option(
                "password-file",
                valueName: "file",
                help: "File whose first line is the password for --user; '-' reads standard input."
            ),
            PodcastArguments.auto(defaultDescription: "off"),
            PodcastArguments.keep(defaultDescription: "all"),
        ] + RuleOptions.arguments
    )

    package var options: GlobalOptions
    package var url: String?
    package var itunesID: Int64?
    package var user: String?
    package var passwordFile: String?
    package var autoDownload: AutoDownload?
    package var keep: Int?
    package var rules: [String: String]?

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        url = arguments.argument("feed-url")
        rules = RuleOptions.parse(arguments)
        user = arguments.option("user")
        passwordFile = arguments.option("password-file")
        autoDownload = try PodcastArguments.auto(arguments)
        keep = try PodcastArguments.keep(arguments, auto: autoDownload)
        if let word = arguments.option("itunes-id") {
            guard word.allSatisfy(\.isASCII), let id = Int64(word), id > 0 else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("itunes-id", kind: .option),
                    reason: "an iTunes ID is a positive whole number such as 1200361736"
                )
            }
            itunesID = id
        }
        if let url {
            if itunesID != nil { throw UsageError.validation("Give a feed URL or --itunes-id, not both") }
            if !url.isEmpty, url.allSatisfy(\.isASCII), url.allSatisfy(\.isNumber) {
                throw UsageError.invalidValue(
                    url,
                    for: arguments.spec("feed-url", kind: .positional),
                    reason: "not a URL; for Apple's podcast \(url) use --itunes-id \(url)"
                )
            }
        } else if itunesID == nil {
            throw UsageError.validation("Give the feed URL of the podcast, or --itunes-id")
        }
        if (user == nil) != (passwordFile == nil) {
            throw UsageError.validation("--user and --password-file go together; give both or neither")
        }
        if user == "" {
            throw UsageError.invalidValue("", for: arguments.spec("user", kind: .option), reason: "the name is empty")
        }
    }

    /// The request, with the password read from ``passwordFile``.
    ///
    /// - Parameter standardInput: what `--password-file -` reads.
    /// - Throws: ``CommandError`` when the password file cannot be read.
    package func params(
        standardInput: Int32 = STDIN_FILENO,
        warnings: some TextOutput
    ) throws -> SubscribeParams {
        var password: String?
        if let passwordFile {
            let file = try PasswordFile.read(passwordFile, standardInput: standardInput)
            if file.isExposed { warnings.write(PasswordFile.exposedWarning(passwordFile)) }
            password = file.password
        }
        return SubscribeParams(
            url: url,
            itunesID: itunesID,
            user: user,
            password: password,
            autoDownload: autoDownload,
            keep: keep,
            rules: rules
        )
    }

    package func run(_ context: CommandContext) async throws {
        let params = try WireCoding.value(of: try params(warnings: context.stderr))
        var slow = context
        slow.responseTimeout = context.responseTimeout * PodcastTimeouts.networkFactor
        let (result, _) = try await slow.call(.subscribe, params: params, options: options)
        if options.json {
            try context.printJSON(result)
            return
        }
        context.stdout.write(Self.render(try context.decode(SubscribeResult.self, from: result, method: .subscribe)))
    }

    /// `Subscribed 3  The Daily  (120 episodes, auto-download latest:3, keep 5)`, then the queued downloads.
    package static func render(_ result: SubscribeResult) -> String {
        let podcast = result.podcast
        var text = ""
        if let found = result.discovered {
            text += "\(found.page) is a web page; it names the feed \(found.feed)\n"
            if !found.others.isEmpty {
                text += "It also names \(found.others.joined(separator: ", ")); subscribe to one of those by its URL.\n"
            }
        }
        text +=
            (result.existing ? "Already subscribed" : "Subscribed")
            + " \(PodcastText.name(podcast))  (\(PodcastText.summary(podcast)))\n"
        if !result.queued.isEmpty { text += "Queued downloads \(PodcastText.ids(result.queued))\n" }
        if !result.existing { text += "List its episodes with 'singlecastctl episodes \(podcast.id)'.\n" }
        return text
    }
}

/// `singlecastctl unsubscribe`: stops following a podcast.
package struct UnsubscribeCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "unsubscribe",
        abstract: "Unsubscribe from a podcast.",
        discussion: """
            Its unfinished downloads are cancelled. Downloaded episodes stay on disk unless you give \
            --delete-files.

            Examples:
              singlecastctl unsubscribe 3
              singlecastctl unsubscribe "the daily" --delete-files
            """,
        arguments: [
            PodcastArguments.podcast(),
            .flag("delete-files", help: "Delete its downloaded episodes too."),
        ]
    )

    package var options: GlobalOptions
    package var params: UnsubscribeParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        params = UnsubscribeParams(
            podcast: try PodcastArguments.podcast(arguments) ?? "",
            deleteFiles: arguments.flag("delete-files") ? true : nil
        )
    }

    package func run(_ context: CommandContext) async throws {
        let (result, _) = try await context.call(
            .unsubscribe,
            params: try WireCoding.value(of: params),
            options: options
        )
        if options.json {
            try context.printJSON(result)
            return
        }
        let removed = try context.decode(UnsubscribeResult.self, from: result, method: .unsubscribe)
        context.stdout.write(Self.render(removed))
    }

    /// `Unsubscribed 3  The Daily`, then the cancelled downloads and the number of deleted files.
    package static func render(_ result: UnsubscribeResult) -> String {
        var text = "Unsubscribed \(PodcastText.name(result.podcast))\n"
        if !result.cancelledDownloads.isEmpty {
            text += "Cancelled downloads \(PodcastText.ids(result.cancelledDownloads))\n"
        }
        if !result.deletedFiles.isEmpty { text += "Deleted \(Formatting.count(result.deletedFiles.count, "file"))\n" }
        return text
    }
}

/// `singlecastctl set`: changes what is downloaded for a podcast and how much is kept.
package struct SetCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Change a podcast's download policy, rules and settings.",
        discussion: """
            Switching --auto on applies it to the episodes already there: latest:N queues the N newest at once. \
            The rule options (--title-exclude, --max-age, ...) give the podcast rules of its own, which win over \
            the configured ones rule by rule; the daemon checks them and says what is wrong. --dry-run shows what \
            the changes would download and delete, as 'singlecastctl rules' does, and changes nothing. \
            --name-template, --folder and --refresh-interval give this podcast settings of its own, for \
            downloads queued from now on; 'default' goes back to the configured ones. --feed-url moves the \
            podcast to a new feed URL (its feed moved, or answered 410 Gone) and fetches it at once.

            Examples:
              singlecastctl set 3 --auto latest:3 --keep 5
              singlecastctl set daily --auto off
              singlecastctl set daily --keep 0
              singlecastctl set daily --folder News --name-template '{podcast}/{date}.{ext}' --refresh-interval 15m
              singlecastctl set daily --title-exclude trailer --dry-run
              singlecastctl set daily --delete-played-after 7d
              singlecastctl set daily --feed-url https://example.com/new-feed.xml
            """,
        arguments: [
            PodcastArguments.podcast(), PodcastArguments.auto(), PodcastArguments.keep(),
            .option(
                "name-template",
                valueName: "template",
                help: "This podcast's file names, as name_template in the configuration, or 'default'."
            ),
            .option(
                "folder",
                valueName: "name",
                help: "The folder name that {podcast} stands for instead of the title, or 'default'."
            ),
            .option(
                "refresh-interval",
                valueName: "duration",
                help: "Time between this podcast's refreshes (90s, 15m, 6h, 1d; 1m to 7d), or 'default'."
            ),
            .option(
                "feed-url",
                valueName: "url",
                help: "A new http or https feed URL for this podcast; it is fetched at once."
            ),
        ] + RuleOptions.arguments + [
            .flag("dry-run", help: "Show what the changes would download and delete; change nothing.")
        ]
    )

    package var options: GlobalOptions
    package var params: SetPodcastParams
    package var dryRun: Bool

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let auto = try PodcastArguments.auto(arguments)
        params = SetPodcastParams(
            podcast: try PodcastArguments.podcast(arguments) ?? "",
            autoDownload: auto,
            keep: try PodcastArguments.keep(arguments, auto: auto),
            nameTemplate: arguments.option("name-template").map { $0 == "default" ? "" : $0 },
            folder: arguments.option("folder").map { $0 == "default" ? "" : $0 },
            refreshInterval: try arguments.option("refresh-interval").map { word in
                if word == "default" { return 0 }
                guard let seconds = Self.seconds(word), (60...7 * 86_400).contains(seconds) else {
                    throw UsageError.invalidValue(
                        word,
                        for: arguments.spec("refresh-interval", kind: .option),
                        reason: "a duration from 1m to 7d such as 90s, 15m, 6h or 1d, or 'default'"
                    )
                }
                return seconds
            },
            rules: RuleOptions.parse(arguments),
            feedURL: arguments.option("feed-url")
        )
        dryRun = arguments.flag("dry-run")
        if params.autoDownload == nil, params.keep == nil, params.nameTemplate == nil, params.folder == nil,
            params.refreshInterval == nil, params.rules == nil, params.feedURL == nil
        {
            throw UsageError.validation(
                "Give --auto, --keep, a rule option (such as --title-exclude), --name-template, --folder, "
                    + "--refresh-interval or --feed-url"
            )
        }
        if dryRun,
            params.nameTemplate != nil || params.folder != nil || params.refreshInterval != nil
                || params.feedURL != nil
        {
            throw UsageError.validation(
                "--dry-run shows the rules' effect: give it with --auto, --keep or rule options"
            )
        }
    }

    /// `90s`, `15m`, `6h`, `1d` (or plain seconds) as seconds.
    static func seconds(_ word: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let last = word.last else { return nil }
        let (digits, unit) = units[last].map { (word.dropLast(), $0) } ?? (Substring(word), 1)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int(digits), count >= 0 else { return nil }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit)
        return overflow ? nil : seconds
    }

    package func run(_ context: CommandContext) async throws {
        if dryRun {
            let rules = RulesParams(
                podcast: params.podcast,
                changes: params.rules,
                autoDownload: params.autoDownload,
                keep: params.keep
            )
            try await context.callAndPrint(
                .rules,
                params: try WireCoding.value(of: rules),
                options: options,
                as: RulesResult.self
            ) { RulesCommand.render($0, style: context.style) }
            return
        }
        try await context.callAndPrint(
            .set,
            params: try WireCoding.value(of: params),
            options: options,
            as: PodcastResult.self
        ) { changed in Self.render(changed.podcast) }
    }

    /// `Set 3  The Daily: auto-download latest:3, keep 5`, then the podcast's own settings, if any.
    package static func render(_ podcast: PodcastInfo) -> String {
        var text =
            "Set \(podcast.id)  \(podcast.title): auto-download \(podcast.autoDownload), "
            + "keep \(PodcastText.keep(podcast.keep))"
        if let template = podcast.nameTemplate { text += ", name template \(template)" }
        if let folder = podcast.folder { text += ", folder \(folder)" }
        if let seconds = podcast.refreshInterval {
            text += ", refreshed every \(Formatting.duration(seconds: Double(seconds)))"
        }
        return text + "\n"
    }
}
