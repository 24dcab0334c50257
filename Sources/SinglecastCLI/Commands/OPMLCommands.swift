import FoundationEssentials
import SinglecastProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `singlecastctl import`: subscribes to every feed of an OPML file, as podcast apps export them.
package struct ImportCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Subscribe to the feeds of an OPML file.",
        discussion: """
            The file is read here and sent to the daemon, so it need not be readable by the daemon. Feeds \
            already subscribed are left as they are. Each new subscription fetches its feed, so a long list \
            takes a while. Ends with status 1 when a feed could not be subscribed to.

            Examples:
              singlecastctl import ~/Downloads/podcasts.opml
              curl -s https://example.com/list.opml | singlecastctl import -
            """,
        arguments: [.positional("file", help: "The OPML file; '-' reads standard input.")]
    )

    package var options: GlobalOptions
    package var file: String

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        file = arguments.argument("file") ?? ""
        if file.isEmpty {
            throw UsageError.invalidValue(
                "",
                for: arguments.spec("file", kind: .positional),
                reason: "the path is empty"
            )
        }
    }

    package func run(_ context: CommandContext) async throws {
        let opml = try TextFile.read(file, what: "OPML file")
        var slow = context
        slow.responseTimeout = context.responseTimeout * PodcastTimeouts.networkFactor
        let (result, _) = try await slow.call(
            .import,
            params: try WireCoding.value(of: ImportParams(opml: opml)),
            options: options
        )
        let imported = try context.decode(ImportResult.self, from: result, method: .import)
        if options.json {
            try context.printJSON(result)
        } else {
            context.stdout.write(Self.render(imported, file: file))
        }
        if imported.feeds.contains(where: { $0.outcome == "failed" }) { throw ExitCode.failure }
    }

    /// One line per feed, then the totals; `No feeds in <file>.` for a document without any.
    package static func render(_ result: ImportResult, file: String) -> String {
        if result.feeds.isEmpty { return "No feeds in \(file == "-" ? "standard input" : file).\n" }
        var counts: [String: Int] = [:]
        var text = ""
        for feed in result.feeds {
            counts[feed.outcome, default: 0] += 1
            let id = feed.podcastID.map { "\($0)  " } ?? ""
            let title = feed.title.map { "\($0)  " } ?? ""
            // The titles, URLs and errors come from the OPML file and the feeds it names.
            let line =
                switch feed.outcome {
                case "subscribed": "Subscribed \(id)\(title)\(feed.url)"
                case "already": "Already subscribed \(id)\(title)\(feed.url)"
                case "failed": "Failed \(title)\(feed.url): \(feed.error ?? "unknown error")"
                default: "\(DownloadText.humanize(feed.outcome).capitalized) \(id)\(title)\(feed.url)"
                }
            text += TerminalText.escaped(line) + "\n"
        }
        var totals = [
            "\(counts["subscribed"] ?? 0) subscribed", "\(counts["already"] ?? 0) already subscribed",
            "\(counts["failed"] ?? 0) failed",
        ]
        totals += counts.keys.filter { !["subscribed", "already", "failed"].contains($0) }.sorted().map {
            "\(counts[$0] ?? 0) \(DownloadText.humanize($0))"
        }
        return text + totals.joined(separator: ", ") + ".\n"
    }
}

/// `singlecastctl export`: writes every subscription as OPML, for podcast apps and backups.
package struct ExportCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the subscriptions as an OPML file.",
        discussion: """
            Credentials of private feeds are not written. The file is replaced in one step, so an existing \
            file is never left half-written.

            Examples:
              singlecastctl export podcasts.opml
              singlecastctl export > podcasts.opml
            """,
        arguments: [
            .positional("file", help: "Where to write; standard output when left out or '-'.", required: false)
        ]
    )

    package var options: GlobalOptions
    /// `nil` for standard output.
    package var file: String?

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        let file = arguments.argument("file")
        if file == "" {
            throw UsageError.invalidValue(
                "",
                for: arguments.spec("file", kind: .positional),
                reason: "the path is empty"
            )
        }
        self.file = file == "-" ? nil : file
    }

    package func run(_ context: CommandContext) async throws {
        let (result, _) = try await context.call(.export, options: options)
        let exported = try context.decode(ExportResult.self, from: result, method: .export)
        let document = exported.opml.hasSuffix("\n") ? exported.opml : exported.opml + "\n"
        guard let file else {
            if options.json {
                try context.printJSON(result)
            } else {
                context.stdout.write(document)
            }
            return
        }
        try TextFile.write(document, to: file, what: "OPML file")
        if options.json {
            try context.printJSON(result)
        } else {
            context.stdout.write("Exported \(Formatting.count(exported.count, "podcast")) to \(file).\n")
        }
    }
}

/// How much longer than usual to wait for methods that fetch feeds before they answer.
enum PodcastTimeouts {
    /// `subscribe`, `refresh` and `import` fetch feeds over the network before answering, so the usual
    /// wedged-daemon deadline would cut off a slow but healthy server.
    static let networkFactor = 10
}

/// Whole text files read and written by the CLI itself (the daemon may not see the user's files).
package enum TextFile {
    /// Files larger than this are not text a command expects.
    static let maximumSize = 64 << 20

    /// Reads `path` (`-` for `standardInput`) as UTF-8, without a leading byte order mark.
    ///
    /// - Parameter what: the kind of file, for messages: `OPML file`.
    /// - Throws: ``CommandError`` when it cannot be read, is larger than 64 MiB or is not UTF-8.
    package static func read(_ path: String, what: String, standardInput: Int32 = STDIN_FILENO) throws -> String {
        let source = path == "-" ? "the \(what) from standard input" : "the \(what) '\(path)'"
        let descriptor = path == "-" ? standardInput : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw cannotRead(source, String(cString: strerror(errno))) }
        defer { if path != "-" { close(descriptor) } }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw cannotRead(source, String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            if bytes.count > maximumSize { throw cannotRead(source, "it is larger than 64 MiB") }
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw cannotRead(source, "it is not UTF-8 text; convert it with 'iconv -t UTF-8'")
        }
        return text
    }

    /// Replaces `path` with `text` in one step: a temporary file next to it is written, then renamed over it.
    ///
    /// - Throws: ``CommandError`` when the temporary file cannot be created or written, or the rename fails.
    package static func write(_ text: String, to path: String, what: String) throws {
        let directory = path.contains("/") ? String(path[...path.lastIndex(of: "/")!]) : ""
        let temporary = directory + ".singlecast-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        func failure(_ reason: String) -> CommandError {
            CommandError(code: .cannotWriteFile, message: "cannot write the \(what) '\(path)': \(reason)")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        var remaining = Array(text.utf8)[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw failure(reason)
            }
            remaining = remaining.dropFirst(written)
        }
        if close(descriptor) != 0 || rename(temporary, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw failure(reason)
        }
    }

    private static func cannotRead(_ source: String, _ reason: String) -> CommandError {
        CommandError(code: .cannotReadFile, message: "cannot read \(source): \(reason)")
    }
}
