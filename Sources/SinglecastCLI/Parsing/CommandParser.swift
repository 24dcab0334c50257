/// What a command line asks for.
package enum ParseOutcome {
    /// Run the last command of the path with these arguments.
    case run(CommandPath, ParsedArguments)
    /// Print the help of the last command of the path (`-h`, `--help`, `help <subcommand>`, or a group
    /// run without a subcommand).
    case help(CommandPath)
    /// Print this version string (`--version`).
    case version(String)
    /// Print the error with the usage of the path and exit with 64.
    case usageError(UsageError, CommandPath)
}

/// Turns `argv` into a ``ParseOutcome`` by walking a tree of ``CLICommand`` types.
///
/// The rules follow ArgumentParser:
/// - Words select subcommands while the current command is a group; after that they are positionals.
/// - Options may appear anywhere after the command that declares them (inherited ones after any
///   descendant too), as `--name value` or `--name=value`; `--` ends option parsing.
/// - An option's value is the next word unless that word looks like an option (negative numbers do not).
/// - `-h`/`--help` anywhere wins over every error, then `--version`; otherwise the first error is reported.
package enum CommandParser {
    package static func parse(_ arguments: [String], root: any CLICommand.Type) -> ParseOutcome {
        var path: CommandPath = [root]
        var values: [String: [String]] = [:]
        var positionals: [String] = []
        var firstError: UsageError?
        var wantsHelp = false
        var wantsVersion = false
        var isHelpSubcommand = false
        var isTerminated = false

        var index = arguments.startIndex
        while index < arguments.endIndex {
            let word = arguments[index]
            index += 1
            if !isTerminated, word == "--" {
                isTerminated = true
                continue
            }
            if !isTerminated, looksLikeOption(word) {
                if word == "-h" || word == "--help" {
                    wantsHelp = true
                    continue
                }
                if isHelpSubcommand { continue }
                if word == "--version", path.versionString != nil {
                    wantsVersion = true
                    continue
                }
                let (name, attachedValue) = splitAttachedValue(word)
                guard let spec = lookUpOption(name, in: path.visibleArguments) else {
                    firstError = firstError ?? .unknownOption(name, suggestion: suggestOption(for: name, path: path))
                    continue
                }
                switch spec.kind {
                case .flag:
                    if let attachedValue {
                        firstError = firstError ?? .flagWithValue(spec, value: attachedValue)
                    } else {
                        values[spec.key, default: []].append("")
                    }
                case .option:
                    if let attachedValue {
                        values[spec.key, default: []].append(attachedValue)
                    } else if index < arguments.endIndex, !looksLikeOption(arguments[index]) {
                        values[spec.key, default: []].append(arguments[index])
                        index += 1
                    } else {
                        firstError = firstError ?? .missingValue(for: spec)
                    }
                case .positional:
                    preconditionFailure("lookUpOption returns flags and options only")
                }
                continue
            }
            let current = path[path.count - 1].configuration
            if !current.allSubcommands.isEmpty, positionals.isEmpty {
                if let subcommand = current.allSubcommands.first(where: { $0.configuration.commandName == word }) {
                    path.append(subcommand)
                    continue
                }
                // `help` is only a subcommand of the root, as in ArgumentParser.
                if path.count == 1, !isHelpSubcommand, word == "help" {
                    isHelpSubcommand = true
                    continue
                }
                var names = current.allSubcommands.map { $0.configuration.commandName }
                if path.count == 1 { names.append("help") }
                firstError =
                    firstError ?? .unknownSubcommand(word, suggestion: EditDistance.suggestion(for: word, among: names))
            }
            positionals.append(word)
        }

        if isHelpSubcommand {
            return firstError.map { .usageError($0, path) } ?? .help(path)
        }
        if wantsHelp { return .help(path) }
        if wantsVersion, let version = path.versionString { return .version(version) }
        if let firstError { return .usageError(firstError, path) }
        let command = path[path.count - 1].configuration
        // A group without a default subcommand shows its help, exactly as ArgumentParser does.
        if !command.allSubcommands.isEmpty { return .help(path) }

        var remaining = positionals[...]
        for spec in command.arguments where spec.kind == .positional {
            if spec.isRepeating {
                values[spec.key] = Array(remaining)
                remaining = []
            } else if let word = remaining.first {
                values[spec.key] = [word]
                remaining = remaining.dropFirst()
            }
            if spec.isRequired, values[spec.key, default: []].isEmpty {
                return .usageError(.missingArgument(spec), path)
            }
        }
        if !remaining.isEmpty {
            return .usageError(.unexpectedArguments(Array(remaining)), path)
        }
        for spec in path.visibleArguments where spec.kind == .option && spec.isRequired {
            if values[spec.key, default: []].isEmpty {
                return .usageError(.missingArgument(spec), path)
            }
        }
        return .run(path, ParsedArguments(specs: path.visibleArguments, values: values))
    }

    /// `-x`, `--name` and `--name=value` are options; `-`, `-5` and `-1.5` are values.
    static func looksLikeOption(_ word: String) -> Bool {
        word.hasPrefix("-") && word.count > 1 && Double(word) == nil
    }

    private static func splitAttachedValue(_ word: String) -> (name: String, value: String?) {
        guard word.hasPrefix("--"), let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }

    private static func lookUpOption(_ name: String, in specs: [ArgumentSpec]) -> ArgumentSpec? {
        let options = specs.filter { $0.kind != .positional }
        if name.hasPrefix("--") {
            let long = name.dropFirst(2)
            return options.first { $0.name == long }
        }
        guard name.count == 2 else { return nil }
        return options.first { $0.shortName == name.last }
    }

    private static func suggestOption(for name: String, path: CommandPath) -> String? {
        // Short options are one letter, so every other one is "close"; suggesting one would be noise.
        guard name.hasPrefix("--") else { return nil }
        var candidates = path.visibleArguments.filter { $0.kind != .positional }.map { "--\($0.name)" }
        if path.versionString != nil { candidates.append("--version") }
        candidates.append("--help")
        // ArgumentParser allows 3 edits for options, which offers '--json' for '--frob'; 2 is our rule everywhere.
        return EditDistance.suggestion(for: name, among: candidates)
    }
}
