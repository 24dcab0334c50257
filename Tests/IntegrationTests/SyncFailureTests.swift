import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sync against servers that fail: nothing listening, and an answer that is not the API's JSON.
@Suite struct SyncFailureTests {
    private func daemon(server: String) throws -> DaemonProcess {
        let root = TemporaryDirectory()
        let daemon = DaemonProcess(root: root)
        let passwordFile = root.file("password")
        _ = FileManager.default.createFile(atPath: passwordFile, contents: Data("secret".utf8))
        chmod(passwordFile, 0o600)
        try daemon.writeConfig(
            "sync_server = \(server)\nsync_user = ada\nsync_password_file = \(passwordFile)\nsync_interval = 1h\n"
        )
        return daemon
    }

    @Test func anUnreachableServerIsRetriedWithBackoff() async throws {
        try await onOwnThread {
            let daemon = try daemon(server: "http://127.0.0.1:9")
            try daemon.startAndWaitUntilReady()
            let synced = try runProgram(Binaries.client.path, ["sync", "--json", "--socket", daemon.socketPath])
            #expect(synced.status != 0)
            #expect(synced.stderr.contains(#""reason":"sync_unreachable""#), "\(synced.stderr)")
            let status = try runProgram(
                Binaries.client.path,
                ["sync", "--status", "--json", "--socket", daemon.socketPath]
            )
            let result = try JSONDecoder().decode(SyncResult.self, from: Data(status.stdout.utf8))
            // Transient: the next attempt is planned, after the first backoff step (15–30 s), not an interval later.
            let next = try #require(result.status.nextAttempt)
            let attempt = try #require(result.status.lastAttempt)
            #expect(next > attempt)
            #expect(result.status.lastError?.contains("could not be reached") == true)
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aServerWithoutTheAPIIsSaidSo() async throws {
        try await onOwnThread {
            // A plain web server: the API's paths are not there.
            let site = try NginxServer()
            _ = try site.serve(Data("<html>not gpodder</html>".utf8), as: "index.html")
            let daemon = try daemon(server: site.url(""))
            try daemon.startAndWaitUntilReady()
            let synced = try runProgram(Binaries.client.path, ["sync", "--json", "--socket", daemon.socketPath])
            #expect(synced.status != 0)
            #expect(synced.stderr.contains(#""reason":"sync_bad_response""#), "\(synced.stderr)")
            #expect(synced.stderr.contains("has no gPodder API"), "\(synced.stderr)")
            #expect(daemon.stop() == 0)
        }
    }
}
