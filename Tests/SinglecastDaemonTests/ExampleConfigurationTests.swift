import Foundation
import SinglecastDaemon
import Testing

/// config/singlecast.conf is the documentation of every key; it must stay complete and true.
@Suite struct ExampleConfigurationTests {
    private static let examplePath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/singlecast.conf").path

    /// The example with every `# key = value` line uncommented.
    private func uncommentedExample() throws -> String {
        let text = try String(contentsOfFile: Self.examplePath, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let body = line.dropFirst(2)
            guard line.hasPrefix("# "), let equals = body.firstIndex(of: "="),
                DaemonConfiguration.keyNames.contains(body[..<equals].trimmingCharacters(in: .whitespaces))
            else { return String(line) }
            return String(body)
        }.joined(separator: "\n")
    }

    @Test func documentsEveryKeyExactlyOnce() throws {
        let text = try uncommentedExample()
        for key in DaemonConfiguration.keyNames {
            let occurrences = text.split(separator: "\n").filter { $0.hasPrefix("\(key) =") }.count
            #expect(occurrences == 1, "config/singlecast.conf documents '\(key)' \(occurrences) times")
        }
    }

    @Test func documentedValuesAreTheDefaults() throws {
        let parsed = try DaemonConfiguration.parse(try uncommentedExample(), path: Self.examplePath, home: "/home/u")
        let environment = ["HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000"]
        let fromExample = DaemonPaths.resolve(
            options: DaemonOptions(),
            configuration: parsed,
            environment: environment,
            uid: 1000
        )
        let defaults = DaemonPaths.resolve(
            options: DaemonOptions(),
            configuration: DaemonConfiguration(),
            environment: environment,
            uid: 1000
        )
        #expect(fromExample.stateDirectory == defaults.stateDirectory)
        #expect(fromExample.downloadDirectory == defaults.downloadDirectory)
        #expect(fromExample.socket == defaults.socket)
        var withoutPaths = parsed
        withoutPaths.stateDirectory = nil
        withoutPaths.downloadDirectory = nil
        withoutPaths.socketPath = nil
        #expect(withoutPaths == DaemonConfiguration())
    }
}
