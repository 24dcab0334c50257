import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// `singlecastctl enqueue`: adds episodes and URLs to the download queue.
package struct EnqueueCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Add episodes or URLs to the download queue.",
        discussion: """
            An argument made only of digits is an episode ID, as 'episodes' lists it: the episode is saved in \
            its podcast's folder under the configured name template, so --to and --name apply to URLs only. A URL \
            or episode that is already queued, or downloaded with its file still there, is not added twice; \
            --name with another name (or 'redownload' for an episode) fetches a downloaded URL again, and --to or \
            --name naming another place than an unfinished download's is refused. The password is read from the first line of \
            --password-file ('-' reads standard input), so it never appears in the process list or the shell \
            history. Outside the configured download windows and on a metered network new downloads wait, paused; \
            --now lets the downloads of this request run anyway, also ones that were already queued.

            -i reads URLs (or episode IDs) from a file, one a line, as aria2c does; '-' reads standard input. \
            Blank lines and lines starting with '#' are skipped. A line that is no http or https URL is reported \
            with its number and left out; the others are queued in one request, and the command then ends with \
            status 1. The reply names the episode of each episode ID, so an ID meant for a download (such as a \
            paused one: 'singlecastctl resume <id> --now') shows at once what it was taken for.

            Examples:
              singlecastctl enqueue 812 815
              singlecastctl enqueue 812 --now
              singlecastctl enqueue https://cdn.example.com/ep1.mp3 --to ~/Music
              singlecastctl enqueue -i urls.txt --to ~/Music
            """,
        arguments: [
            .positional(
                "url-or-episode",
                help: "HTTP or HTTPS URLs of the files to download, or episode IDs.",
                repeating: true,
                required: false
            ),
            .option(
                "input-file",
                short: "i",
                valueName: "file",
                help: "Also read URLs from this file, one a line; '-' reads standard input."
            ),
            .option(
                "to",
                valueName: "dir",
                help: "Directory to save the files in.",
                defaultDescription: "the daemon's download directory"
            ),
            .option("name", valueName: "file", help: "File name to save as; only with a single URL."),
            .option(
                "header",
                valueName: "header",
                help: "Extra request header as 'Name: value'; repeat for several.",
                repeating: true
            ),
            .option("user", valueName: "user", help: "User name for HTTP Basic authentication."),
            .option(
                "password-file",
                valueName: "file",
                help: "File whose first line is the password for --user; '-' reads standard input."
            ),
            .option("priority", valueName: "n", help: "Higher runs first.", defaultDescription: "0"),
            .flag("now", help: "Start even outside the download windows or on a metered network."),
        ]
    )

    package var options: GlobalOptions
    /// `-i`: a file of more URLs, read when the command runs.
    package var inputFile: String?
    package var urls: [String]
    /// The arguments made only of digits, in order, without repeats.
    package var episodes: [Int64]
    /// As typed; made absolute when the command runs.
    package var directory: String?
    package var name: String?
    package var headers: [String]
    package var user: String?
    package var passwordFile: String?
    package var priority: Int?
    /// Pass the download gate (windows, metered network) for these downloads.
    package var now: Bool

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        (urls, episodes) = try Self.split(
            arguments.arguments("url-or-episode"),
            spec: arguments.spec("url-or-episode", kind: .positional)
        )
        inputFile = arguments.option("input-file")
        if inputFile == "" {
            throw UsageError.invalidValue(
                "",
                for: arguments.spec("input-file", kind: .option),
                reason: "the path is empty"
            )
        }
        if inputFile == nil, urls.isEmpty, episodes.isEmpty {
            throw UsageError.validation("Give URLs or episode IDs to enqueue, or -i with a file of URLs")
        }
        directory = arguments.option("to")
        name = arguments.option("name")
        headers = arguments.options("header")
        user = arguments.option("user")
        passwordFile = arguments.option("password-file")
        priority = try arguments.option("priority", as: Int.self)
        now = arguments.flag("now")
        if inputFile == "-", passwordFile == "-" {
            throw UsageError.validation("-i and --password-file cannot both read standard input")
        }

        if directory == "" {
            throw UsageError.invalidValue("", for: arguments.spec("to", kind: .option), reason: "the path is empty")
        }
        if let name {
            let spec = arguments.spec("name", kind: .option)
            if name.isEmpty || name == "." || name == ".." {
                throw UsageError.invalidValue(name, for: spec, reason: "not a file name")
            }
            if name.contains("/") {
                throw UsageError.invalidValue(
                    name,
                    for: spec,
                    reason: "a file name, not a path; use --to for the directory"
                )
            }
        }
        if !episodes.isEmpty, directory != nil || name != nil {
            throw UsageError.validation(
                "--to and --name apply to URLs only; episodes are saved in their podcast's folder"
            )
        }
        if name != nil, urls.count != 1 || inputFile != nil {
            throw UsageError.validation(
                inputFile != nil
                    ? "--name needs exactly one URL, not -i" : "--name needs exactly one URL, not \(urls.count)"
            )
        }
        for header in headers {
            if let reason = RequestHeader.problem(header) {
                throw UsageError.invalidValue(header, for: arguments.spec("header", kind: .option), reason: "\(reason)")
            }
        }
        if (user == nil) != (passwordFile == nil) {
            throw UsageError.validation("--user and --password-file go together; give both or neither")
        }
        if user == "" {
            throw UsageError.invalidValue("", for: arguments.spec("user", kind: .option), reason: "the name is empty")
        }
    }

    /// Sorts the words into URLs and episode IDs: a word made only of the digits 0-9 is an episode ID.
    ///
    /// - Throws: ``UsageError/invalidValue(_:for:reason:)`` for an ID that is 0 or too large.
    package static func split(_ words: [String], spec: ArgumentSpec) throws -> (urls: [String], episodes: [Int64]) {
        var urls: [String] = []
        var episodes: [Int64] = []
        for word in words {
            guard !word.isEmpty, word.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                urls.append(word)
                continue
            }
            guard let id = Int64(word), id > 0 else {
                throw UsageError.invalidValue(word, for: spec, reason: "an episode ID is a positive whole number")
            }
            if !episodes.contains(id) { episodes.append(id) }
        }
        return (urls, episodes)
    }

    package func run(_ context: CommandContext) async throws {
        var urls = urls
        var episodes = episodes
        var leftOut = false
        if let inputFile {
            let (words, problems) = EnqueueInputFile.parse(try TextFile.read(inputFile, what: "URL list"))
            for problem in problems { context.stderr.write(EnqueueInputFile.describe(problem, in: inputFile)) }
            leftOut = !problems.isEmpty
            // Sorted as the command line's words are; an ID given twice is queued once.
            let spec = ArgumentSpec.positional("url-or-episode", help: "")
            let (moreURLs, moreEpisodes) = try Self.split(words, spec: spec)
            if !moreEpisodes.isEmpty, directory != nil || name != nil {
                throw UsageError.validation(
                    "--to and --name apply to URLs only; episodes are saved in their podcast's folder"
                )
            }
            urls += moreURLs
            episodes += moreEpisodes.filter { !episodes.contains($0) }
            if urls.isEmpty, episodes.isEmpty {
                throw CommandError(
                    code: .nothingToDo,
                    message: "no URL to enqueue in \(inputFile == "-" ? "standard input" : "'\(inputFile)'")"
                )
            }
        }
        try await enqueue(urls: urls, episodes: episodes, context)
        if leftOut { throw ExitCode.failure }
    }

    private func enqueue(urls: [String], episodes: [Int64], _ context: CommandContext) async throws {
        var password: String?
        if let passwordFile {
            let file = try PasswordFile.read(passwordFile)
            if file.isExposed { context.stderr.write(PasswordFile.exposedWarning(passwordFile)) }
            password = file.password
        }
        let params = EnqueueParams(
            urls: urls,
            directory: directory.map {
                Paths.absolute($0, currentDirectory: FileManager.default.currentDirectoryPath)
            },
            name: name,
            headers: headers.isEmpty ? nil : headers,
            user: user,
            password: password,
            priority: priority,
            episodes: episodes.isEmpty ? nil : episodes,
            now: now ? true : nil
        )
        try await context.callAndPrint(
            .enqueue,
            params: try WireCoding.value(of: params),
            options: options,
            as: EnqueueResult.self
        ) { enqueued in Self.render(enqueued) }
    }

    /// `Queued 12  https://…  → /path/file.mp3` or `Already queued 7  https://…`, one line per URL.
    ///
    /// An existing download says what it is doing when the daemon reports its `state`, and how to get a paused or
    /// failed one going: `Already added 7  https://…  failed; retry it with 'singlecastctl retry 7'`. One the
    /// download gate holds says so: `Queued 12  https://…  → /path/file.mp3  (waiting for the download window)`.
    ///
    /// An episode's download names the episode in place of the URL (`Queued 31  episode 29 "Title" of "Podcast"  → …`):
    /// the number given was taken for an episode, not for a download.
    package static func render(_ result: EnqueueResult) -> String {
        result.downloads.map { entry in
            let waiting = entry.state == .paused ? entry.pauseReason.flatMap(DownloadText.gateWait) : nil
            let what = entry.episode.map { "episode \($0.id) \"\($0.title)\" of \"\($0.podcast)\"" } ?? entry.url
            guard entry.existing else {
                return "Queued \(entry.id)  \(what)  → \(entry.file)" + (waiting.map { "  (\($0))" } ?? "") + "\n"
            }
            let line: String
            switch entry.state {
            case nil, .queued?, .cancelled?: line = "Already queued \(entry.id)  \(what)"
            case .active?: line = "Already downloading \(entry.id)  \(what)"
            case .paused? where waiting != nil:
                line = "Already queued \(entry.id)  \(what)  \(waiting ?? "")"
            case .paused?:
                line = "Already added \(entry.id)  \(what)  paused; resume it with 'singlecastctl resume \(entry.id)'"
            case .failed?:
                line = "Already added \(entry.id)  \(what)  failed; retry it with 'singlecastctl retry \(entry.id)'"
            case .completed?:
                line =
                    "Already downloaded \(entry.id)  \(what)  → \(entry.file); to fetch it again, give "
                    + "another --name (or 'singlecastctl redownload' an episode)"
            }
            return line + "\n"
        }.joined()
    }
}

