import SinglecastProtocol

/// `singlecastctl version`: the versions of both programs and of the libraries the daemon uses.
package struct VersionCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Show client and daemon versions."
    )

    package var options: GlobalOptions

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
    }

    package func run(_ context: CommandContext) async throws {
        let result: JSONValue
        do {
            (result, _) = try await context.call(.version, options: options)
        } catch let error as ClientError where error.exitStatus == .unavailable {
            // Which client is installed matters most when the daemon does not answer; the error says why.
            if options.json {
                try context.printJSON(JSONValue.object(["client": Self.clientJSON, "daemon": .null]))
            } else {
                context.stdout.write(Self.render(nil, style: context.style))
            }
            throw error
        }
        let daemon = try context.decode(VersionResult.self, from: result, method: .version)
        if daemon.protocolVersion != ProtocolVersion.current {
            context.stderr.write(Self.protocolMismatchWarning(daemon: daemon.protocolVersion))
        }
        if options.json {
            try context.printJSON(JSONValue.object(["client": Self.clientJSON, "daemon": result]))
        } else {
            context.stdout.write(Self.render(daemon, style: context.style))
        }
    }

    private static let clientJSON: JSONValue = .object([
        "version": .string(SinglecastVersion.current),
        "protocol": .integer(Int64(ProtocolVersion.current)),
    ])

    /// The human-readable table; `nil` when the daemon could not be reached.
    package static func render(_ daemon: VersionResult?, style: TextStyle = .plain) -> String {
        let client = ("Client", "singlecastctl \(SinglecastVersion.current) (protocol \(ProtocolVersion.current))")
        guard let daemon else { return Formatting.table([client, ("Daemon", "unreachable")], style: style) }
        return Formatting.table(
            [
                client,
                ("Daemon", "singlecastd \(daemon.daemon) (protocol \(daemon.protocolVersion))"),
                ("SQLite", daemon.sqlite),
                ("libcurl", daemon.libcurl),
            ],
            style: style
        )
    }

    static func protocolMismatchWarning(daemon: Int) -> String {
        "Warning: singlecastctl speaks protocol \(ProtocolVersion.current) but singlecastd speaks protocol "
            + "\(daemon); install matching versions of both.\n"
    }
}
