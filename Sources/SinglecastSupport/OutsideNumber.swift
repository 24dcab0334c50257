/// The one gate for numbers that come from outside the daemon: feeds, HTTP headers, JSON-RPC requests, the
/// configuration, rules.
///
/// Swift traps on a `Double` → `Int64` conversion out of range and on an overflowing `+` or `*`, and a trap in a
/// daemon that retries the same input after every restart is a crash loop under `Restart=on-failure`. So no
/// number a stranger wrote reaches `Int64(_:)`, `+` or `*` directly: it comes through here, which refuses
/// (`nil`) or clamps, and arithmetic on times and durations saturates.
package enum OutsideNumber {
    /// `value` rounded toward zero when it fits in an `Int64`; `nil` for NaN, infinities and anything beyond
    /// ±2^63.
    package static func int64(_ value: Double) -> Int64? {
        guard value.isFinite else { return nil }
        let truncated = value.rounded(.towardZero)
        // 2^63 is exactly representable; every Double below it (and at or above -2^63) converts.
        guard truncated >= -9_223_372_036_854_775_808.0, truncated < 9_223_372_036_854_775_808.0 else {
            return nil
        }
        return Int64(truncated)
    }

    /// `value` rounded toward zero and clamped into `range`; NaN gives `range.lowerBound`.
    package static func clamped(_ value: Double, to range: ClosedRange<Int64>) -> Int64 {
        if value.isNaN { return range.lowerBound }
        if value <= Double(range.lowerBound) { return range.lowerBound }
        if value >= Double(range.upperBound) { return range.upperBound }
        return min(max(Int64(value.rounded(.towardZero)), range.lowerBound), range.upperBound)
    }

    /// Milliseconds since 1970 for `seconds` since 1970, or `nil` when that is not a number or does not fit.
    package static func milliseconds(fromSeconds seconds: Double) -> Int64? {
        int64(seconds * 1000)
    }

    /// A run of ASCII decimal digits (nothing else: no sign, no spaces) as an `Int64`; `nil` when it is empty,
    /// holds another byte, or does not fit.
    /// Inlinable, so that each caller gets it specialized for its bytes: a header's status code through the
    /// protocol's witnesses cost more than the rest of its line.
    @inlinable
    package static func decimal<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAdd) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowShift, !overflowAdd else { return nil }
            value = sum
        }
        return value
    }

    /// `decimal` of bytes in memory, compiled here once for them: the HTTP engine's callers got the generic body
    /// unspecialized, through `Collection`'s witnesses, at 2,000–6,500 instructions for a status code or a
    /// `Content-Length` (2 % of a small download's work).
    package static func decimal(bytes: Slice<UnsafeRawBufferPointer>) -> Int64? {
        decimal(bytes)
    }

    /// `decimal` of a string's UTF-8.
    @inlinable
    package static func decimal(_ text: some StringProtocol) -> Int64? {
        decimal(text.utf8)
    }
}

extension Int64 {
    /// `self + other`, held at `Int64.max` or `Int64.min` instead of trapping.
    package func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, held at `Int64.max` or `Int64.min` instead of trapping.
    package func saturatingSubtract(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other < 0 ? .max : .min
    }

    /// `self * other`, held at `Int64.max` or `Int64.min` instead of trapping.
    package func saturatingMultiply(_ other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }
}
