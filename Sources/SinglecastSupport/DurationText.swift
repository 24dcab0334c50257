/// The one way singlecast shows a duration, client and daemon alike: `45s`, `7m 3s`, `2h`, `3h 2m`, `2d 3h` — the
/// largest unit and the next one below it, left out when it is zero.
package enum DurationText {
    /// Fractions of a second are dropped; negative and NaN read `0s`, and anything beyond `Int64.max` seconds reads
    /// as that many.
    package static func text(seconds: Double) -> String {
        let total: Int64 =
            if !(seconds > 0) { 0 } else if seconds >= 0x1p63 { .max } else { Int64(seconds) }
        let units: [(size: Int64, name: String)] = [(86_400, "d"), (3600, "h"), (60, "m"), (1, "s")]
        for (index, unit) in units.enumerated() where total >= unit.size || unit.size == 1 {
            let whole = "\(total / unit.size)\(unit.name)"
            guard index + 1 < units.count else { return whole }
            let next = units[index + 1]
            let rest = total % unit.size / next.size
            return rest == 0 ? whole : whole + " \(rest)\(next.name)"
        }
        preconditionFailure("the loop returns at seconds")
    }
}
