import SinglecastProtocol

/// `singlecastctl http-password [--reset]`: the credentials of the daemon's HTTP listener.
package struct HTTPPasswordCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "http-password",
        abstract: "Print the user and password of the HTTP listener.",
        discussion:
            "The daemon makes the password the first time it is needed and keeps it, readable only by you, in "
            + "http-password in its state directory. Give it to a podcast app or a browser with the user name "
            + "singlecast. --reset makes a new one; the old one stops working at once.",
        arguments: [
            .flag("reset", help: "Replace the password with a new one.")
        ]
    )

    package var options: GlobalOptions
    package var reset: Bool

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        reset = arguments.flag("reset")
    }

    package func run(_ context: CommandContext) async throws {
        let params: JSONValue? = reset ? .object(["reset": .bool(true)]) : nil
        let (result, _) = try await context.call(.httpPassword, params: params, options: options)
        if options.json {
            try context.printJSON(result)
            return
        }
        let credentials = try context.decode(HTTPPasswordResult.self, from: result, method: .httpPassword)
        context.stdout.write(Self.render(credentials, style: context.style))
    }

    package static func render(_ credentials: HTTPPasswordResult, style: TextStyle = .plain) -> String {
        Formatting.table(
            [("User", credentials.user), ("Password", credentials.password), ("File", credentials.file)],
            style: style
        )
    }
}
