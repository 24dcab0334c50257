/// Pure functions that turn numbers into the text people read.
package enum Formatting {
    /// A decimal (SI) size with one decimal place: `0 B`, `512 B`, `1.0 kB`, `12.4 MB`, `1.1 GB`.
    ///
    /// Decimal units match what `ls -h --si`, GNOME and macOS show; the value is rounded half up, and a
    /// result that would read `1000.0` moves to the next unit.
    package static func byteCount(_ bytes: Int64) -> String {
        if bytes < 0 { return "-" + byteCount(bytes == .min ? .max : -bytes) }
        if bytes < 1000 { return "\(bytes) B" }
        let units = ["kB", "MB", "GB", "TB", "PB", "EB"]
        var divisor = 1000.0
        for (index, unit) in units.enumerated() {
            let tenths = (Double(bytes) / divisor * 10).rounded()
            if tenths < 10_000 || index == units.count - 1 {
                return oneDecimal(tenths: tenths) + " " + unit
            }
            divisor *= 1000
        }
        preconditionFailure("the loop returns at the last unit")
    }

    /// A duration such as `42s`, `7m 3s`, `2h 5m 7s` or `3d 4h 12m`: the largest unit and the next two below
    /// it (seconds are left out once days are shown). Fractions of a second are dropped.
    package static func duration(seconds: Double) -> String {
        let total = seconds.isFinite && seconds > 0 ? Int64(seconds.rounded(.down)) : 0
        let days = total / 86_400
        let hours = total % 86_400 / 3600
        let minutes = total % 3600 / 60
        let rest = total % 60
        if days > 0 { return "\(days)d \(hours)h \(minutes)m" }
        if hours > 0 { return "\(hours)h \(minutes)m \(rest)s" }
        if minutes > 0 { return "\(minutes)m \(rest)s" }
        return "\(rest)s"
    }

    /// Milliseconds with one decimal place, for round-trip times: `0.3 ms`, `12.0 ms`.
    package static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return oneDecimal(tenths: (milliseconds * 10).rounded()) + " ms"
    }

    /// `1 thing` or `2 things`.
    package static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(value) \(value == 1 ? singular : plural ?? singular + "s")"
    }

    /// Two columns: labels left-aligned and padded to the longest label plus two spaces.
    ///
    /// Padding is computed on the plain label so bold escape codes do not shift the second column.
    package static func table(_ rows: [(label: String, value: String)], style: TextStyle = .plain) -> String {
        let width = rows.map(\.label.count).max() ?? 0
        return rows.map { row in
            let padding = String(repeating: " ", count: width - row.label.count + 2)
            return style.bold(row.label) + padding + row.value + "\n"
        }.joined()
    }

    /// A transfer rate with binary (1024-based) units and one decimal place: `512 B/s`, `500.0 KB/s`, `2.0 MB/s`.
    ///
    /// Rates use the same 1024-based units as the `limit` command reads (`2M` is 2,097,152 bytes per second), so a
    /// download held at that limit shows `2.0 MB/s` rather than a confusing `2.1 MB/s`.
    package static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond >= 0 else { return "0 B/s" }
        if bytesPerSecond < 1024 { return "\(Int64(bytesPerSecond.rounded())) B/s" }
        let units = ["KB/s", "MB/s", "GB/s", "TB/s"]
        var divisor = 1024.0
        for (index, unit) in units.enumerated() {
            let tenths = (bytesPerSecond / divisor * 10).rounded()
            if tenths < 10_000 || index == units.count - 1 {
                return oneDecimal(tenths: min(tenths, Double(Int64.max / 2))) + " " + unit
            }
            divisor *= 1024
        }
        preconditionFailure("the loop returns at the last unit")
    }

    /// Columns separated by two spaces, each padded to its widest cell; the first row is the header.
    ///
    /// The last column is not padded, so lines carry no trailing spaces. The header is bold when `style` is.
    package static func columns(_ rows: [[String]], style: TextStyle = .plain) -> String {
        guard let header = rows.first else { return "" }
        let widths = header.indices.map { column in
            rows.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.enumerated().map { index, row in
            var line = ""
            for (column, cell) in row.enumerated() {
                let isLast = column == row.count - 1
                line += index == 0 ? style.bold(cell) : cell
                if !isLast { line += String(repeating: " ", count: widths[column] - cell.count + 2) }
            }
            return line + "\n"
        }.joined()
    }

    /// Formats an integral number of tenths without Foundation's locale-dependent number formatting.
    private static func oneDecimal(tenths: Double) -> String {
        let tenths = Int64(tenths)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
