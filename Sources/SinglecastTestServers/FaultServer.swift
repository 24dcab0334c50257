/// A python3 HTTP/1.1 server that misbehaves on request: drops connections, lies about lengths, ignores or mangles
/// ranges, redirects in loops, trickles bytes. `Resources/fault_server.py` lists its paths; content bytes follow
/// ``TestContent``.
///
/// It listens on 127.0.0.1 on a port the kernel picks (and prints), serves loopback only, and exits when the value
/// is released, when the test process dies (its stdin closes) or after its lifetime, whichever comes first.
package final class FaultServer: Sendable {
    /// The loopback port the server listens on.
    package let port: Int
    private let server: PythonServer

    /// Starts the server.
    ///
    /// - Parameter lifetime: The server exits on its own after this long.
    /// - Throws: ``TestServerError`` when python3 or the script is missing or the server does not report a port.
    package init(python: String = "/usr/bin/python3", lifetime: Duration = .seconds(600)) throws {
        server = try PythonServer(script: "fault_server", arguments: [], python: python, lifetime: lifetime)
        port = server.port
    }

    /// `http://127.0.0.1:<port><path>`; `path` starts with `/`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
