import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// A podcast with 100,000 episodes lists like a small one: every row, in order, aligned. (This used to take
/// 37 s in a debug build; the test checks the output, not the time.)
@Suite struct LargePodcastTests {
    static let count = 100_000

    static let result: EpisodesResult = {
        let episodes = (0..<Int64(count)).map { index in
            PodcastFixtures.episode(
                Int64(count) - index,
                "Episode \(Int64(count) - index)",
                published: index % 7 == 0 ? nil : "2026-11-\(10 + index % 19)T23:30:00Z",
                duration: index % 5 == 0 ? nil : Int(index % 7200),
                new: index % 3 == 0,
                state: index % 11 == 0 ? .completed : nil
            )
        }
        return EpisodesResult(podcast: PodcastFixtures.podcast(3, "Huge", episodes: count), episodes: episodes)
    }()

    @Test func everyEpisodeIsListedInOrder() {
        let text = EpisodesCommand.render(Self.result, timeZone: PodcastFixtures.utc)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // Summary, blank line, header, the rows, and the empty string after the last newline.
        #expect(lines.count == Self.count + 4)
        #expect(lines[0] == "3  Huge: 100000 episodes, 0 new")
        #expect(lines[1] == "")
        #expect(lines[2] == "ID      DATE        DURATION  STATE       TITLE")
        #expect(lines[3] == "100000  -           -         downloaded  Episode 100000")
        #expect(lines[4] == "99999   2026-11-11  0:00:01   -           Episode 99999")
        #expect(lines[5] == "99998   2026-11-12  0:00:02   -           Episode 99998")
        #expect(lines[6] == "99997   2026-11-13  0:00:03   new         Episode 99997")
        #expect(lines[Self.count + 2] == "1       2026-11-12  1:46:39   new         Episode 1")
        #expect(lines.last == "")
        for (index, line) in lines.dropFirst(3).dropLast().enumerated() {
            guard line.hasPrefix("\(Self.count - index) ") else {
                Issue.record("row \(index) is \(line)")
                break
            }
        }
    }

    @Test func theDateOfEachEpisodeIsItsOwn() {
        // Dates come from a cache of formatted days; each row must still show its own.
        let text = EpisodesCommand.render(Self.result, timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        let lines = text.split(separator: "\n")
        #expect(lines[3].hasPrefix("99999   2026-11-12  "))
        #expect(lines[4].hasPrefix("99998   2026-11-13  "))
    }
}

/// The arithmetic that reads times for long lists agrees with Foundation.
@Suite struct TimestampTests {
    static let samples = [
        "2026-11-29T12:00:00Z", "2026-11-29T12:00:00.250Z", "2026-11-27T12:00:00+01:00", "2026-03-29T00:59:59Z",
        "2026-03-29T01:00:00Z", "2026-10-25T00:30:00Z", "2024-02-29T23:59:59Z", "1969-12-31T23:59:59Z",
        "2000-01-01T00:00:00-05:30", "1600-03-01T00:00:00Z",
    ]

    @Test func parsingAgreesWithISO8601DateFormatter() {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        for text in Self.samples {
            let expected = plain.date(from: text) ?? fractional.date(from: text)
            #expect(Timestamps.parse(text) == expected, "\(text)")
        }
        for text in ["someday", "2026-11-29T12:00:00", "2026-11-29 12:00", ""] {
            #expect(Timestamps.parse(text) == nil, "\(text)")
        }
    }

    @Test func localFieldsAgreeWithCalendar() throws {
        for zone in ["UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kathmandu", "Pacific/Kiritimati"] {
            let timeZone = try #require(TimeZone(identifier: zone))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            for text in Self.samples {
                let date = try #require(Timestamps.parse(text))
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
                let fields = Timestamps.fields(of: date, in: timeZone)
                #expect(
                    [fields.year, fields.month, fields.day, fields.hour, fields.minute]
                        == [parts.year, parts.month, parts.day, parts.hour, parts.minute],
                    "\(text) in \(zone)"
                )
            }
        }
    }
}

/// The whole path of `episodes` for a huge podcast: the reply is decoded once, straight into its type.
@Suite struct LargeReplyTests {
    @Test func episodesOfAHugePodcastArriveWhole() async throws {
        let reply = DownloadFixtures.resultLine(LargePodcastTests.result)
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([reply]))
            return await runCLI(["episodes", "3", "--socket", server.path], environment: ["TZ": "UTC"])
        }
        #expect(run.stderr == "")
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == LargePodcastTests.count + 4)
        #expect(lines.dropFirst(3).first?.hasPrefix("100000  ") == true)
        #expect(lines.dropLast().last?.hasSuffix("  Episode 1") == true)
    }
}
