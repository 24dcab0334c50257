import Foundation
import Testing

@testable import SinglecastSupport

@Suite("UTC timestamps") struct UTCTimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (999, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (951_782_400_000, "2000-02-29T00:00:00Z"),  // a leap day of a year divisible by 400
        (4_107_542_399_000, "2100-02-28T23:59:59Z"),  // 2100 is not a leap year
        (4_107_542_400_000, "2100-03-01T00:00:00Z"),
        (253_402_300_799_000, "9999-12-31T23:59:59Z"),
    ])
    func formatsKnownInstants(milliseconds: Int64, expected: String) {
        #expect(UTCTimestamp.string(milliseconds: milliseconds) == expected)
    }

    @Test("agrees with Foundation's ISO 8601 style from year 1600 to 9999")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let range: ClosedRange<Int64> = -11_676_096_000_000...253_402_300_799_999
        for _ in 0..<20_000 {
            let milliseconds = Int64.random(in: range, using: &generator)
            let expected = Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
            #expect(UTCTimestamp.string(milliseconds: milliseconds) == expected, "\(milliseconds)")
        }
    }
}
