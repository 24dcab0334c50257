import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

/// docs/PROTOCOL.md is the contract: every example request in it is sent to a real daemon, and the answer
/// must have exactly the documented shape (the same fields, recursively; values such as pids may differ).
@Suite struct ProtocolDocumentTests {
    private static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/PROTOCOL.md").path

    /// Every key path in a JSON value, e.g. `result.paths.socket`; array elements share the path `[]`.
    private func shape(_ value: JSONValue, prefix: String = "") -> Set<String> {
        switch value {
        case .object(let fields):
            var paths: Set<String> = [prefix]
            for (key, child) in fields { paths.formUnion(shape(child, prefix: prefix + "." + key)) }
            return paths
        case .array(let items):
            return items.reduce(into: [prefix]) { $0.formUnion(shape($1, prefix: prefix + "[]")) }
        default:
            return [prefix]
        }
    }

    private func decode(_ line: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
    }

    @Test func everyExampleMatchesTheRealDaemon() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        var pairs: [(request: String, response: String)] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("→ ") && index + 1 < lines.count {
            let next = lines[index + 1]
            if next.hasPrefix("← ") { pairs.append((String(line.dropFirst(2)), String(next.dropFirst(2)))) }
        }
        #expect(pairs.count >= 6, "PROTOCOL.md lost its examples")

        // Second start, so status has previous_run_clean as in the example. The directory methods ask a local
        // stand-in for Apple's directory that serves the same fixtures the examples show.
        let directory = try DirectoryServer()
        let first = DaemonProcess()
        try first.writeConfig("search_endpoint = \(directory.url)\nchart_endpoint = \(directory.url)\n")
        try first.startAndWaitUntilReady()
        #expect(first.stop() == 0)
        let daemon = DaemonProcess(root: first.root)
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        for (request, documented) in pairs {
            // The documented hosts are fictional: point them at a closed loopback port so nothing leaves the
            // machine (the download then waits to be retried, which the shapes below do not depend on).
            let local = request.replacingOccurrences(of: "https://cdn.example.com", with: "http://127.0.0.1:9")
            try client.send(local + "\n")
            let actual = try #require(try client.readLine())
            let expected = try decode(documented)
            let real = try decode(actual)
            #expect(shape(real) == shape(expected), "\(request)\ndocumented: \(documented)\nactual:     \(actual)")
            if case .object(let fields) = real, case .object(let error)? = fields["error"],
                case .object(let documentedFields) = expected,
                case .object(let documentedError)? = documentedFields["error"]
            {
                #expect(error["code"] == documentedError["code"])
                #expect(error["message"] == documentedError["message"])
            }
        }
        #expect(daemon.stop() == 0)
    }

    /// The batch examples are answered exactly as documented (they use only requests whose answers never vary), and
    /// an example without an answer gets no line at all: the next line is the answer to a later ping.
    @Test func everyBatchExampleIsAnsweredExactly() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Batches\n").dropFirst().first)
            .components(separatedBy: "\n## ")[0]
        let lines = section.split(separator: "\n").map(String.init)
        var examples: [(request: String, response: String?)] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("→ ") {
            let next = index + 1 < lines.count ? lines[index + 1] : ""
            examples.append((String(line.dropFirst(2)), next.hasPrefix("← ") ? String(next.dropFirst(2)) : nil))
        }
        #expect(examples.count >= 6, "the Batches section lost its examples")
        #expect(examples.contains { $0.response == nil }, "no example of a batch that gets no answer")

        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let ping = #"{"jsonrpc":"2.0","id":"after","method":"ping"}"#
        let pong = #"{"id":"after","jsonrpc":"2.0","result":{"pong":true}}"#
        for (request, documented) in examples {
            try client.send(request + "\n" + ping + "\n")
            let actual = try #require(try client.readLine())
            if let documented {
                #expect(
                    try decode(actual) == decode(documented),
                    "\(request)\ndocumented: \(documented)\nactual: \(actual)"
                )
                #expect(try client.readLine() == pong)
            } else {
                #expect(actual == pong, "\(request) was answered: \(actual)")
            }
        }
        #expect(daemon.stop() == 0)
    }

    @Test func everyMethodAndEventIsDocumented() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let headings = text.split(separator: "\n").filter { $0.hasPrefix("### ") }
        for method in Method.allCases {
            #expect(
                headings.contains { $0.contains("`\(method.rawValue)`") },
                "PROTOCOL.md has no section for \(method.rawValue)"
            )
        }
        for event in DaemonEvent.allCases {
            #expect(text.contains("| `\(event.rawValue)` |"), "PROTOCOL.md does not list \(event.rawValue)")
        }
        for topic in EventTopic.allCases {
            #expect(text.contains("`\(topic.rawValue)`"))
        }
    }
}
