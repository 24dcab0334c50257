/// `singlecastctl completion <shell>`: prints a completion script generated from the command table.
package struct CompletionCommand: CLICommand {
    package enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    package static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print a shell completion script.",
        discussion: """
            The script completes subcommands, options, states, policies, podcast IDs and titles (equal titles by \
            ID only), download IDs for download commands and new episodes' IDs for episode commands; the last \
            three are asked from the running daemon when you press Tab. The Debian package installs the scripts \
            already. To load one by hand:

            Examples:
              source <(singlecastctl completion bash)
              singlecastctl completion zsh > ~/.zfunc/_singlecastctl
              singlecastctl completion fish > ~/.config/fish/completions/singlecastctl.fish
            """,
        arguments: [
            .positional(
                "shell",
                help: "The shell to complete for. (values: " + Shell.allCases.map(\.rawValue).joined(separator: ", ")
                    + ")"
            )
        ]
    )

    package var shell: Shell

    package init(_ arguments: ParsedArguments) throws {
        let word = arguments.argument("shell") ?? ""
        guard let shell = Shell(rawValue: word) else {
            throw UsageError.invalidValue(
                word,
                for: arguments.spec("shell", kind: .positional),
                reason: "expected one of " + Shell.allCases.map(\.rawValue).joined(separator: ", ")
            )
        }
        self.shell = shell
    }

    package func run(_ context: CommandContext) async throws {
        context.stdout.write(Self.script(for: shell))
    }

    package static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: BashCompletion.script()
        case .zsh: ZshCompletion.script()
        case .fish: FishCompletion.script()
        }
    }
}
