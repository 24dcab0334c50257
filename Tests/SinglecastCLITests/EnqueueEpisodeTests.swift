import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// Writes `contents` into a pipe, closes its write end and returns the read end.
func pipeReading(_ contents: String) throws -> Int32 {
    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    let bytes = Array(contents.utf8)
    #expect(bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == bytes.count)
    close(ends[1])
    return ends[0]
}

/// `enqueue` with episode IDs next to URLs, and password files read from standard input.
@Suite struct EnqueueEpisodeTests {
    typealias Case = UsageErrorTests.Case

    func exchange(_ arguments: [String], result: some Encodable) async throws -> (run: CLIRun, request: String) {
        try await DownloadCommandTests().exchange(arguments, result: result)
    }

    @Test func enqueueSortsEpisodeIDsFromURLs() async throws {
        let (run, request) = try await exchange(
            ["enqueue", "812", "https://a.example/1.mp3", "815", "812", "--priority", "2"],
            result: DownloadCommandTests.enqueueResult
        )
        #expect(run.status == 0)
        #expect(
            request
                == DownloadCommandTests.request(
                    "enqueue",
                    #"{"episodes":[812,815],"priority":2,"urls":["https://a.example/1.mp3"]}"#
                )
        )
        let (_, onlyEpisodes) = try await exchange(["enqueue", "7"], result: DownloadCommandTests.enqueueResult)
        #expect(onlyEpisodes == DownloadCommandTests.request("enqueue", #"{"episodes":[7],"urls":[]}"#))
    }

    @Test(
        arguments: [
            (["812"], [], [812]), (["https://a/1"], ["https://a/1"], []), (["１２"], ["１２"], []), (["12a"], ["12a"], []),
            (["007", "7"], [], [7]), ([""], [""], []),
        ] as [([String], [String], [Int64])]
    )
    func episodeOrURL(_ words: [String], _ urls: [String], _ episodes: [Int64]) throws {
        let split = try EnqueueCommand.split(words, spec: .positional("url-or-episode", help: ""))
        #expect(split.urls == urls)
        #expect(split.episodes == episodes)
    }

    @Test func emptyStandardInputIsNoPassword() throws {
        for contents in ["", "\n", "\r\nsecond\n"] {
            let input = try pipeReading(contents)
            defer { close(input) }
            #expect(
                throws: CommandError(
                    code: .cannotReadFile,
                    message: "cannot read the password from standard input: the first line is empty"
                )
            ) {
                try PasswordFile.read("-", standardInput: input)
            }
        }
    }

    @Test func passwordWithoutAFinalNewlineFromStandardInput() throws {
        let input = try pipeReading("last")
        defer { close(input) }
        let contents = try PasswordFile.read("-", standardInput: input)
        #expect(contents.password == "last")
        #expect(!contents.isExposed)
    }

    static let usageErrors: [UsageErrorTests.Case] = [
        Case(
            arguments: ["enqueue", "0"],
            stderr: "Error: The value '0' is invalid for '<url-or-episode>': an episode ID is a positive whole number\n"
                + enqueueHelp + DownloadUsageErrorTests.enqueue
        ),
        Case(
            arguments: ["enqueue", "812", "99999999999999999999"],
            stderr: "Error: The value '99999999999999999999' is invalid for '<url-or-episode>': an episode ID is a "
                + "positive whole number\n" + enqueueHelp + DownloadUsageErrorTests.enqueue
        ),
        Case(
            arguments: ["enqueue", "812", "--to", "/srv/pod"],
            stderr: "Error: --to and --name apply to URLs only; episodes are saved in their podcast's folder\n"
                + DownloadUsageErrorTests.enqueue
        ),
        Case(
            arguments: ["enqueue", "https://a/1.mp3", "812", "--name", "x.mp3"],
            stderr: "Error: --to and --name apply to URLs only; episodes are saved in their podcast's folder\n"
                + DownloadUsageErrorTests.enqueue
        ),
        Case(
            arguments: ["enqueue", "812", "--name", "x.mp3"],
            stderr: "Error: --to and --name apply to URLs only; episodes are saved in their podcast's folder\n"
                + DownloadUsageErrorTests.enqueue
        ),
    ]

    static let enqueueHelp =
        "Help:  <url-or-episode>  HTTP or HTTPS URLs of the files to download, or episode IDs.\n"

    @Test(arguments: usageErrors)
    func usageError(_ testCase: UsageErrorTests.Case) async throws {
        try await withTemporaryDirectory { directory in
            let run = await runCLI(testCase.arguments, environment: ["SINGLECAST_SOCKET": directory + "/none.sock"])
            #expect(run.status == 64)
            #expect(run.stdout == "")
            #expect(run.stderr == testCase.stderr)
        }
    }
}
