import SinglecastSupport

/// Durations as feeds write them (`itunes:duration`, `psc:chapter@start`).
package enum FeedDuration {
    /// The longest duration read (about 31 years); a longer one is unknown.
    ///
    /// Each number was already below 10^9, but a sum of units was not: `999999999h` written 2.6 million times
    /// summed past `Int.max`, and the daemon trapped at every refresh of that feed.
    package static let maximumSeconds = 999_999_999

    /// Whole seconds, the fraction dropped; `nil` when the text holds no duration or one beyond
    /// ``maximumSeconds``.
    package static func seconds(_ text: String) -> Int? {
        exactSeconds(text).flatMap { OutsideNumber.int64($0) }.map { Int($0) }
    }

    /// Seconds with their fraction.
    ///
    /// Accepted: `H:MM:SS`, `M:SS`, `S` (fields of any width, hours past 24, minutes past 59 in `M:SS`),
    /// a fraction on the last field (`01:02:03.400`), units (`1h 2m 3s`, `45 min`, `1 hour 5 minutes`,
    /// ISO 8601's `PT1H2M3S`), and junk after a clock value (`12:34 min`). Negative or empty values and
    /// text without digits give `nil`, and so does a total beyond ``maximumSeconds``.
    package static func exactSeconds(_ text: String) -> Double? {
        readSeconds(text).flatMap { $0 < Double(maximumSeconds + 1) ? $0 : nil }
    }

    private static func readSeconds(_ text: String) -> Double? {
        // The string's own bytes: every item of a feed has a duration, and an array of them would be allocated for each.
        var text = text
        return text.withUTF8 { readSeconds(Bytes(base: $0, bounds: 0..<$0.count)) }
    }

    /// A run of a duration's UTF-8 bytes.
    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private static func readSeconds(_ bytes: Bytes) -> Double? {
        var start = 0
        while start < bytes.count && isSpace(bytes[start]) { start += 1 }
        var end = start
        while end < bytes.count
            && (isDigit(bytes[end]) || bytes[end] == 0x3A || bytes[end] == 0x2E || bytes[end] == 0x2C)
        {
            end += 1
        }
        let clock = bytes[start..<end]
        var rest = end
        while rest < bytes.count && isSpace(bytes[rest]) { rest += 1 }
        if clock.contains(0x3A) {
            return clockSeconds(clock)
        }
        if !clock.isEmpty && rest == bytes.count {
            return number(clock)
        }
        if let value = unitSeconds(bytes[start...]) { return value }
        return clock.isEmpty ? nil : number(clock)
    }

    /// `H:MM:SS`, `M:SS` with an optional fraction on the last field.
    private static func clockSeconds(_ clock: Bytes) -> Double? {
        // Field by field, without splitting into an array: every item of a feed has a duration.
        var total = 0.0
        var fields = 0
        var fieldStart = clock.startIndex
        while true {
            let fieldEnd = clock[fieldStart...].firstIndex(of: 0x3A) ?? clock.endIndex
            let field = clock[fieldStart..<fieldEnd]
            let isLast = fieldEnd == clock.endIndex
            fields += 1
            guard fields <= 3, !field.isEmpty, isLast || field.allSatisfy(isDigit), let value = number(field) else {
                return nil
            }
            total = total * 60 + value
            guard total <= Double(maximumSeconds) + 1 else { return nil }
            if isLast { return total }
            fieldStart = fieldEnd + 1
        }
    }

    /// `1h 2m 3s`, `PT1H2M3S`, `45 min`; infinity past ``maximumSeconds``.
    private static func unitSeconds(_ text: Bytes) -> Double? {
        var index = text.startIndex
        var total = 0.0
        var sawUnit = false
        if text.count >= 2, text[index] == 0x50 || text[index] == 0x70 {  // ISO 8601 "PT"
            index += 1
            if index < text.endIndex && (text[index] == 0x54 || text[index] == 0x74) { index += 1 }
        }
        while index < text.endIndex {
            while index < text.endIndex && (isSpace(text[index]) || text[index] == 0x2C) { index += 1 }
            if index == text.endIndex { break }
            let numberStart = index
            while index < text.endIndex && (isDigit(text[index]) || text[index] == 0x2E) { index += 1 }
            guard index > numberStart, let value = number(text[numberStart..<index]) else { return nil }
            while index < text.endIndex && isSpace(text[index]) { index += 1 }
            let unitStart = index
            while index < text.endIndex && isLetter(text[index]) { index += 1 }
            let unit = String(decoding: text[unitStart..<index], as: UTF8.self).lowercased()
            let scale: Double
            switch unit {
            case "h", "hr", "hrs", "hour", "hours", "std": scale = 3600
            case "m", "min", "mins", "minute", "minutes": scale = 60
            case "s", "sec", "secs", "second", "seconds": scale = 1
            case "": scale = 1
            default: return nil
            }
            sawUnit = sawUnit || !unit.isEmpty
            total += value * scale
            // Stops at once on a text built to sum past any bound, instead of reading megabytes of it; too long
            // is no duration at all, not the first number of it.
            guard total <= Double(maximumSeconds) + 1 else { return .infinity }
        }
        return sawUnit ? total : nil
    }

    private static func number(_ bytes: Bytes) -> Double? {
        var whole = 0.0
        var fraction = 0.0
        var scale = 1.0
        var inFraction = false
        var digits = 0
        for byte in bytes {
            if isDigit(byte) {
                digits += 1
                if inFraction {
                    scale /= 10
                    fraction += Double(byte - 0x30) * scale
                } else {
                    whole = whole * 10 + Double(byte - 0x30)
                }
            } else if (byte == 0x2E || byte == 0x2C) && !inFraction {
                inFraction = true
            } else {
                return nil
            }
        }
        guard digits > 0, whole < 1e9 else { return nil }
        return whole + fraction
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
