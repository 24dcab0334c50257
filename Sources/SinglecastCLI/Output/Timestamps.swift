import FoundationEssentials
import SinglecastSupport

/// The daemon's ISO 8601 times, read and split into local calendar fields with plain arithmetic.
///
/// A Foundation date formatter and calendar per value cost about a millisecond each (debug build), which made
/// listing a podcast with 100,000 episodes take most of a minute; this reads the forms the daemon sends directly
/// and leaves anything else to Foundation's ISO 8601 parser.
package enum Timestamps {
    /// Local calendar fields of one instant.
    package struct Fields: Hashable, Sendable {
        package var year: Int
        package var month: Int
        package var day: Int
        package var hour: Int
        package var minute: Int
    }

    /// `2026-11-29 13:05`: the one way the client shows an instant, on the wall clock of `zone`. Every command
    /// prints times through here (or ``clock(_:zone:)`` for a time of day); `--json` keeps the daemon's text.
    package static func text(_ date: Date, zone: LocalTimeZone) -> String {
        let parts = fields(of: date, in: zone)
        return "\(parts.year)-\(pad(parts.month))-\(pad(parts.day)) \(pad(parts.hour)):\(pad(parts.minute))"
    }

    /// ``text(_:zone:)`` of the daemon's ISO 8601 text, or the text as sent when it is not one.
    package static func text(_ iso8601: String, zone: LocalTimeZone) -> String {
        parse(iso8601).map { text($0, zone: zone) } ?? iso8601
    }

    /// `2026-11-29`: the day of an instant in `zone`, for a date column; the text as sent when it is not ISO 8601.
    package static func day(_ iso8601: String, zone: LocalTimeZone) -> String {
        guard let date = parse(iso8601) else { return iso8601 }
        let parts = fields(of: date, in: zone)
        return "\(parts.year)-\(pad(parts.month))-\(pad(parts.day))"
    }

    /// `01:00`: the time of day of `date` in `zone`, for what recurs daily (a download window's edge).
    package static func clock(_ date: Date, zone: LocalTimeZone) -> String {
        let parts = fields(of: date, in: zone)
        return "\(pad(parts.hour)):\(pad(parts.minute))"
    }

    private static func pad(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }

    /// `2026-11-29T12:00:00Z`, with fractional seconds or a `+01:00` offset too; other spellings go to
    /// `Date.ISO8601FormatStyle`. `nil` when the text is not an ISO 8601 time.
    package static func parse(_ text: String) -> Date? {
        if let date = parseCommonForm(text) { return date }
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }

    /// The fields of `date` on the wall clock of `timeZone`.
    package static func fields(of date: Date, in timeZone: LocalTimeZone) -> Fields {
        let utcSeconds = Formatting.wholeNumber(date.timeIntervalSince1970.rounded(.down))
        let (sum, overflow) = utcSeconds.addingReportingOverflow(Int64(timeZone.secondsFromUTC(at: utcSeconds)))
        let seconds = overflow ? utcSeconds : sum
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = UTCTimestamp.civilDate(daysSince1970: days)
        return Fields(
            year: Int(year),
            month: Int(month),
            day: Int(day),
            hour: Int(secondOfDay / 3600),
            minute: Int(secondOfDay % 3600 / 60)
        )
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with a valid date and time, else `nil`.
    private static func parseCommonForm(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), bytes[4] == UInt8(ascii: "-"), let month = number(5..<7),
            bytes[7] == UInt8(ascii: "-"), let day = number(8..<10), bytes[10] == UInt8(ascii: "T"),
            let hour = number(11..<13), bytes[13] == UInt8(ascii: ":"), let minute = number(14..<16),
            bytes[16] == UInt8(ascii: ":"), let second = number(17..<19),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, let digit = number(index..<index + 1) {
                fraction += Double(digit) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard bytes.count == index + 6, let hours = number(index + 1..<index + 3),
                bytes[index + 3] == UInt8(ascii: ":"), let minutes = number(index + 4..<index + 6), hours < 24,
                minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
