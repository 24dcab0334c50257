import Foundation

/// A python3 stand-in for Apple's podcast directory (the iTunes Search API and both top-podcasts chart feeds) that
/// serves the fixtures in `Resources/apple`, checks every search query's shape and percent-encoding, and logs each
/// request. `Resources/directory_server.py` lists its paths and the search terms that make it misbehave.
///
/// Point `search_endpoint` at ``url`` and `chart_endpoint` at ``url`` (current chart) or ``legacyChartTemplate``.
package final class DirectoryServer: Sendable {
    /// The loopback port the server listens on.
    package let port: Int
    private let server: PythonServer
    private let directory: TemporaryDirectory

    /// Starts the server.
    ///
    /// - Parameters:
    ///   - delay: How long a search for `slow <term>` waits before answering.
    ///   - feedURL: The feed every podcast with one gets in search and lookup answers, to subscribe to a served feed.
    ///   - lifetime: The server exits on its own after this long.
    /// - Throws: ``TestServerError`` when python3 or the script is missing or the server does not come up.
    package init(
        delay: Duration = .seconds(3),
        feedURL: String? = nil,
        python: String = "/usr/bin/python3",
        lifetime: Duration = .seconds(600)
    ) throws {
        directory = try TemporaryDirectory(prefix: "singlecast-directory")
        let delaySeconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        server = try PythonServer(
            script: "directory_server",
            arguments: ["--log", directory.file("requests.log"), "--delay", "\(delaySeconds)"]
                + (feedURL.map { ["--feed-url", $0] } ?? []),
            python: python,
            lifetime: lifetime
        )
        port = server.port
    }

    /// `http://127.0.0.1:<port>`: the search endpoint, and the chart endpoint of the current feed.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// The chart endpoint template of the legacy iTunes RSS feed on this server.
    package var legacyChartTemplate: String { "\(url)/{country}/rss/toppodcasts/limit={limit}/json" }

    /// The path and query of every request so far, in order of arrival.
    package func requests() -> [String] {
        let text = (try? String(contentsOfFile: directory.file("requests.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The bytes of a fixture such as `search-podcast.json`.
    package static func fixture(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources/apple") else {
            throw TestServerError("the fixture \(name) is missing from SinglecastTestServers/Resources/apple")
        }
        return try Data(contentsOf: url)
    }
}
