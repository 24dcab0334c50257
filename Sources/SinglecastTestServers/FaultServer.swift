import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A python3 HTTP/1.1 server that misbehaves on request: drops connections, lies about lengths, ignores or mangles
/// ranges, redirects in loops, trickles bytes. `Resources/fault_server.py` lists its paths; content bytes follow
/// ``TestContent``.
///
/// It listens on 127.0.0.1 on a port the kernel picks (and prints), serves loopback only, and exits when the value
/// is released, when the test process dies (its stdin closes) or after its lifetime, whichever comes first.
package final class FaultServer: Sendable {
    /// The loopback port the server listens on.
    package let port: Int
    private let process: ChildProcess
    /// Our end of the server's stdin and stdout; closing it tells the server to exit.
    private let control: Int32

    /// Starts the server.
    ///
    /// - Parameter lifetime: The server exits on its own after this long.
    /// - Throws: ``TestServerError`` when python3 or the script is missing or the server does not report a port.
    package init(python: String = "/usr/bin/python3", lifetime: Duration = .seconds(600)) throws {
        guard
            let script = Bundle.module.url(
                forResource: "fault_server",
                withExtension: "py",
                subdirectory: "Resources"
            )
        else {
            throw TestServerError("fault_server.py is missing from the SinglecastTestServers resources; rebuild")
        }
        // One socket pair serves as the server's stdin and stdout. SOCK_CLOEXEC: only the server may hold the other
        // end, or its stdin would not reach EOF when this test goes away.
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw TestServerError("socketpair failed: \(String(cString: strerror(errno)))")
        }
        let process: ChildProcess
        do {
            defer { close(ends[1]) }
            process = try ChildProcess(
                python,
                [script.path, "--lifetime", "\(lifetime.components.seconds)"],
                standardInput: ends[1],
                standardOutput: ends[1]
            )
        } catch {
            close(ends[0])
            throw error
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while byte != UInt8(ascii: "\n") && line.count < 64 {
            guard read(ends[0], &byte, 1) == 1 else { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            close(ends[0])
            process.stop()
            throw TestServerError(
                "the fault server did not report its port (got \"\(String(decoding: line, as: UTF8.self))\"); "
                    + "run python3 \(script.path) by hand to see why"
            )
        }
        self.process = process
        self.control = ends[0]
        self.port = port
    }

    deinit {
        close(control)
        process.stop()
    }

    /// `http://127.0.0.1:<port><path>`; `path` starts with `/`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
