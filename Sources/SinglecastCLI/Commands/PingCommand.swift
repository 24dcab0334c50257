import SinglecastProtocol

/// `singlecastctl ping`: checks that the daemon answers and shows the round-trip time.
package struct PingCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Check that the daemon answers."
    )

    package var options: GlobalOptions

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
    }

    package func run(_ context: CommandContext) async throws {
        let (result, roundTrip) = try await context.call(.ping, options: options)
        if options.json {
            try context.printJSON(result)
        } else {
            context.stdout.write("pong (\(Formatting.milliseconds(roundTrip)))\n")
        }
    }
}
