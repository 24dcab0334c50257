import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// The same mistake ends with the same exit status whichever side finds it: the client before it connects, or the
/// daemon (`invalid_params`). Real daemon, real client.
@Suite struct ExitStatusTests {
    @Test func aWrongValueIsAUsageErrorWhetherTheClientOrTheDaemonFindsIt() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runProgram(Binaries.client.path, arguments + ["--socket", daemon.socketPath])
        }
        // The client finds these.
        let header = try run(["enqueue", "https://a.example/1.mp3", "--header", "no colon"])
        #expect(header.status == 64, "\(header.stderr)")
        let limit = try run(["episodes", "1", "--limit", "0"])
        #expect(limit.status == 64, "\(limit.stderr)")
        // The daemon finds these: the same kind of mistake, the same status.
        let scheme = try run(["enqueue", "ftp://a.example/1.mp3"])
        #expect(scheme.stderr.contains("only http and https URLs can be downloaded"), "\(scheme.stderr)")
        #expect(scheme.status == 64)
        let json = try run(["enqueue", "ftp://a.example/1.mp3", "--json"])
        #expect(json.status == 64)
        #expect(json.stderr.contains(#""reason":"invalid_params""#), "the daemon's own error: \(json.stderr)")
        // A search term under search_min_term_length is a wrong value too, though it has a reason of its own.
        let short = try run(["search", "a"])
        #expect(short.stderr.contains("too short"), "\(short.stderr)")
        #expect(short.status == 64)
        // Naming something that does not exist is no usage error: only the daemon can know, and it says so.
        let unknown = try run(["show-episode", "999"])
        #expect(unknown.status == 1, "\(unknown.stderr)")
        #expect(daemon.stop() == 0)
    }
}
