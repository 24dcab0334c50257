import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// A command that changes nothing says why and what to use instead. Real daemon, nginx, real client.
@Suite struct NoOpReplyTests {
    @Test func resumingOrRetryingACompletedDownloadSaysToRedownloadAndPausingItSaysWhy() throws {
        let site = try NginxServer()
        let url = try site.serve(TestContent.mp3(count: 4096, filler: 7), as: "one.mp3")
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runProgram(Binaries.client.path, arguments + ["--socket", daemon.socketPath])
        }
        _ = try run(["enqueue", url])
        let client = try LineClient(path: daemon.socketPath)
        #expect(try client.finished([1])[0].state == .completed)
        let resumed = try run(["resume", "1"])
        #expect(resumed.status == 0)
        #expect(resumed.stdout == "Nothing to resume: download 1 is completed; use redownload.\n")
        #expect(try run(["retry", "1"]).stdout == "Nothing to retry: download 1 is completed; use redownload.\n")
        #expect(try run(["pause", "1"]).stdout == "Nothing to pause: download 1 is completed; nothing to pause.\n")
        let json = try client.result("resume", as: ChangedResult.self, params: #"{"ids":[1]}"#)
        #expect(json.unchanged == [.init(id: 1, state: "completed", reason: "download 1 is completed; use redownload")])
        #expect(daemon.stop() == 0)
    }
}
