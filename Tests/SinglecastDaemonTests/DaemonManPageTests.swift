import Foundation
import SinglecastDaemon
import Testing

/// singlecastd(8) must name every option `singlecastd --help` lists: the help text is the truth, read when the
/// test runs.
@Suite struct DaemonManPageTests {
    private static let page = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/man/singlecastd.8.scd")

    /// `--config`, `--help`… as the OPTIONS section of the help spells them.
    static func options(inHelp help: String) -> [String] {
        help.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            return words.first(where: { $0.hasPrefix("--") }).map { String($0.trimmingCharacters(in: [","])) }
        }
    }

    @Test func pageNamesEveryOptionOfTheHelp() throws {
        let options = Self.options(inHelp: DaemonOptions.help)
        #expect(options.count >= 6, "read only \(options) from singlecastd --help")
        let page = try String(contentsOf: Self.page, encoding: .utf8)
        let missing = options.filter { !page.contains("*\($0)*") }
        #expect(missing.isEmpty, "docs/man/singlecastd.8.scd does not document \(missing)")
    }
}
