/// The values the user gave for a command path's arguments, read by ``CLICommand/init(_:)``.
///
/// Reading an argument the path does not declare is a programming error and traps, so a typo in a command
/// struct shows up in its first test rather than as a silently missing value.
package struct ParsedArguments: Sendable {
    private var specs: [String: ArgumentSpec]
    private var values: [String: [String]]

    /// - Parameters:
    ///   - specs: every argument visible on the command path.
    ///   - values: raw strings by ``ArgumentSpec/key``, in command-line order; a flag has one empty string
    ///     per occurrence.
    init(specs: [ArgumentSpec], values: [String: [String]]) {
        self.specs = Dictionary(specs.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        self.values = values
    }

    /// Whether the flag `--name` was given.
    package func flag(_ name: String) -> Bool {
        !raw(name, kind: .flag).isEmpty
    }

    /// The value of the last `--name`, or `nil`.
    package func option(_ name: String) -> String? {
        raw(name, kind: .option).last
    }

    /// Every value of a repeating `--name`, in order.
    package func options(_ name: String) -> [String] {
        raw(name, kind: .option)
    }

    /// The value of the positional `<name>`, or `nil` when it is optional and absent.
    package func argument(_ name: String) -> String? {
        raw(name, kind: .positional).first
    }

    /// Every word taken by the repeating positional `<name>`.
    package func arguments(_ name: String) -> [String] {
        raw(name, kind: .positional)
    }

    /// The last `--name` converted with `T(_:)`.
    ///
    /// - Throws: ``UsageError/invalidValue(_:for:reason:)`` when the conversion fails.
    package func option<T: LosslessStringConvertible>(_ name: String, as type: T.Type) throws -> T? {
        try option(name).map { try convert($0, name: name, kind: .option, to: type) }
    }

    /// Every `--name` converted with `T(_:)`.
    ///
    /// - Throws: ``UsageError/invalidValue(_:for:reason:)`` for the first value that does not convert.
    package func options<T: LosslessStringConvertible>(_ name: String, as type: T.Type) throws -> [T] {
        try options(name).map { try convert($0, name: name, kind: .option, to: type) }
    }

    /// Every word of the positional `<name>` converted with `T(_:)`.
    ///
    /// - Throws: ``UsageError/invalidValue(_:for:reason:)`` for the first word that does not convert.
    package func arguments<T: LosslessStringConvertible>(_ name: String, as type: T.Type) throws -> [T] {
        try arguments(name).map { try convert($0, name: name, kind: .positional, to: type) }
    }

    /// The spec of a declared argument, for ``UsageError/invalidValue(_:for:reason:)`` in custom checks.
    package func spec(_ name: String, kind: ArgumentSpec.Kind) -> ArgumentSpec {
        let key = kind == .positional ? "<\(name)>" : "--\(name)"
        guard let spec = specs[key], spec.kind == kind else {
            preconditionFailure("the command path declares no \(kind) named '\(name)'")
        }
        return spec
    }

    private func raw(_ name: String, kind: ArgumentSpec.Kind) -> [String] {
        values[spec(name, kind: kind).key] ?? []
    }

    private func convert<T: LosslessStringConvertible>(
        _ value: String,
        name: String,
        kind: ArgumentSpec.Kind,
        to type: T.Type
    ) throws -> T {
        guard let converted = T(value) else {
            throw UsageError.invalidValue(value, for: spec(name, kind: kind), reason: nil)
        }
        return converted
    }
}
