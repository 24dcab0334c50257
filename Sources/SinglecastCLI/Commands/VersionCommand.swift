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
        let (result, _) = try await context.call(.version, options: options)
        let daemon = try context.decode(VersionResult.self, from: result, method: .version)
        if daemon.protocolVersion != ProtocolVersion.current {
            context.stderr.write(Self.protocolMismatchWarning(daemon: daemon.protocolVersion))
        }
        if options.json {
            let client: JSONValue = .object([
                "version": .string(SinglecastVersion.current),
                "protocol": .integer(Int64(ProtocolVersion.current)),
            ])
            try context.printJSON(JSONValue.object(["client": client, "daemon": result]))
        } else {
            context.stdout.write(Self.render(daemon, style: context.style))
        }
    }

    /// The human-readable table.
    package static func render(_ daemon: VersionResult, style: TextStyle = .plain) -> String {
        Formatting.table(
            [
                ("Client", "singlecastctl \(SinglecastVersion.current) (protocol \(ProtocolVersion.current))"),
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
