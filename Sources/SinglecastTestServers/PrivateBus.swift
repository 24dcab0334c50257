import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon` on a socket in a temporary directory, with a python-dbusmock template serving on it: a
/// notification server for the session bus, NetworkManager for the system bus. Both stop when the value is
/// released.
package final class PrivateBus: Sendable {
    /// The bus address to hand a client (`DBUS_SESSION_BUS_ADDRESS` or `DBUS_SYSTEM_BUS_ADDRESS`).
    package let address: String
    /// The mock's call log, when asked for.
    package let log: String?
    private let directory: TemporaryDirectory
    private let daemon: ChildProcess
    private let mock: ChildProcess

    /// Whether `dbus-daemon`, `busctl` and python-dbusmock's `template` are installed (scripts/bootstrap installs them).
    package static func isAvailable(template: String) -> Bool {
        ["/usr/bin/dbus-daemon", "/usr/bin/busctl"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && FileManager.default.fileExists(
                atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/\(template).py"
            )
    }

    /// Starts the bus and the mock, and returns once the mock owns `name`.
    ///
    /// - Parameters:
    ///   - template: A dbusmock template, such as `notification_daemon` or `networkmanager`.
    ///   - system: Serve the template as a system-bus service (the bus itself is a private one either way).
    ///   - logCalls: Have the mock log each call to a file (``log``).
    ///   - place: The directory of the bus's socket; a bus that replaces a stopped one in the same place has its
    ///     address (a new one by default).
    package init(
        template: String,
        name: String,
        system: Bool,
        logCalls: Bool = false,
        place: TemporaryDirectory? = nil
    ) async throws {
        directory = try place ?? TemporaryDirectory(prefix: "sc-bus")
        address = "unix:path=\(directory.path)/bus"
        // Neither may hold the test runner's output open: `swift test` waits for its end of file.
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon",
            ["--session", "--nofork", "--nopidfile", "--address=\(address)"],
            standardOutput: null,
            standardError: null
        )
        log = logCalls ? directory.file("calls.log") : nil
        mock = try ChildProcess(
            "/usr/bin/python3",
            ["-m", "dbusmock", system ? "--system" : "--session", "-t", template] + (log.map { ["-l", $0] } ?? []),
            standardOutput: null,
            standardError: null,
            environment: [
                system ? "DBUS_SYSTEM_BUS_ADDRESS" : "DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin",
            ]
        )
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? busctl(["status", name])) == nil {
            guard ContinuousClock.now < deadline else { throw TestServerError("the \(template) mock did not start") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    deinit { stop() }

    /// Stops the mock and the bus: a client's connection ends as when the system bus goes away.
    package func stop() {
        // python-dbusmock outlived SIGTERM here.
        mock.stop(signal: SIGKILL)
        daemon.stop()
    }

    /// Freezes the mock (SIGSTOP): it keeps its name on the bus and answers nothing until ``thawService()``.
    package func freezeService() { mock.send(SIGSTOP) }

    /// Lets a frozen mock go on (SIGCONT); it answers what was asked meanwhile.
    package func thawService() { mock.send(SIGCONT) }

    /// Runs `busctl --address=<bus> <arguments>` and returns its output.
    ///
    /// - Throws: ``TestServerError`` when busctl fails.
    @discardableResult
    package func busctl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/busctl")
        process.arguments = ["--address=\(address)"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw TestServerError("busctl \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }
}
