import Foundation

/// A STAND-IN for the Nextcloud gpoddersync app (no Nextcloud can be installed here): `Resources/
/// nextcloud_standin.py` follows the app's documented endpoints with state in memory, as the Apple directory
/// fixtures stand in for Apple. It tests singlecast's `sync_flavor = nextcloud`, not the app.
package final class NextcloudStandIn: Sendable {
    package let port: Int
    package let user: String
    package let password: String
    private let server: PythonServer
    private let directory: TemporaryDirectory

    package init(user: String = "phone-owner", password: String = "secret", lifetime: Duration = .seconds(600)) throws {
        directory = try TemporaryDirectory(prefix: "singlecast-nextcloud")
        server = try PythonServer(
            script: "nextcloud_standin",
            arguments: ["--user", user, "--password", password, "--log", directory.file("requests.log")],
            python: "/usr/bin/python3",
            lifetime: lifetime
        )
        port = server.port
        self.user = user
        self.password = password
    }

    /// The Nextcloud base URL, the value of `sync_server`.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// Every request so far as `METHOD path status`.
    package func requests() -> [String] {
        let text = (try? String(contentsOfFile: directory.file("requests.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
}
