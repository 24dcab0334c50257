import FoundationEssentials
import SinglecastProtocol

/// What a running command may use: the environment, the two output streams and the client settings.
package struct CommandContext: Sendable {
    package var environment: [String: String]
    package var stdout: any TextOutput
    package var stderr: any TextOutput
    /// Styling for text on ``stdout``.
    package var style: TextStyle
    /// How long to wait for a response before reporting a wedged daemon.
    package var responseTimeout: Duration
    /// The uid whose default socket directory is used (`geteuid()` in the binary).
    package var userID: UInt32

    package init(
        environment: [String: String],
        stdout: any TextOutput,
        stderr: any TextOutput,
        style: TextStyle,
        responseTimeout: Duration,
        userID: UInt32
    ) {
        self.environment = environment
        self.stdout = stdout
        self.stderr = stderr
        self.style = style
        self.responseTimeout = responseTimeout
        self.userID = userID
    }

    /// The socket the global options select; see ``GlobalOptions/socketPath(environment:userID:)``.
    package func socketPath(_ options: GlobalOptions) -> String {
        options.socketPath(environment: environment, userID: userID)
    }

    /// Connects, sends one request and returns its `result`.
    ///
    /// - Returns: the result and the time from sending the request to reading the response.
    /// - Throws: ``ClientError``.
    package func call(
        _ method: SinglecastProtocol.Method,
        params: JSONValue? = nil,
        options: GlobalOptions
    ) async throws -> (result: JSONValue, roundTrip: Duration) {
        let path = socketPath(options)
        let timeout = responseTimeout
        return try await Blocking.run {
            let connection = try ControlConnection(path: path)
            let start = ContinuousClock.now
            let result = try connection.call(method.rawValue, params: params, timeout: timeout)
            return (result, ContinuousClock.now - start)
        }
    }

    /// Decodes a result into its typed form, reporting a mismatch as a bad reply rather than a crash.
    package func decode<T: Decodable>(
        _ type: T.Type,
        from result: JSONValue,
        method: SinglecastProtocol.Method
    )
        throws -> T
    {
        do {
            return try WireCoding.decode(type, from: result)
        } catch {
            throw ClientError.invalidResponse("the result of '\(method.rawValue)' has an unexpected shape (\(error))")
        }
    }

    /// What most commands do: call `method`, then print its result as it came (`--json`) or decoded and rendered.
    ///
    /// Text output decodes the result straight from the response line into `Result`, in one pass.
    package func callAndPrint<Result: Decodable>(
        _ method: SinglecastProtocol.Method,
        params: JSONValue? = nil,
        options: GlobalOptions,
        as type: Result.Type,
        render: (Result) throws -> String
    ) async throws {
        if options.json {
            let (result, _) = try await call(method, params: params, options: options)
            try printJSON(result)
            return
        }
        let path = socketPath(options)
        let timeout = responseTimeout
        let line = try await Blocking.run {
            try ControlConnection(path: path).responseLine(method.rawValue, params: params, timeout: timeout)
        }
        let result: Result
        do {
            result = try ControlConnection.result(type, in: line) ?? WireCoding.decode(type, from: .null)
        } catch {
            throw ClientError.invalidResponse("the result of '\(method.rawValue)' has an unexpected shape (\(error))")
        }
        stdout.write(try render(result))
    }

    /// Prints `value` as one line of compact JSON with sorted keys, the same encoding as the wire.
    package func printJSON(_ value: some Encodable) throws {
        let data = try WireCoding.encoder().encode(value)
        stdout.write(String(decoding: data, as: UTF8.self) + "\n")
    }
}

/// `--socket` and `--json`, accepted by every command before or after the subcommand name.
package struct GlobalOptions: Hashable, Sendable {
    package static let arguments: [ArgumentSpec] = [
        .option(
            "socket",
            valueName: "path",
            help: "Path of the daemon's control socket.",
            defaultDescription: "$XDG_RUNTIME_DIR/singlecast/control.sock"
        ),
        .flag("json", help: "Print machine-readable JSON; errors too, on stderr."),
    ]

    /// `--socket`, if given.
    package var socket: String?
    /// `--json`.
    package var json: Bool

    package init(socket: String? = nil, json: Bool = false) {
        self.socket = socket
        self.json = json
    }

    /// - Throws: ``UsageError`` for an empty `--socket`, which could only fail later with a vaguer message.
    package init(_ arguments: ParsedArguments) throws {
        socket = arguments.option("socket")
        json = arguments.flag("json")
        if socket == "" {
            throw UsageError.invalidValue("", for: arguments.spec("socket", kind: .option), reason: "the path is empty")
        }
    }

    /// `--socket`, else a non-empty `$SINGLECAST_SOCKET`, else ``SocketLocation/defaultSocketPath(environment:uid:)``.
    package func socketPath(environment: [String: String], userID: UInt32) -> String {
        if let socket { return socket }
        if let fromEnvironment = environment[SocketLocation.environmentVariable], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return SocketLocation.defaultSocketPath(environment: environment, uid: userID)
    }
}
