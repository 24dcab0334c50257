import SinglecastProtocol

/// `singlecastctl move`: changes a download's place in the queue.
package struct MoveCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Change a download's place in the queue.",
        discussion: """
            Give exactly one of --top, --bottom and --before. The queue runs by priority first, so a move across \
            priorities changes the download's priority: --top raises it to the first download's, --bottom lowers \
            it to the last one's, --before takes that download's; the reply says so.
            """,
        arguments: [
            .positional("id", help: "ID of the download to move."),
            .flag("top", help: "Move it to the front of the queue."),
            .flag("bottom", help: "Move it to the end of the queue."),
            .option("before", valueName: "id", help: "Move it in front of this download."),
        ]
    )

    package var options: GlobalOptions
    package var params: MoveParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let id = try DownloadID.parse(arguments.argument("id") ?? "", spec: arguments.spec("id", kind: .positional))
        let before = try arguments.option("before").map {
            try DownloadID.parse($0, spec: arguments.spec("before", kind: .option))
        }
        let top = arguments.flag("top")
        let bottom = arguments.flag("bottom")
        switch [top, bottom, before != nil].filter({ $0 }).count {
        case 0: throw UsageError.validation("Give one of --top, --bottom or --before <id>")
        case 1: break
        default: throw UsageError.validation("Give only one of --top, --bottom and --before <id>")
        }
        if before == id { throw UsageError.validation("A download cannot move before itself") }
        params = MoveParams(id: id, top: top ? true : nil, bottom: bottom ? true : nil, before: before)
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .move,
            params: try WireCoding.value(of: params),
            options: options,
            as: ChangedResult.self
        ) { changed in Self.render(changed, params: params) }
    }

    /// `Moved 3 to the top.`, `Moved 3 before 5.` or `Nothing to move.` when it was already there; `Its priority
    /// is now 5.` when the move changed it.
    package static func render(_ result: ChangedResult, params: MoveParams) -> String {
        if result.changed.isEmpty { return "Nothing to move.\n" }
        var place = params.top == true ? "to the top" : "to the bottom"
        if let before = params.before { place = "before \(before)" }
        var text = "Moved \(params.id) \(place).\n"
        if let priority = result.priority { text += "Its priority is now \(priority).\n" }
        return text
    }
}

/// `singlecastctl clear`: forgets finished downloads.
package struct ClearCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove finished downloads from the list.",
        discussion:
            "Only the entries go; downloaded files stay on disk, and so do the partial files of failed downloads "
            + "unless --delete-partial is given (empty ones are always removed). Give --completed, --failed or both.",
        arguments: [
            .flag("completed", help: "Remove completed downloads."),
            .flag("failed", help: "Remove failed downloads."),
            .flag("delete-partial", help: "Also delete the partial files of the failed downloads removed."),
        ]
    )

    package var options: GlobalOptions
    package var params: ClearParams

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let completed = arguments.flag("completed")
        let failed = arguments.flag("failed")
        let deletePartial = arguments.flag("delete-partial")
        if !completed, !failed { throw UsageError.validation("Give --completed, --failed or both") }
        if deletePartial, !failed { throw UsageError.validation("--delete-partial applies to --failed") }
        params = ClearParams(
            completed: completed ? true : nil,
            failed: failed ? true : nil,
            deletePartial: deletePartial ? true : nil
        )
    }

    package func run(_ context: CommandContext) async throws {
        try await context.callAndPrint(
            .clear,
            params: try WireCoding.value(of: params),
            options: options,
            as: ChangedResult.self
        ) { changed in Self.render(changed) }
    }

    /// `Cleared 5 downloads.` or `Nothing to clear.`.
    package static func render(_ result: ChangedResult) -> String {
        if result.changed.isEmpty { return "Nothing to clear.\n" }
        return "Cleared \(Formatting.count(result.changed.count, "download")).\n"
    }
}

/// `singlecastctl limit`: shows or sets the global speed limit.
package struct LimitCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "limit",
        abstract: "Show or set the global download speed limit.",
        discussion:
            "Without a rate, shows the current limit. The limit applies to all downloads together, and lasts across "
            + "restarts of the daemon, in place of speed_limit in the configuration, until 'limit default' goes back "
            + "to that. K, M and G count 1024 bytes, as in the configuration file, while speeds are shown in decimal "
            + "units (1 MB/s is a million bytes per second), so a limit of 2M reads 2.1 MB/s.",
        arguments: [
            .positional(
                "rate",
                help:
                    "Bytes per second, with an optional K, M or G suffix (1024-based), e.g. 500K or 1.5M; 0, off or none removes the limit; default goes back to the configured one.",
                required: false
            )
        ]
    )

    /// What `<rate>` asks for.
    package enum Rate: Hashable, Sendable {
        case unlimited
        case bytesPerSecond(Int64)
        /// `default`: the configured `speed_limit` again.
        case configured
    }

    package var options: GlobalOptions
    /// `nil` to show the current limit.
    package var rate: Rate?

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        rate = try arguments.argument("rate").map { word in
            guard let rate = Self.parseRate(word) else {
                throw UsageError.invalidValue(
                    word,
                    for: arguments.spec("rate", kind: .positional),
                    reason: "expected a number with an optional K, M or G suffix, off or default"
                )
            }
            return rate
        }
    }

    /// Reads `2M`, `500K`, `1.5M`, `2048`, `0`, `off` or `none`; `nil` for anything else.
    package static func parseRate(_ text: String) -> Rate? {
        let word = text.lowercased()
        if word == "off" || word == "none" { return .unlimited }
        if word == "default" { return .configured }
        var digits = Substring(word)
        var multiplier = 1.0
        if let suffix = digits.last, let power = ["k": 1, "m": 2, "g": 3][suffix] {
            multiplier = pow1024(power)
            digits = digits.dropLast()
        }
        // Digits with at most one point: no signs, exponents, `nan` or `inf`, which Double(_:) would accept.
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            digits.filter({ $0 == "." }).count <= 1, digits != ".", let value = Double(digits)
        else { return nil }
        let bytes = (value * multiplier).rounded()
        if bytes == 0 { return value == 0 ? .unlimited : nil }
        guard bytes < 9e18 else { return nil }
        return .bytesPerSecond(Int64(bytes))
    }

    private static func pow1024(_ power: Int) -> Double {
        (0..<power).reduce(1.0) { value, _ in value * 1024 }
    }

    package func run(_ context: CommandContext) async throws {
        // Unlimited is sent as 0 rather than a missing `rate`, so it can never read as "just show the limit".
        let params = try rate.map { rate in
            switch rate {
            case .unlimited: try WireCoding.value(of: LimitParams(rate: 0))
            case .bytesPerSecond(let bytes): try WireCoding.value(of: LimitParams(rate: bytes))
            case .configured: try WireCoding.value(of: LimitParams(rate: nil, reset: true))
            }
        }
        try await context.callAndPrint(.limit, params: params, options: options, as: LimitParams.self) { limit in
            "Speed limit: \(Self.describe(limit.rate))\n"
        }
    }

    /// `2.0 MB/s`, or `none` for `nil` and 0.
    package static func describe(_ rate: Int64?) -> String {
        guard let rate, rate > 0 else { return "none" }
        return Formatting.rate(Double(rate))
    }
}
