/// The command line cannot be run as typed; the CLI prints the message with the usage line and exits with 64.
///
/// The messages copy ArgumentParser's wording so the tool reads like every other Swift command-line tool.
package struct UsageError: Error, Hashable, Sendable {
    /// Stable identity of the mistake, for tests and callers that branch on it.
    package enum Code: String, Hashable, Sendable {
        case unknownOption = "unknown_option"
        case unknownSubcommand = "unknown_subcommand"
        case missingValue = "missing_value"
        case unexpectedArgument = "unexpected_argument"
        case missingArgument = "missing_argument"
        case invalidValue = "invalid_value"
        case flagWithValue = "flag_with_value"
        /// A command's own check in ``CLICommand/init(_:)`` failed.
        case validation
    }

    package var code: Code
    /// The text after `Error: `, without a trailing period (ArgumentParser style).
    package var message: String
    /// The text after `Help:  `: the argument concerned and its help, for mistakes about one argument's value.
    package var help: String?

    package init(code: Code, message: String, help: String? = nil) {
        self.code = code
        self.message = message
        self.help = help
    }

    /// A command's own check failed, e.g. `pause` got neither IDs nor `--all`.
    package static func validation(_ message: String) -> UsageError {
        UsageError(code: .validation, message: message)
    }

    package static func unknownOption(_ option: String, suggestion: String?) -> UsageError {
        UsageError(code: .unknownOption, message: "Unknown option '\(option)'" + didYouMean(suggestion))
    }

    package static func unknownSubcommand(_ name: String, suggestion: String?) -> UsageError {
        UsageError(code: .unknownSubcommand, message: "Unknown subcommand '\(name)'" + didYouMean(suggestion))
    }

    package static func missingValue(for spec: ArgumentSpec) -> UsageError {
        UsageError(code: .missingValue, message: "Missing value for '\(spec.synopsis)'", help: helpLine(spec))
    }

    package static func unexpectedArguments(_ words: [String]) -> UsageError {
        precondition(!words.isEmpty)
        let message =
            words.count == 1
            ? "Unexpected argument '\(words[0])'"
            : "\(words.count) unexpected arguments: " + words.map { "'\($0)'" }.joined(separator: ", ")
        return UsageError(code: .unexpectedArgument, message: message)
    }

    package static func missingArgument(_ spec: ArgumentSpec) -> UsageError {
        UsageError(
            code: .missingArgument,
            message: "Missing expected argument '\(spec.synopsis)'",
            help: helpLine(spec)
        )
    }

    /// `The value 'x' is invalid for '--priority <n>'`, plus `: <reason>` when given.
    package static func invalidValue(_ value: String, for spec: ArgumentSpec, reason: String?) -> UsageError {
        var message = "The value '\(value)' is invalid for '\(spec.synopsis)'"
        if let reason { message += ": \(reason)" }
        return UsageError(code: .invalidValue, message: message, help: helpLine(spec))
    }

    package static func flagWithValue(_ spec: ArgumentSpec, value: String) -> UsageError {
        UsageError(
            code: .flagWithValue,
            message: "The option '\(spec.synopsis)' does not take any value, but '\(value)' was specified."
        )
    }

    /// `--socket <path>  Path of the daemon's control socket.`, or `nil` when the argument has no help.
    private static func helpLine(_ spec: ArgumentSpec) -> String? {
        spec.help.isEmpty ? nil : "\(spec.synopsis)  \(spec.help)"
    }

    private static func didYouMean(_ suggestion: String?) -> String {
        suggestion.map { ". Did you mean '\($0)'?" } ?? ""
    }
}

/// Levenshtein distance and the "Did you mean" choice built on it.
package enum EditDistance {
    /// The number of single-character insertions, deletions and substitutions that turn `a` into `b`.
    package static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The candidate closest to `word`, if it is at most `maximumDistance` edits away; the earliest wins ties.

    package static func suggestion(for word: String, among candidates: [String], maximumDistance: Int = 2) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = between(word, candidate)
            if distance <= maximumDistance, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }
}
