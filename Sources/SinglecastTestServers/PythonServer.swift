import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A python3 script from `Resources` running as a loopback HTTP server: it prints the port it listens on, and exits
/// when its stdin reaches EOF (this value is released or the test process dies) or after its lifetime.
final class PythonServer: Sendable {
    /// The loopback port the server listens on.
    let port: Int
    private let process: ChildProcess
    /// Our end of the server's stdin and stdout; closing it tells the server to exit.
    private let control: Int32

    /// Starts `Resources/<script>.py --lifetime <seconds> <arguments>`.
    ///
    /// - Throws: ``TestServerError`` when python3 or the script is missing or the server does not report a port.
    init(script name: String, arguments: [String], python: String, lifetime: Duration) throws {
        guard let script = Bundle.module.url(forResource: name, withExtension: "py", subdirectory: "Resources") else {
            throw TestServerError("\(name).py is missing from the SinglecastTestServers resources; rebuild")
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
                [script.path, "--lifetime", "\(lifetime.components.seconds)"] + arguments,
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
                "\(name).py did not report its port (got \"\(String(decoding: line, as: UTF8.self))\"); "
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
}
