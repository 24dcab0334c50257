import Testing

@testable import SinglecastSupport

@Suite("OutsideNumber") struct OutsideNumberTests {
    @Test func convertsDoublesThatFitAndRefusesTheRest() {
        #expect(OutsideNumber.int64(1.9) == 1)
        #expect(OutsideNumber.int64(-1.9) == -1)
        #expect(OutsideNumber.int64(9_223_372_036_854_774_784.0) == 9_223_372_036_854_774_784)
        #expect(OutsideNumber.int64(-9_223_372_036_854_775_808.0) == .min)
        #expect(OutsideNumber.int64(9_223_372_036_854_775_808.0) == nil)
        #expect(OutsideNumber.int64(1e300) == nil)
        #expect(OutsideNumber.int64(-1e300) == nil)
        #expect(OutsideNumber.int64(.nan) == nil)
        #expect(OutsideNumber.int64(.infinity) == nil)
        #expect(OutsideNumber.int64(-.infinity) == nil)
    }

    @Test func clampsIntoARange() {
        #expect(OutsideNumber.clamped(1e300, to: 0...86_400_000) == 86_400_000)
        #expect(OutsideNumber.clamped(-1e300, to: 0...86_400_000) == 0)
        #expect(OutsideNumber.clamped(.nan, to: 5...10) == 5)
        #expect(OutsideNumber.clamped(.infinity, to: 5...10) == 10)
        #expect(OutsideNumber.clamped(7.8, to: 5...10) == 7)
        #expect(OutsideNumber.clamped(1e19, to: .min ... .max) == .max)
    }

    @Test func millisecondsOfADateFarAwayAreRefused() {
        // Year 300,000,000 in seconds since 1970: the product does not fit in milliseconds.
        #expect(OutsideNumber.milliseconds(fromSeconds: 9.466e15 * 1000) == nil)
        #expect(OutsideNumber.milliseconds(fromSeconds: 1_700_000_000.5) == 1_700_000_000_500)
    }

    @Test(arguments: [
        ("0", Int64(0)),
        ("007", 7),
        ("9223372036854775807", .max),
    ])
    func readsDecimals(text: String, expected: Int64) {
        #expect(OutsideNumber.decimal(text) == expected)
    }

    @Test(arguments: ["", "-1", "+1", " 1", "1 ", "9223372036854775808", "99999999999999999999", "1e3", "٣"])
    func refusesWhatIsNotAPlainDecimal(text: String) {
        #expect(OutsideNumber.decimal(text) == nil)
    }

    @Test func arithmeticSaturates() {
        #expect(Int64.max.saturatingAdd(1) == .max)
        #expect(Int64.min.saturatingAdd(-1) == .min)
        #expect(Int64(5).saturatingAdd(-7) == -2)
        #expect(Int64.min.saturatingSubtract(1) == .min)
        #expect(Int64.max.saturatingSubtract(-1) == .max)
        #expect(Int64(3).saturatingSubtract(5) == -2)
        #expect(Int64.max.saturatingMultiply(2) == .max)
        #expect(Int64.max.saturatingMultiply(-2) == .min)
        #expect(Int64.min.saturatingMultiply(-1) == .max)
        #expect(Int64(-4).saturatingMultiply(5) == -20)
    }
}
