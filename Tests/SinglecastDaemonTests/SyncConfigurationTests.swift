import Foundation
import Testing

@testable import SinglecastDaemon

/// The `sync_*` keys.
@Suite("Sync configuration")
struct SyncConfigurationTests {
    private func parse(_ text: String) throws -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, path: "/c", home: "/home/u")
    }

    private func passwordFile(mode: mode_t) throws -> String {
        let path = NSTemporaryDirectory() + "/singlecast-sync-password-\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("s3cret\n".utf8)))
        chmod(path, mode)
        return path
    }

    @Test func offByDefault() throws {
        let configuration = try parse("")
        #expect(!configuration.sync.isEnabled)
        #expect(configuration.sync.interval == .seconds(900))
        #expect(configuration.sync.autoDownload == .latest(1))
        #expect(configuration.sync.deviceID.hasPrefix("singlecast-"))
        #expect(SyncSettings.isDeviceID(configuration.sync.deviceID))
    }

    @Test func everySyncKeyIsRead() throws {
        let file = try passwordFile(mode: 0o600)
        defer { unlink(file) }
        let configuration = try parse(
            """
            sync_server = https://gpodder.example/
            sync_flavor = nextcloud
            sync_user = ada
            sync_password_file = \(file)
            sync_device = home_server-2
            sync_interval = 30m
            sync_auto_download = all-new
            """
        )
        #expect(configuration.sync.server == "https://gpodder.example")
        #expect(configuration.sync.flavor == .nextcloud)
        #expect(configuration.sync.user == "ada")
        #expect(configuration.sync.deviceID == "home_server-2")
        #expect(configuration.sync.interval == .seconds(1800))
        #expect(configuration.sync.autoDownload == .allNew)
        #expect(configuration.sync.problem == nil)
        #expect(try configuration.sync.readPassword() == "s3cret")
    }

    @Test func aPasswordFileOthersCanReadIsRefused() throws {
        let file = try passwordFile(mode: 0o640)
        defer { unlink(file) }
        let error = #expect(throws: ConfigurationError.self) { try parse("sync_password_file = \(file)") }
        #expect(error?.message.contains("must be readable by its owner only") == true, "\(String(describing: error))")
        #expect(error?.line == 1)
    }

    @Test(
        arguments: [
            "sync_server = ftp://x", "sync_server = https://ada:pw@gpodder.example", "sync_flavor = mygpo",
            "sync_device = my phone", "sync_interval = 10s", "sync_auto_download = latest:0", "sync_user = a/b",
            "sync_password_file = relative",
        ]
    )
    func badValuesAreRefused(_ line: String) {
        #expect(throws: ConfigurationError.self) { try parse(line) }
    }

    @Test func aServerWithoutAccountIsAProblem() throws {
        let configuration = try parse("sync_server = https://gpodder.example")
        #expect(configuration.sync.problem == "sync_server is set but sync_user is not")
    }
}
