/// One flag, option or positional argument of a command.
///
/// Build specs with ``flag(_:short:help:)``, ``option(_:short:valueName:help:defaultDescription:repeating:required:)``
/// and ``positional(_:help:repeating:required:)``; read the values with ``ParsedArguments``.
package struct ArgumentSpec: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        /// `--json`: present or not.
        case flag
        /// `--socket <path>` or `--socket=<path>`.
        case option
        /// A word that is not an option, matched by position.
        case positional
    }

    package var kind: Kind
    /// Long name without dashes (`socket`) or, for a positional, the value name (`url`).
    package var name: String
    package var shortName: Character?
    /// Placeholder shown in angle brackets for an option's value.
    package var valueName: String
    /// Sentence-case text with a period.
    package var help: String
    /// Shown as `(default: …)` after the help text.
    package var defaultDescription: String?
    /// May be given several times (options) or take every remaining word (the last positional).
    package var isRepeating: Bool
    /// Must be given at least once.
    package var isRequired: Bool

    /// A flag such as `--json` or `-a, --all`.
    package static func flag(_ name: String, short: Character? = nil, help: String) -> ArgumentSpec {
        ArgumentSpec(
            kind: .flag,
            name: name,
            shortName: short,
            valueName: "",
            help: help,
            defaultDescription: nil,
            isRepeating: false,
            isRequired: false
        )
    }

    /// An option with a value such as `--socket <path>`; the last occurrence wins unless `repeating`.
    package static func option(
        _ name: String,
        short: Character? = nil,
        valueName: String,
        help: String,
        defaultDescription: String? = nil,
        repeating: Bool = false,
        required: Bool = false
    ) -> ArgumentSpec {
        ArgumentSpec(
            kind: .option,
            name: name,
            shortName: short,
            valueName: valueName,
            help: help,
            defaultDescription: defaultDescription,
            isRepeating: repeating,
            isRequired: required
        )
    }

    /// A positional argument such as `<url> ...`.
    package static func positional(
        _ name: String,
        help: String,
        repeating: Bool = false,
        required: Bool = true
    ) -> ArgumentSpec {
        ArgumentSpec(
            kind: .positional,
            name: name,
            shortName: nil,
            valueName: name,
            help: help,
            defaultDescription: nil,
            isRepeating: repeating,
            isRequired: required
        )
    }

    /// Key in ``ParsedArguments``; options and positionals live in separate namespaces.
    var key: String { kind == .positional ? "<\(name)>" : "--\(name)" }

    /// How errors name the argument: `--socket <path>`, `--json`, `<url>`.
    package var synopsis: String {
        switch kind {
        case .flag: "--\(name)"
        case .option: "--\(name) <\(valueName)>"
        case .positional: "<\(name)>"
        }
    }

    /// The element in a usage line: `[--socket <path>]`, `--to <dir>`, `[--topic <topic> ...]`, `<url> ...`.
    var usageElement: String {
        let repeated = isRepeating ? "\(synopsis) ..." : synopsis
        return isRequired ? repeated : "[\(repeated)]"
    }

    /// The label in a help section: `-a, --all`, `--socket <path>`, `<url>`.
    var helpLabel: String {
        guard let shortName else { return synopsis }
        return "-\(shortName), \(synopsis)"
    }

    /// Help text plus the default, as ArgumentParser shows it.
    var helpAbstract: String {
        guard let defaultDescription else { return help }
        return help.isEmpty ? "(default: \(defaultDescription))" : "\(help) (default: \(defaultDescription))"
    }
}
