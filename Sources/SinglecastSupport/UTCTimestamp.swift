/// Times on the wire: ISO 8601 in UTC to the second (`2026-12-02T07:03:33Z`), the form `Date.ISO8601FormatStyle`
/// writes by default.
///
/// Written by hand because a listing formats one per episode: the format style spent longer on 100,000 dates than
/// SQLite spent reading the episodes.
package enum UTCTimestamp {
    /// The second that `milliseconds` since 1970 falls in (rounded down, also before 1970).
    package static func string(milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : -((-milliseconds + 999) / 1000)
        let days = seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
                value %= divisor
                divisor /= 10
            }
        }
        if year < 0 || year > 9999 {
            // Outside four digits: what the feed said, as a signed year, rather than a wrong date.
            bytes.append(contentsOf: (year < 0 ? "-" : "").utf8)
            bytes.append(contentsOf: String(year.magnitude).utf8)
        } else {
            digits(year, 4)
        }
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int64(secondOfDay / 3600), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int64(secondOfDay / 60 % 60), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int64(secondOfDay % 60), 2)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The proleptic Gregorian date of a day count (days since 1970-01-01), by whole 400-year eras of 146,097 days.
    package static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        // Count from 0000-03-01, so that the leap day falls at the end of each shifted year.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
