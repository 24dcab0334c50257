import Foundation
import Testing

@testable import SinglecastFeeds

/// podcastparser's test corpus (shared/conformance), run in-process through ``PodcastparserMapping``.
enum Conformance {
    /// `/work/shared/conformance/podcastparser`, else `../shared/conformance/podcastparser` next to the package.
    static let directory: URL? = {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [
            URL(fileURLWithPath: "/work/shared/conformance/podcastparser"),
            package.deletingLastPathComponent().appendingPathComponent("shared/conformance/podcastparser"),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("simple.rss").path) }
    }()

    /// Feeds whose episodes singlecast describes where podcastparser leaves the description empty, with the
    /// description expected instead: an Atom entry without `<content>` is described by its `<summary>`, as
    /// feedparser reads it; podcastparser ignores `<summary>`.
    static let summaryDescriptions = ["atom_published_updated": "Some text.", "atom_updated": "Some text."]

    /// `expected` with every episode's empty description replaced by `description`.
    static func describingEpisodes(_ expected: JSONValue, as description: String) -> JSONValue {
        guard case .object(var podcast) = expected, case .array(let episodes)? = podcast["episodes"] else {
            return expected
        }
        podcast["episodes"] = .array(
            episodes.map { episode in
                guard case .object(var fields) = episode, fields["description"] == .string("") else { return episode }
                fields["description"] = .string(description)
                return .object(fields)
            }
        )
        return .object(podcast)
    }
}

@Suite struct ConformanceTests {
    @Test(
        .enabled(
            if: Conformance.directory != nil,
            "the podcastparser corpus is not in /work/shared/conformance or ../shared/conformance; skipped"
        )
    )
    func podcastparserCorpus() throws {
        let directory = try #require(Conformance.directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".rss") }.map { String($0.dropLast(4)) }.sorted()
        var failures: [String] = []
        var passed = 0
        for name in names {
            let expectedURL = directory.appendingPathComponent(name + ".json")
            guard FileManager.default.fileExists(atPath: expectedURL.path) else { continue }
            var expected = try #require(
                JSONValue(foundation: JSONSerialization.jsonObject(with: Data(contentsOf: expectedURL)))
            )
            if let description = Conformance.summaryDescriptions[name] {
                expected = Conformance.describingEpisodes(expected, as: description)
            }
            var maxEpisodes = 0
            let paramURL = directory.appendingPathComponent(name + ".param.json")
            if let params = try? JSONSerialization.jsonObject(with: Data(contentsOf: paramURL)) as? [String: Any] {
                maxEpisodes = params["max_episodes"] as? Int ?? 0
            }
            let url = "file://tests/data/\(name).rss"
            do {
                let feed = try FeedParser.parse(
                    Data(contentsOf: directory.appendingPathComponent(name + ".rss")),
                    url: url
                )
                let actual = PodcastparserMapping.document(feed, url: url, maxEpisodes: maxEpisodes)
                if actual.matches(expected) {
                    passed += 1
                } else {
                    failures.append("\(name): got \(actual.serialized(indent: nil))")
                }
            } catch {
                failures.append("\(name): \(error)")
            }
        }
        #expect(passed + failures.count == 70)
        #expect(passed >= 68, "failures:\n\(failures.joined(separator: "\n"))")
        #expect(
            Conformance.summaryDescriptions.keys.allSatisfy { name in !failures.contains { $0.hasPrefix(name + ":") } }
        )
    }
}

@Suite struct FeedToolTests {
    @Test func printsJSONAndErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedtool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.xml")
        try Data("<rss><channel><item><enclosure url=\"a.mp3\"/></item></channel></rss>".utf8).write(to: file)

        let podcastparser = FeedTool.run(arguments: [
            "--podcastparser-json", "--url", "file://tests/data/x.rss", file.path,
        ])
        #expect(podcastparser.status == 0)
        let json = try #require(JSONValue(foundation: JSONSerialization.jsonObject(with: podcastparser.standardOutput)))
        guard case .object(let podcast) = json else { throw FeedError(code: .notAFeed, message: "not an object") }
        #expect(podcast["title"] == .string("x"))

        let native = FeedTool.run(arguments: ["--url", "https://e.com/f", file.path])
        #expect(String(decoding: native.standardOutput, as: UTF8.self).contains("\"url\" : \"https://e.com/a.mp3\""))

        let summary = FeedTool.run(arguments: ["--summary", file.path])
        #expect(String(decoding: summary.standardOutput, as: UTF8.self) == "\t1 episodes\n")

        try Data("<rss><channel><title>T &amp; <![CDATA[x]]></title><item/></channel></rss>".utf8).write(to: file)
        let scan = FeedTool.run(arguments: ["--scan", file.path])
        #expect(String(decoding: scan.standardOutput, as: UTF8.self) == "4 elements, 9 bytes of text\n")
        try Data("<rss><channel></rss>".utf8).write(to: file)
        let badScan = FeedTool.run(arguments: ["--scan", file.path])
        #expect(badScan.status == 1, "the scan checks what a parse checks")

        try Data("<html/>".utf8).write(to: file)
        let failure = FeedTool.run(arguments: [file.path])
        #expect(failure.status == 1)
        #expect(failure.standardError.hasPrefix("Error: The document is an HTML page"))
        #expect(failure.standardError.contains("[not_a_feed]"))

        let missing = FeedTool.run(arguments: ["/nonexistent/feed.xml"])
        #expect(missing.status == 1)
        #expect(
            missing.standardError
                == "Error: cannot read /nonexistent/feed.xml: No such file or directory (/nonexistent/feed.xml)\n"
        )

        let usage = FeedTool.run(arguments: ["--bogus"])
        #expect(usage.status == 64)
        #expect(usage.standardError.contains("See 'singlecast-feed --help'"))
    }
}

extension JSONValue {
    /// Converts what `JSONSerialization` returns; `nil` for anything that is not JSON.
    package init?(foundation value: Any) {
        switch value {
        case is NSNull:
            self = .null
        case let number as NSNumber:
            let kind = String(cString: number.objCType)
            if kind == "c" || kind == "B" {
                self = .bool(number.boolValue)
            } else if kind != "d" && kind != "f", let int = Int(exactly: number.int64Value) {
                self = .int(int)
            } else {
                self = .double(number.doubleValue)
            }
        case let string as String:
            self = .string(string)
        case let array as [Any]:
            var values: [JSONValue] = []
            for element in array {
                guard let value = JSONValue(foundation: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case let dictionary as [String: Any]:
            var values: [String: JSONValue] = [:]
            for (key, element) in dictionary {
                guard let value = JSONValue(foundation: element) else { return nil }
                values[key] = value
            }
            self = .object(values)
        default:
            return nil
        }
    }
}
