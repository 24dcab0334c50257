import FoundationEssentials

/// Dates as feeds write them: RFC 822/2822 (RSS) and ISO 8601 (Atom), with the usual mistakes.
///
/// `DateFormatter` is slow and strict; these parsers work on bytes, accept what real feeds publish and
/// return `nil` rather than guess when a field is out of range.
package enum FeedDate {
    /// The years a date may fall in; any other is no date.
    ///
    /// A feed or a server may write any year (the scanner reads up to nine digits), and a date of year 300000000
    /// has milliseconds beyond `Int64`: the daemon trapped on it at every refresh. Years before 1900 are
    /// placeholders (`0001-01-01`) rather than publication dates.
    package static let plausibleYears = 1900...9999

    /// Parses an RFC 822 date, else an ISO 8601 one (feeds mix them up in both directions).
    package static func parse(_ text: String) -> Date? {
        parseRFC822(text) ?? parseISO8601(text)
    }

    /// Parses an RFC 822/2822 date such as `Mon, 06 Jul 2020 04:00:00 -0000`.
    ///
    /// Tolerated: a missing or wrong weekday, missing seconds, full month names, two-digit years,
    /// `-` between date fields (`06-Jul-2020`), the `asctime` order (`Mon Jul 6 04:00:00 2020`), zones as
    /// `+hhmm`, `+hh:mm`, `GMT`, `UT`, `UTC`, `Z`, US and common European/Asian abbreviations, military
    /// letters (read as UTC, as RFC 2822 advises) and `GMT+2`. A missing zone means UTC.
    package static func parseRFC822(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parseRFC822(bytes: $0) }
    }

    private static func parseRFC822(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = DateScanner(bytes: bytes)
        var day: Int?
        var month: Int?
        var year: Int?
        scanner.skipSeparators()
        if let word = scanner.peekWord(), monthNumber(word) == nil {
            _ = scanner.word()  // weekday, right or wrong
        }
        // The date: "6 Jul 2020" or "Jul 6 2020" (asctime puts the year after the time).
        for _ in 0..<3 {
            scanner.skipSeparators()
            if let number = scanner.peekNumber() {
                if scanner.peekIsTime() { break }
                _ = scanner.number()
                if day == nil && month == nil {
                    day = number.value
                } else if day == nil {
                    day = number.value
                } else if year == nil {
                    year = fullYear(number.value, digits: number.digits)
                }
            } else if let word = scanner.word() {
                guard let value = monthNumber(word) else { return nil }
                month = value
            } else {
                break
            }
        }
        scanner.skipSeparators()
        guard let time = scanner.time() else {
            // A date alone (rare, but seen): midnight UTC.
            guard let day, let month, let year, scanner.atEnd else { return nil }
            return makeDate(year: year, month: month, day: day, hour: 0, minute: 0, second: 0, offset: 0)
        }
        scanner.skipSpaces()
        if year == nil, let number = scanner.number() {
            year = fullYear(number.value, digits: number.digits)
            scanner.skipSpaces()
        }
        guard let day, let month, let year else { return nil }
        let offset = scanner.zone() ?? 0
        return makeDate(
            year: year,
            month: month,
            day: day,
            hour: time.hour,
            minute: time.minute,
            second: time.second,
            offset: offset
        )
    }

    /// Parses an ISO 8601 / RFC 3339 date: `2003-12-13T18:30:02Z`, `…+01:00`, `…+0100`, fractional
    /// seconds, a space instead of `T`, or a date alone. A missing zone means UTC.
    package static func parseISO8601(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count && isSpace(bytes[index]) { index += 1 }
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), skip(0x2D), let month = digits(2) else { return nil }
        guard skip(0x2D), let day = digits(2) else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var offset = 0
        if index < bytes.count && (bytes[index] == 0x54 || bytes[index] == 0x74 || bytes[index] == 0x20) {
            index += 1
            guard let h = digits(2), skip(0x3A), let m = digits(2) else { return nil }
            hour = h
            minute = m
            if skip(0x3A) {
                guard let s = digits(2) else { return nil }
                second = s
                if skip(0x2E) || skip(0x2C) {
                    while index < bytes.count && bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
                }
            }
            while index < bytes.count && bytes[index] == 0x20 { index += 1 }
            if skip(0x5A) || skip(0x7A) {
                offset = 0
            } else if index < bytes.count && (bytes[index] == 0x2B || bytes[index] == 0x2D) {
                let sign = bytes[index] == 0x2D ? -1 : 1
                index += 1
                guard let zh = digits(2) else { return nil }
                _ = skip(0x3A)
                let zm = digits(2) ?? 0
                offset = sign * (zh * 3600 + zm * 60)
            }
        }
        while index < bytes.count && isSpace(bytes[index]) { index += 1 }
        guard index == bytes.count else { return nil }
        return makeDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// Formats a date as RFC 822 in GMT (`Mon, 06 Jul 2020 04:00:00 GMT`), as OPML's `dateCreated` wants.
    package static func rfc822String(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ((days % 7) + 7 + 4) % 7  // 1970-01-01 was a Thursday
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    // MARK: - Calendar arithmetic

    static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int) -> Date? {
        guard plausibleYears.contains(year), (1...12).contains(month),
            (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        guard (0...24).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01 (H. Hinnant's `civil_from_days`).
    package static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func fullYear(_ value: Int, digits: Int) -> Int {
        if digits <= 2 { return value < 50 ? 2000 + value : 1900 + value }
        if digits == 3 { return 1900 + value }
        return value
    }

    /// The month a word names by its first three letters, any case (`Jul`, `JULY`, `sept`).
    fileprivate static func monthNumber(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard word.count >= 3 else { return nil }
        var key: UInt32 = 0
        for byte in word.prefix(3) { key = key << 8 | UInt32(byte | 0x20) }
        // "jan" is 0x6A616E, "feb" 0x666562, …
        switch key {
        case 0x6A_616E: return 1
        case 0x66_6562: return 2
        case 0x6D_6172: return 3
        case 0x61_7072: return 4
        case 0x6D_6179: return 5
        case 0x6A_756E: return 6
        case 0x6A_756C: return 7
        case 0x61_7567: return 8
        case 0x73_6570: return 9
        case 0x6F_6374: return 10
        case 0x6E_6F76: return 11
        case 0x64_6563: return 12
        default: return nil
        }
    }

    /// Zone abbreviations seen in feeds, in seconds east of UTC.
    static let zoneOffsets: [String: Int] = [
        "ut": 0, "utc": 0, "gmt": 0, "z": 0, "wet": 0,
        "est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
        "mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
        "akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600, "ast": -4 * 3600, "adt": -3 * 3600,
        "nst": -(3 * 3600 + 1800), "ndt": -(2 * 3600 + 1800),
        "bst": 3600, "ist": 5 * 3600 + 1800, "cet": 3600, "cest": 2 * 3600, "met": 3600, "mest": 2 * 3600,
        "west": 3600, "eet": 2 * 3600, "eest": 3 * 3600, "msk": 3 * 3600, "sast": 2 * 3600,
        "cat": 2 * 3600, "eat": 3 * 3600, "wib": 7 * 3600, "sgt": 8 * 3600, "hkt": 8 * 3600,
        "awst": 8 * 3600, "jst": 9 * 3600, "kst": 9 * 3600, "acst": 9 * 3600 + 1800, "acdt": 10 * 3600 + 1800,
        "aest": 10 * 3600, "aedt": 11 * 3600, "nzst": 12 * 3600, "nzdt": 13 * 3600,
    ]

    fileprivate static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Tokens of an RFC 822 date.
private struct DateScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var atEnd: Bool {
        var probe = index
        while probe < bytes.count && FeedDate.isSpace(bytes[probe]) { probe += 1 }
        return probe == bytes.count
    }

    mutating func skipSpaces() {
        while index < bytes.count && FeedDate.isSpace(bytes[index]) { index += 1 }
    }

    mutating func skipSeparators() {
        while index < bytes.count
            && (FeedDate.isSpace(bytes[index]) || bytes[index] == 0x2C || bytes[index] == 0x2D || bytes[index] == 0x2E
                || bytes[index] == 0x2F)
        {
            index += 1
        }
    }

    func peekWord() -> Slice<UnsafeBufferPointer<UInt8>>? {
        var copy = self
        return copy.word()
    }

    mutating func word() -> Slice<UnsafeBufferPointer<UInt8>>? {
        let start = index
        while index < bytes.count && isLetter(bytes[index]) { index += 1 }
        return index > start ? bytes[start..<index] : nil
    }

    func peekNumber() -> (value: Int, digits: Int)? {
        var copy = self
        return copy.number()
    }

    /// Whether the next number is followed by `:` (the time, not a date field).
    func peekIsTime() -> Bool {
        var probe = index
        while probe < bytes.count && isDigit(bytes[probe]) { probe += 1 }
        return probe < bytes.count && bytes[probe] == 0x3A
    }

    mutating func number() -> (value: Int, digits: Int)? {
        let start = index
        var value = 0
        while index < bytes.count && isDigit(bytes[index]) && index - start < 9 {
            value = value * 10 + Int(bytes[index] - 0x30)
            index += 1
        }
        return index > start ? (value, index - start) : nil
    }

    /// `HH:MM[:SS[.fff]]`.
    mutating func time() -> (hour: Int, minute: Int, second: Int)? {
        guard let hour = number(), index < bytes.count, bytes[index] == 0x3A else { return nil }
        index += 1
        guard let minute = number() else { return nil }
        var second = 0
        if index < bytes.count && bytes[index] == 0x3A {
            index += 1
            guard let value = number() else { return nil }
            second = value.value
            if index < bytes.count && bytes[index] == 0x2E {
                index += 1
                _ = number()
            }
        }
        return (hour.value, minute.value, second)
    }

    /// `+hhmm`, `+hh:mm`, a name, or a name with an offset (`GMT+2`); `nil` when unknown or missing.
    mutating func zone() -> Int? {
        skipSpaces()
        var total = 0
        var found = false
        if let name = word() {
            let key = String(decoding: name, as: UTF8.self).lowercased()
            if let offset = FeedDate.zoneOffsets[key] {
                total = offset
            } else if key.count == 1 {
                total = 0  // RFC 2822 §4.3: military zones are unreliable; read them as UTC.
            } else {
                return nil
            }
            found = true
        }
        if index < bytes.count && (bytes[index] == 0x2B || bytes[index] == 0x2D) {
            let sign = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let number = number() else { return found ? total : nil }
            var hours = number.value
            var minutes = 0
            if number.digits >= 3 {
                hours = number.value / 100
                minutes = number.value % 100
            } else if index < bytes.count && bytes[index] == 0x3A {
                index += 1
                minutes = self.number()?.value ?? 0
            }
            guard hours <= 14 && minutes < 60 else { return nil }
            total += sign * (hours * 3600 + minutes * 60)
            found = true
        }
        return found ? total : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private func isLetter(_ byte: UInt8) -> Bool { (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) }
}
