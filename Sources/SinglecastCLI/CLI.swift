import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The `singlecastctl` program as a function, so tests can run it in-process with captured output.
package enum CLI {
    /// The root of the command tree.
    package static let root: any CLICommand.Type = Singlecastctl.self

    /// Parses `arguments`, runs the command and returns the exit status.
    ///
    /// Help and `--version` go to `stdout` with status 0. Usage errors go to `stderr` in ArgumentParser's
    /// three-line shape with status 64. Other errors print `Error: <description>` to `stderr` and end with
    /// ``ExitCode/of(_:)`` (64 for the daemon's `invalid_params`, 69 when it is unreachable, else 1). With `--json`,
    /// every error is one ``JSONErrorLine`` on `stderr` instead, with the same status.
    ///
    /// - Parameters:
    ///   - arguments: the command line without the program name.
    ///   - environment: the process environment (`SINGLECAST_SOCKET`, `XDG_RUNTIME_DIR`, `TERM`, `NO_COLOR`,
    ///     `COLUMNS`).
    ///   - stdout: where results and help go.
    ///   - stderr: where errors and warnings go.
    ///   - responseTimeout: how long to wait for the daemon's answer.
    ///   - userID: whose default socket to use.
    package static func main(
        arguments: some Sequence<String>,
        environment: [String: String],
        stdout: some TextOutput,
        stderr: some TextOutput,
        responseTimeout: Duration = .seconds(30),
        userID: UInt32 = geteuid()
    ) async -> Int32 {
        let context = CommandContext(
            environment: environment,
            stdout: stdout,
            stderr: stderr,
            style: TextStyle(output: stdout, environment: environment),
            responseTimeout: responseTimeout,
            userID: userID
        )
        let arguments = Array(arguments)
        switch CommandParser.parse(arguments, root: root) {
        case .help(let path):
            let width = stdout.terminalColumns ?? environment["COLUMNS"].flatMap { Int($0) }
            stdout.write(HelpFormatter.help(for: path, screenWidth: width ?? HelpFormatter.defaultScreenWidth) + "\n")
            return ExitCode.success.rawValue
        case .version(let version):
            stdout.write(version + "\n")
            return ExitCode.success.rawValue
        case .usageError(let error, let path):
            return report(error, path: path, json: wantsJSON(arguments), stderr: stderr)
        case .run(let path, let arguments):
            do {
                let command = try path[path.count - 1].init(arguments)
                try await command.run(context)
                return ExitCode.success.rawValue
            } catch let exit as ExitCode {
                return exit.rawValue
            } catch {
                return report(error, path: path, json: arguments.flag("json"), stderr: stderr)
            }
        }
    }

    /// Prints `error` to `stderr`, as text or as a ``JSONErrorLine``, and returns the exit status it ends with.
    private static func report(_ error: any Error, path: CommandPath, json: Bool, stderr: some TextOutput) -> Int32 {
        let status = ExitCode.of(error)
        if json {
            stderr.write(JSONErrorLine(error, exitStatus: status).text)
        } else if let usage = error as? UsageError {
            stderr.write(HelpFormatter.usageErrorMessage(usage, path: path))
        } else {
            stderr.write("Error: \(describe(error))\n")
        }
        return status.rawValue
    }

    /// Whether a command line that could not be parsed asked for `--json` (before any `--`).
    private static func wantsJSON(_ arguments: some Sequence<String>) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }

    /// The text after `Error: `: a `LocalizedError`'s description, else the error as Swift prints it.
    static func describe(_ error: any Error) -> String {
        if let description = (error as? any LocalizedError)?.errorDescription { return description }
        return String(describing: error)
    }
}
