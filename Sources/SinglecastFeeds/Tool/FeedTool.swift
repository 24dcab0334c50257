import FoundationEssentials
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// The `singlecast-feed` developer tool: parse a feed or OPML file and print JSON.
///
/// It lives in the library so the executable stays a one-line entry point and tests can call it.
package enum FeedTool {
    package static let usage = """
        OVERVIEW: Parse a podcast feed (or an OPML list) from a file and print it as JSON.

        USAGE: singlecast-feed [--url <url>] [--podcastparser-json] [--max-episodes <n>] [--summary [--batch-size <n>]]
                               [--opml] [--scan] <file>

        ARGUMENTS:
          <file>                  The document to read; '-' reads standard input.

        OPTIONS:
          --url <url>             The URL the feed was fetched from, to resolve relative links.
          --podcastparser-json    Print podcastparser's dictionary shape (for scripts/conformance).
          --max-episodes <n>      With --podcastparser-json: keep the first n episodes after sorting.
          --summary               Print only the title and the number of episodes (for benchmarks).
          --batch-size <n>        With --summary: take the episodes n at a time as they are read instead
                                  of keeping the whole feed (for memory benchmarks).
          --opml                  Read an OPML subscription list instead of a feed.
          --scan                  Only read the XML (checked as a parse checks it) and count its elements and
                                  bytes of text, building nothing: the reader's own cost (for benchmarks).
          -h, --help              Show help information.

        """

    /// What the tool prints and how it exits.
    package struct Outcome: Sendable {
        package var standardOutput: Data
        package var standardError: String
        package var status: Int32
    }

    /// Runs the tool with the arguments after the program name.
    package static func run(arguments: [String]) -> Outcome {
        run(arguments: arguments) { $0 }
    }

    /// Runs the tool and hands the outcome to `deliver` while the parsed document is still alive.
    ///
    /// The executable writes the output and exits inside `deliver`, so a 50 MB feed's thousands of
    /// strings are never freed one by one just before the process ends.
    package static func run<Result>(arguments: [String], deliver: (Outcome) -> Result) -> Result {
        var url: String?
        var podcastparser = false
        var summary = false
        var opml = false
        var scan = false
        var maxEpisodes = 0
        var batchSize = 0
        var file: String?
        var index = 0
        func usageError(_ message: String) -> Outcome {
            Outcome(
                standardOutput: Data(),
                standardError: "Error: \(message)\nUsage: singlecast-feed [options] <file>\n"
                    + "  See 'singlecast-feed --help' for more information.\n",
                status: 64
            )
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "-h", "--help":
                return deliver(Outcome(standardOutput: Data(usage.utf8), standardError: "", status: 0))
            case "--url", "--max-episodes", "--batch-size":
                guard index < arguments.count else { return deliver(usageError("Missing value for '\(argument)'.")) }
                let value = arguments[index]
                index += 1
                if argument == "--url" {
                    url = value
                } else {
                    guard let number = Int(value), number >= 0, number > 0 || argument == "--max-episodes" else {
                        return deliver(usageError("The value '\(value)' is invalid for '\(argument)'."))
                    }
                    if argument == "--max-episodes" { maxEpisodes = number } else { batchSize = number }
                }
            case "--podcastparser-json": podcastparser = true
            case "--summary": summary = true
            case "--opml": opml = true
            case "--scan": scan = true
            default:
                if argument.hasPrefix("-") && argument != "-" {
                    return deliver(usageError("Unknown option '\(argument)'."))
                }
                guard file == nil else { return deliver(usageError("Unexpected argument '\(argument)'.")) }
                file = argument
            }
        }
        guard let file else { return deliver(usageError("Missing expected argument '<file>'.")) }

        let data: Data
        let mapped = file == "-" ? nil : MappedFile(path: file)
        do {
            data =
                try mapped?.data
                ?? (file == "-"
                    ? try standardInput()
                    : try Data(contentsOf: URL(fileURLWithPath: file), options: .alwaysMapped))
        } catch {
            return deliver(
                Outcome(
                    standardOutput: Data(),
                    standardError: "Error: cannot read \(file): \(describeFileError(error))\n",
                    status: 1
                )
            )
        }
        do throws(FeedError) {
            if scan {
                let count = try Self.scan(data)
                let line = "\(count.elements) elements, \(count.textBytes) bytes of text\n"
                return deliver(Outcome(standardOutput: Data(line.utf8), standardError: "", status: 0))
            }
            if opml {
                let outlines = try OPML.parse(data)
                let value = JSONValue.array(
                    outlines.map { outline in
                        .object([
                            "title": outline.title.map { .string($0) } ?? .null,
                            "feedURL": .string(outline.feedURL),
                            "htmlURL": outline.htmlURL.map { .string($0) } ?? .null,
                        ])
                    }
                )
                return deliver(
                    Outcome(standardOutput: Data((value.serialized() + "\n").utf8), standardError: "", status: 0)
                )
            }
            if summary && batchSize > 0 {
                var count = 0
                let feed = try FeedParser.parse(data, url: url, batchSize: batchSize) { count += $0.count }
                return deliver(summaryOutcome(feed, episodes: count))
            }
            let feed =
                if let mapped {
                    try FeedParser.parse(data, url: url) { mapped.dropPages($0) }
                } else {
                    try FeedParser.parse(data, url: url)
                }
            return withExtendedLifetime(feed) {
                if summary { return deliver(summaryOutcome(feed, episodes: feed.episodes.count)) }
                if podcastparser {
                    let value = PodcastparserMapping.document(feed, url: url ?? file, maxEpisodes: maxEpisodes)
                    let output = Data((value.serialized() + "\n").utf8)
                    return deliver(Outcome(standardOutput: output, standardError: "", status: 0))
                }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                encoder.dateEncodingStrategy = .iso8601
                let json = (try? encoder.encode(feed)) ?? Data()
                return deliver(Outcome(standardOutput: json + Data("\n".utf8), standardError: "", status: 0))
            }
        } catch {
            return deliver(
                Outcome(
                    standardOutput: Data(),
                    standardError: "Error: \(error.message) [\(error.code.rawValue)]\n",
                    status: 1
                )
            )
        }
    }

    /// `--summary`'s line: the title and the number of episodes, and of items left out as duplicates.
    private static func summaryOutcome(_ feed: Feed, episodes: Int) -> Outcome {
        var line = "\(feed.title)\t\(episodes) episodes"
        if feed.duplicateItems > 0 { line += ", \(feed.duplicateItems) duplicate items left out" }
        return Outcome(standardOutput: Data((line + "\n").utf8), standardError: "", status: 0)
    }

    /// Everything on standard input, for `-`.
    private static func standardInput() throws(POSIXError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(0, &buffer, buffer.count)
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            data.append(buffer, count: count)
        }
    }
}
