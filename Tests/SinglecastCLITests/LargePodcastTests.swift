import Foundation
import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport
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
        #expect(lines[0] == "3  Huge: 100,000 episodes, 0 new")
        #expect(lines[1] == "")
        #expect(lines[2] == "ID      DATE        DURATION  STATE       DOWNLOAD  TITLE")
        #expect(lines[3] == "100000  -           -         downloaded  101000    Episode 100000")
        #expect(lines[4] == "99999   2026-11-11  1s        -           -         Episode 99999")
        #expect(lines[5] == "99998   2026-11-12  2s        -           -         Episode 99998")
        #expect(lines[6] == "99997   2026-11-13  3s        new         -         Episode 99997")
        #expect(lines[Self.count + 2] == "1       2026-11-12  1h 46m    new         -         Episode 1")
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
        let text = EpisodesCommand.render(Self.result, timeZone: .foundation("Asia/Tokyo"))
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
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try #require(TimeZone(identifier: zone))
            for text in Self.samples {
                let date = try #require(Timestamps.parse(text))
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
                let fields = Timestamps.fields(of: date, in: .foundation(zone))
                #expect(
                    [fields.year, fields.month, fields.day, fields.hour, fields.minute]
                        == [parts.year, parts.month, parts.day, parts.hour, parts.minute],
                    "\(text) in \(zone)"
                )
            }
        }
    }
}

/// The C library's idea of the local zone, which the client shows times in.
@Suite struct LocalTimeZoneTests {
    @Test func theSystemZoneAgreesWithFoundationsCurrentZone() throws {
        // Both read TZ, else /etc/localtime; this process's Foundation has ICU's zone rules to compare with.
        for text in TimestampTests.samples + ["2026-07-01T12:00:00Z", "2026-01-15T12:00:00Z"] {
            let date = try #require(Timestamps.parse(text))
            let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
            #expect(
                LocalTimeZone.system.secondsFromUTC(at: seconds) == TimeZone.current.secondsFromGMT(for: date),
                "\(text)"
            )
        }
    }

    @Test func fixedZonesKeepTheirOffset() {
        let kolkata = LocalTimeZone.fixed(secondsFromUTC: 19_800)
        #expect(kolkata.secondsFromUTC(at: 0) == 19_800)
        #expect(kolkata.secondsFromUTC(at: 1_800_000_000) == 19_800)
        #expect(LocalTimeZone.utc.secondsFromUTC(at: 1_800_000_000) == 0)
        #expect(PodcastText.time("2026-11-28T23:30:00Z", timeZone: kolkata) == "2026-11-29 05:00")
    }
}

extension LocalTimeZone {
    /// A named zone with Foundation's (ICU's) rules, to check the client's arithmetic against.
    static func foundation(_ identifier: String) -> LocalTimeZone {
        let zone = TimeZone(identifier: identifier)!
        return LocalTimeZone { zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0))) }
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

    /// The reply is read by hand (``JSONByteReader``); any layout of the same JSON must read as the compact one.
    @Test func aReplyInAnotherLayoutReadsTheSame() async throws {
        let result = EpisodesResult(
            podcast: PodcastFixtures.podcast(3, "Huge", episodes: 2),
            episodes: [
                PodcastFixtures.episode(7, "Seven \"quoted\" / é\t😀", state: .paused),
                PodcastFixtures.episode(6, "Six", published: nil, duration: nil, new: true),
            ]
        )
        // JSONEncoder's defaults: members in any order, slashes escaped; then spaces and a member this client
        // does not know around it.
        let plain = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        let loose = #"{ "result" : "# + plain + #" , "extra": {"x": [1, "]}"]}, "jsonrpc": "2.0", "id": 1 }"#
        for reply in [DownloadFixtures.resultLine(result), loose] {
            let run = try await withTemporaryDirectory { directory in
                let server = try TestServer(directory: directory, behavior: .reply([reply]))
                return await runCLI(["episodes", "3", "--socket", server.path])
            }
            #expect(run.stderr == "")
            #expect(run.stdout == EpisodesCommand.render(result, timeZone: .system))
        }
    }
}
