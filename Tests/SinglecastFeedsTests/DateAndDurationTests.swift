import Foundation
import Testing

@testable import SinglecastFeeds

@Suite struct FeedDateTests {
    /// 2020-07-06 04:00:00 UTC.
    static let reference = Date(timeIntervalSince1970: 1_594_008_000)

    @Test(arguments: [
        "Mon, 06 Jul 2020 04:00:00 GMT",
        "Mon, 6 Jul 2020 04:00:00 -0000",
        "Mon, 06 Jul 2020 04:00:00 +0000",
        "Mon, 06 Jul 2020 04:00:00 UT",
        "Mon, 06 Jul 2020 04:00:00 UTC",
        "Mon, 06 Jul 2020 04:00:00 Z",
        "Mon, 06 Jul 2020 00:00:00 EDT",
        "Sun, 05 Jul 2020 23:00:00 EST",
        "Sun, 05 Jul 2020 23:00:00 CDT",
        "Sun, 05 Jul 2020 22:00:00 CST",
        "Sun, 05 Jul 2020 22:00:00 MDT",
        "Sun, 05 Jul 2020 21:00:00 PDT",
        "Sun, 05 Jul 2020 20:00:00 PST",
        "Mon, 06 Jul 2020 06:00:00 CEST",
        "Mon, 06 Jul 2020 05:30:00 +01:30",
        "Mon, 06 Jul 2020 06:00:00 GMT+2",
        "Mon, 06 Jul 2020 04:00 GMT",
        "06 Jul 2020 04:00:00 GMT",
        "Fri, 06 Jul 2020 04:00:00 GMT",
        "Monday, 06 July 2020 04:00:00 GMT",
        "Mon, 06-Jul-2020 04:00:00 GMT",
        "Mon, 06 Jul 20 04:00:00 GMT",
        "Mon Jul  6 04:00:00 2020",
        "Mon, 06 Jul 2020 04:00:00",
        "  Mon, 06 JUL 2020 04:00:00 gmt  ",
        "Mon, 06 Jul 2020 04:00:00 A",
        "2020-07-06T04:00:00Z",
        "2020-07-06T06:00:00+02:00",
        "2020-07-06T00:00:00-0400",
        "2020-07-06 04:00:00",
        "2020-07-06T04:00:00.123Z",
    ])
    func parsesCommonSpellings(text: String) {
        #expect(FeedDate.parse(text) == FeedDateTests.reference, "\(text)")
    }

    @Test(arguments: [
        "", "yesterday", "Mon, 32 Jul 2020 04:00:00 GMT", "Mon, 06 Foo 2020 04:00:00 GMT", "2020-13-01T00:00:00Z",
    ])
    func rejectsNonsense(text: String) {
        #expect(FeedDate.parse(text) == nil)
    }

    @Test func isoDateAloneIsMidnightUTC() {
        #expect(FeedDate.parseISO8601("2020-07-06") == Date(timeIntervalSince1970: 1_593_993_600))
    }

    @Test func leapDayAndOldDates() {
        #expect(FeedDate.parse("Sat, 29 Feb 2020 00:00:00 GMT") == Date(timeIntervalSince1970: 1_582_934_400))
        #expect(FeedDate.parse("Sat, 29 Feb 2019 00:00:00 GMT") == nil)
        #expect(FeedDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
    }

    /// A year of nine digits gave a date whose milliseconds do not fit in an `Int64`: the daemon trapped on
    /// it at every refresh of the feed, and on a server's `Retry-After`.
    @Test(arguments: [
        "Mon, 01 Jan 300000000 00:00:00 GMT",
        "Mon, 01 Jan 999999999 23:59:59 -1400",
        "Jan  1 00:00:00 300000000",
        "Mon, 01 Jan 10000 00:00:00 GMT",
        "Mon, 01 Jan 1899 00:00:00 GMT",
        "0001-01-01T00:00:00Z",
        "1899-12-31",
    ])
    func datesOutsideYears1900To9999AreNoDate(text: String) {
        #expect(FeedDate.parse(text) == nil, "\(text)")
    }

    @Test func theEdgesOfThePlausibleYearsAreDates() {
        #expect(FeedDate.parse("Mon, 01 Jan 1900 00:00:00 GMT") == Date(timeIntervalSince1970: -2_208_988_800))
        #expect(FeedDate.parse("Fri, 31 Dec 9999 23:59:59 GMT") == Date(timeIntervalSince1970: 253_402_300_799))
        #expect(FeedDate.plausibleYears == 1900...9999)
    }

    @Test func formatsRFC822InGMT() {
        #expect(FeedDate.rfc822String(FeedDateTests.reference) == "Mon, 06 Jul 2020 04:00:00 GMT")
        #expect(FeedDate.rfc822String(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}

@Suite struct FeedDurationTests {
    @Test(arguments: [
        ("01:00:00", 3600),
        ("1:02:03", 3723),
        ("01:02:03.400", 3723),
        ("62:03", 3723),
        ("90:00", 5400),
        ("3723", 3723),
        ("3723.9", 3723),
        (" 00:20:00 ", 1200),
        ("100:00:00", 360_000),
        ("1h 2m 3s", 3723),
        ("1 hour 2 minutes", 3720),
        ("45 min", 2700),
        ("PT1H2M3S", 3723),
        ("12:34 min", 754),
        ("3600 seconds", 3600),
        ("0", 0),
    ])
    func parses(text: String, seconds: Int) {
        #expect(FeedDuration.seconds(text) == seconds, "\(text)")
    }

    @Test(arguments: ["", "  ", "abc", "-5", "1:2:3:4", "1::2", ":30", "30:", "1:2:3:"])
    func rejects(text: String) {
        #expect(FeedDuration.seconds(text) == nil, "\(text)")
    }

    /// `999999999h` 2.6 million times summed past `Int.max`: the daemon trapped at every refresh of the feed.
    @Test func aTotalBeyondTheMaximumIsUnknown() {
        let hostile = String(repeating: "999999999h ", count: 3_000)
        #expect(FeedDuration.seconds(hostile) == nil)
        #expect(FeedDuration.exactSeconds("999999999:59:59") == nil)
        #expect(FeedDuration.seconds("PT277777H46M40S") == nil)
        #expect(FeedDuration.seconds("PT277777H46M39S") == 999_999_999)
        #expect(FeedDuration.maximumSeconds == 999_999_999)
    }

    @Test func keepsTheFraction() {
        #expect(FeedDuration.exactSeconds("00:00:01.5") == 1.5)
    }
}
