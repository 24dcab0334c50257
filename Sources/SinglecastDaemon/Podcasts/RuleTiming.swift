/// How long the rules took, for the debug lines that time them (`bench/rules` reads them).
enum RuleTiming {
    /// A duration in milliseconds with three decimals.
    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