/// Lexical path helpers; nothing here touches the file system.
package enum Paths {
    /// `path` made absolute against `currentDirectory`, without `.` components, repeated or trailing slashes.
    ///
    /// `..` stays as typed: removing it lexically would be wrong when the component before it is a symbolic link.
    package static func absolute(_ path: String, currentDirectory: String) -> String {
        let joined = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        let components = joined.split(separator: "/").filter { $0 != "." }
        return "/" + components.joined(separator: "/")
    }
}

/// The password for `--user`, read from the first line of a file.
package enum PasswordFile {
    /// The password and whether other users can read the file.
    package struct Contents: Hashable, Sendable {
        package var password: String
        /// A regular file that its group or everyone may read.
        package var isExposed: Bool
    }

    /// A password is one line; anything longer is the wrong file.
    static let maximumLength = 64 * 1024

    /// Reads the first line of `path`, without its line break (`\n` or `\r\n`); `-` reads standard input.
    ///
    /// Pipes work too, e.g. `--password-file <(pass show feed)` or `pass show feed | … --password-file -`.
    ///
    /// - Parameter standardInput: the descriptor `-` stands for; tests pass a pipe.
    /// - Throws: ``CommandError`` when the file cannot be opened or read, is empty, or has no line break
    ///   within 64 KiB.
    package static func read(_ path: String, standardInput: Int32 = STDIN_FILENO) throws -> Contents {
        if path == "-" {
            // Whoever redirected standard input chose where the password comes from; there is no file to warn about.
            return Contents(password: try firstLine(of: standardInput, source: "from standard input"), isExposed: false)
        }
        let source = "file '\(path)'"
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw cannotRead(source, describe(errno)) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw cannotRead(source, describe(errno)) }
        let isExposed = (status.st_mode & S_IFMT) == S_IFREG && status.st_mode & (S_IRGRP | S_IROTH) != 0
        return Contents(password: try firstLine(of: descriptor, source: source), isExposed: isExposed)
    }

    /// The first line read from `descriptor`, which stays open.
    private static func firstLine(of descriptor: Int32, source: String) throws -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !bytes.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw cannotRead(source, describe(errno))
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            if bytes.count > maximumLength { throw cannotRead(source, "the first line is longer than 64 KiB") }
        }
        var line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if line.isEmpty { throw cannotRead(source, "the first line is empty") }
        return String(decoding: line, as: UTF8.self)
    }

    /// The warning for a file that ``Contents/isExposed``.
    package static func exposedWarning(_ path: String) -> String {
        "Warning: other users can read the password file '\(path)'; restrict it with 'chmod 600 \(path)'.\n"
    }

    /// - Parameter source: `file '<path>'` or `from standard input`.
    private static func cannotRead(_ source: String, _ reason: String) -> CommandError {
        CommandError(
            code: .cannotReadFile,
            message: "cannot read the password \(source): \(reason)"
        )
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// A command failed on this side before or after talking to the daemon.
package struct CommandError: Error, Hashable, Sendable, LocalizedError {
    package enum Code: String, Hashable, Sendable {
        case cannotReadFile = "cannot_read_file"
        /// `enqueue -i` found no URL in its file.
        case nothingToDo = "nothing_to_do"
        case cannotWriteFile = "cannot_write_file"
    }

    package var code: Code
    package var message: String

    package init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    package var errorDescription: String? { message }
}
