import Foundation
import SinglecastCLI
import Testing

/// The man pages in docs/man must name everything the CLI's command table and config/singlecast.conf
/// define: those two are the truth, read when the test runs, so a new subcommand, option or key without
/// its man page entry fails here.
@Suite struct ManPageTests {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The scdoc source split at `## name` headings: the text before the first one (keyed "") and each
    /// subsection's text up to the next heading of any level.
    static func subsections(of scdoc: String) -> [String: String] {
        var sections: [String: String] = [:]
        var current = ""
        for line in scdoc.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                current = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                continue
            }
            if line.hasPrefix("# "), !current.isEmpty {
                // A top-level section after subsections (ENVIRONMENT, EXIT STATUS…) belongs to none of them.
                current = "#"
            }
            sections[current, default: ""] += line + "\n"
        }
        return sections
    }

    /// How the page must write an argument: `*--name*` for flags and options, `_name_` for positionals.
    static func markup(of argument: ArgumentSpec) -> String {
        argument.kind == .positional ? "_\(argument.name)_" : "*--\(argument.name)*"
    }

    /// Every command below the root, with the path that reaches it.
    static func commands(below root: CommandPath = [Singlecastctl.self]) -> [CommandPath] {
        guard let last = root.last else { return [] }
        return last.configuration.allSubcommands.flatMap { child in
            [root + [child]] + commands(below: root + [child])
        }
    }

    @Test func singlecastctlPageHasASubsectionForEverySubcommand() throws {
        let sections = Self.subsections(of: try Self.read("docs/man/singlecastctl.1.scd"))
        let missing = Self.commands().map { $0.dropFirst().map { $0.configuration.commandName }.joined(separator: " ") }
            .filter { sections[$0] == nil }
        #expect(missing.isEmpty, "docs/man/singlecastctl.1.scd has no '## <name>' subsection for: \(missing)")
    }

    @Test func singlecastctlPageNamesEveryArgumentInItsSubcommandsSubsection() throws {
        let sections = Self.subsections(of: try Self.read("docs/man/singlecastctl.1.scd"))
        for path in Self.commands() {
            let name = path.dropFirst().map { $0.configuration.commandName }.joined(separator: " ")
            guard let text = sections[name], let command = path.last else { continue }
            let missing = command.configuration.arguments.map(Self.markup).filter { !text.contains($0) }
            #expect(missing.isEmpty, "the '## \(name)' subsection of singlecastctl(1) does not mention \(missing)")
        }
    }

    @Test func singlecastctlPageNamesTheGlobalOptions() throws {
        let options = Self.subsections(of: try Self.read("docs/man/singlecastctl.1.scd"))[""] ?? ""
        let expected = Singlecastctl.configuration.inheritedArguments.map(Self.markup) + ["*--version*", "*--help*"]
        let missing = expected.filter { !options.contains($0) }
        #expect(missing.isEmpty, "singlecastctl(1) does not list the global options \(missing) before its commands")
    }

    /// Keys of config/singlecast.conf: its `key = value` lines, commented out (`# key = value`) or not.
    static func configurationKeys(in example: String) -> [String] {
        example.split(separator: "\n").compactMap { line in
            let body = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
            guard let equals = body.firstIndex(of: "=") else { return nil }
            let key = body[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isLowercase || $0 == "_" }) else { return nil }
            return key
        }
    }

    @Test func configurationPageNamesEveryKeyOfTheExample() throws {
        let keys = Self.configurationKeys(in: try Self.read("config/singlecast.conf"))
        #expect(keys.count > 20, "read only \(keys.count) keys from config/singlecast.conf")
        let page = try Self.read("docs/man/singlecast.conf.5.scd")
        let missing = keys.filter { !page.contains("*\($0)*") }
        #expect(missing.isEmpty, "docs/man/singlecast.conf.5.scd does not document \(missing)")
    }
}
