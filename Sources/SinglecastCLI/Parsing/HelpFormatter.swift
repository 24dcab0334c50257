/// Renders help, usage lines and usage errors in ArgumentParser's exact layout.
///
/// Layout constants and the wrapping algorithm are ArgumentParser's (`HelpGenerator`, `UsageGenerator`,
/// `String.wrapped(to:wrappingIndent:)`), so the output matches other Swift tools character for character.
package enum HelpFormatter {
    /// Labels are indented by two spaces…
    static let helpIndent = 2
    /// …and help text starts in this column.
    static let labelColumnWidth = 26
    /// The width used when standard output is not a terminal.
    package static let defaultScreenWidth = 80

    /// The full help of the last command of `path`.
    ///
    /// A leaf command's help ends with a newline and a group's with its "See …" line, as in ArgumentParser;
    /// the caller prints it followed by one more newline.
    package static func help(for path: CommandPath, screenWidth: Int = defaultScreenWidth) -> String {
        // ArgumentParser asserts the text column is positive; a very narrow terminal gets a usable minimum.
        let screenWidth = max(screenWidth, labelColumnWidth + 20)
        let configuration = path[path.count - 1].configuration
        var overview = configuration.abstract.isEmpty ? "" : "OVERVIEW: \(configuration.abstract)"
        if !configuration.discussion.isEmpty {
            if !overview.isEmpty { overview += "\n" }
            overview += "\n\(configuration.discussion)"
        }
        var text = overview.isEmpty ? "" : wrap(overview, to: screenWidth) + "\n\n"
        text += "USAGE: \(usage(for: path))\n\n"

        let positionals = configuration.arguments.filter { $0.kind == .positional }
        var options = path.visibleArguments.filter { $0.kind != .positional }.map {
            (label: $0.helpLabel, abstract: $0.helpAbstract)
        }
        if path.versionString != nil { options.append((label: "--version", abstract: "Show the version.")) }
        options.append((label: "-h, --help", abstract: "Show help information."))
        func commands(_ commands: [any CLICommand.Type]) -> [(label: String, abstract: String)] {
            commands.map { (label: $0.configuration.commandName, abstract: $0.configuration.abstract) }
        }
        let sections =
            [
                section("ARGUMENTS", positionals.map { (label: $0.helpLabel, abstract: $0.helpAbstract) }, screenWidth),
                section("OPTIONS", options, screenWidth),
                section("SUBCOMMANDS", commands(configuration.subcommands), screenWidth),
            ]
            + configuration.groupedSubcommands.map {
                // ArgumentParser's heading for a `CommandGroup`: the name, upper-cased, then "SUBCOMMANDS".
                section("\($0.name.uppercased()) SUBCOMMANDS", commands($0.subcommands), screenWidth)
            }
        text += sections.filter { !$0.isEmpty }.joined(separator: "\n")
        if !configuration.allSubcommands.isEmpty {
            // `help` is a subcommand of the root only, so it comes right after the tool name.
            let names =
                [path[0].configuration.commandName, "help"] + path.dropFirst().map { $0.configuration.commandName }
            text += "\n  See '\(names.joined(separator: " ")) <subcommand>' for detailed help."
        }
        return text
    }

    /// `singlecastctl status [--socket <path>] [--json]`.
    ///
    /// Like ArgumentParser, more than 12 arguments collapse the optional ones into `[<options>]`.
    package static func usage(for path: CommandPath) -> String {
        var elements = path.visibleArguments
        var prefix = path.commandLine
        if elements.count > 12 {
            elements = elements.filter { $0.kind == .positional || $0.isRequired }
            prefix += elements.isEmpty || elements.count > 12 ? " <options>" : " [<options>]"
            if elements.count > 12 { elements = [] }
        }
        var usage = ([prefix] + elements.map(\.usageElement)).joined(separator: " ")
        if !path[path.count - 1].configuration.allSubcommands.isEmpty { usage += " <subcommand>" }
        return usage
    }

    /// What ArgumentParser prints on stderr for a usage error: `Error:`, `Help:` for mistakes about one
    /// argument's value, `Usage:` and the pointer to `--help`.
    package static func usageErrorMessage(_ error: UsageError, path: CommandPath) -> String {
        var text = "Error: \(error.message)\n"
        if let help = error.help { text += "Help:  \(help)\n" }
        text += "Usage: \(usage(for: path))\n"
        text += "  See '\(path.commandLine) --help' for more information.\n"
        return text
    }

    private static func section(
        _ header: String,
        _ elements: [(label: String, abstract: String)],
        _ screenWidth: Int
    ) -> String {
        guard !elements.isEmpty else { return "" }
        return "\(header):\n" + elements.map { element($0.label, $0.abstract, screenWidth) }.joined()
    }

    private static func element(_ label: String, _ abstract: String, _ screenWidth: Int) -> String {
        let paddedLabel = String(repeating: " ", count: helpIndent) + label
        guard !abstract.isEmpty else { return paddedLabel + "\n" }
        let wrapped = wrap(abstract, to: screenWidth, wrappingIndent: labelColumnWidth)
        // A short label takes the place of the wrapped text's indentation; a long one gets a line to itself.
        if paddedLabel.count < labelColumnWidth {
            return paddedLabel + wrapped.dropFirst(paddedLabel.count) + "\n"
        }
        return paddedLabel + "\n" + wrapped + "\n"
    }

    /// Word-wraps `text` to `columns`, indenting every non-empty line by `wrappingIndent`.
    ///
    /// A transliteration of ArgumentParser's `String.wrapped(to:wrappingIndent:)`: lines break at the last
    /// space that fits, a word longer than a line stays whole, and existing newlines are kept.
    package static func wrap(_ text: String, to columns: Int, wrappingIndent: Int = 0) -> String {
        let columns = columns - wrappingIndent
        precondition(columns > 0, "the screen is narrower than the indentation")
        var lines: [Substring] = []
        var current = text.startIndex
        while true {
            let chunk = text[current...].prefix(columns)
            if let lastLineBreak = chunk.lastIndex(of: "\n") {
                lines.append(
                    contentsOf: text[current..<lastLineBreak].split(separator: "\n", omittingEmptySubsequences: false)
                )
                current = text.index(after: lastLineBreak)
            } else if chunk.endIndex == text.endIndex {
                lines.append(text[current...])
                break
            } else if let lastSpace = chunk.lastIndex(of: " ") {
                lines.append(text[current..<lastSpace])
                current = text.index(after: lastSpace)
            } else if let nextSpace = text[current...].firstIndex(of: " ") {
                lines.append(text[current..<nextSpace])
                current = text.index(after: nextSpace)
            } else {
                lines.append(text[current...])
                break
            }
        }
        let indent = String(repeating: " ", count: wrappingIndent)
        return lines.map { $0.isEmpty ? "" : indent + $0 }.joined(separator: "\n")
    }
}
