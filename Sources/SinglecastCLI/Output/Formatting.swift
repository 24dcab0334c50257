import SinglecastSupport

/// Pure functions that turn numbers into the text people read.
package enum Formatting {
    /// A decimal (SI) size with one decimal place: `0 B`, `512 B`, `1.0 kB`, `12.4 MB`, `1.1 GB`.
    ///
    /// Decimal units match what `ls -h --si`, GNOME and macOS show; the value is rounded half up, and a
    /// result that would read `1000.0` moves to the next unit.
    package static func byteCount(_ bytes: Int64) -> String {
        if bytes < 0 { return "-" + byteCount(bytes == .min ? .max : -bytes) }
        if bytes < 1000 { return "\(bytes) B" }
        return decimal(Double(bytes), units: ["kB", "MB", "GB", "TB", "PB", "EB"])
    }

    /// Speeds below one byte per second are what is left of a decaying average once bytes stop arriving:
    /// they read as `0 B/s`, and a download going that slowly as stalled.
    package static let minimumRate = 1.0

    /// A transfer rate in the same decimal (SI) units as ``byteCount(_:)``: `512 B/s`, `500.0 kB/s`, `2.1 MB/s`.
    ///
    /// Anything below ``minimumRate``, negative or not a finite number reads `0 B/s`.
    package static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond >= minimumRate else { return "0 B/s" }
        let whole = bytesPerSecond.rounded()
        if whole < 1000 { return "\(wholeNumber(whole)) B/s" }
        return decimal(bytesPerSecond, units: ["kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"])
    }

    /// `value` in the largest of `units` (each 1000 times the one before, the first 1000) that keeps it below
    /// `1000.0`, with one decimal place; the last unit takes anything larger.
    private static func decimal(_ value: Double, units: [String]) -> String {
        var divisor = 1000.0
        for (index, unit) in units.enumerated() {
            let tenths = (value / divisor * 10).rounded()
            if tenths < 10_000 || index == units.count - 1 {
                return oneDecimal(tenths: tenths) + " " + unit
            }
            divisor *= 1000
        }
        preconditionFailure("the loop returns at the last unit")
    }

    /// `value` without its fraction, clamped to `Int64`: the daemon's numbers can be huge, infinite or NaN
    /// (a stalled download's ETA grows towards infinity), and `Int64(_:)` traps on those. NaN becomes 0.
    ///
    /// Every conversion of a reported number to an integer goes through here.
    package static func wholeNumber(_ value: Double) -> Int64 {
        if value.isNaN { return 0 }
        if value >= 0x1p63 { return .max }
        if value < -0x1p63 { return .min }
        return Int64(value)
    }

    /// A duration such as `45s`, `7m 3s`, `2h`, `3h 2m` or `2d 3h` (``DurationText``, which the daemon's log shares):
    /// the one way every command shows a duration.
    package static func duration(seconds: Double) -> String {
        DurationText.text(seconds: seconds)
    }

    /// Milliseconds with one decimal place, for round-trip times: `0.3 ms`, `12.0 ms`.
    package static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return oneDecimal(tenths: (milliseconds * 10).rounded()) + " ms"
    }

    /// `1 thing`, `2 things`, `4,990 things` (``ListSummary/count(_:_:_:)``, which the daemon's log shares).
    package static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        ListSummary.count(value, singular, plural)
    }

    /// Two columns: labels left-aligned and padded to the longest label plus two spaces.
    ///
    /// Padding is computed on the plain label so bold escape codes do not shift the second column. Values come from
    /// the daemon and feeds, so their control characters are shown escaped (``TerminalText/escaped(_:)``).
    package static func table(_ rows: [(label: String, value: String)], style: TextStyle = .plain) -> String {
        let width = rows.map { DisplayWidth.of($0.label) }.max() ?? 0
        return rows.map { row in
            let padding = String(repeating: " ", count: width - DisplayWidth.of(row.label) + 2)
            return style.bold(row.label) + padding + TerminalText.escaped(row.value) + "\n"
        }.joined()
    }

    /// The widest a table cell gets, in terminal columns; a longer one (a 100,000-character title) is cut with `…`.
    /// `show` and `--json` keep the whole text.
    package static let maximumCellWidth = 60

    /// `text` with its control characters shown escaped (``TerminalText/escaped(_:)``: a cell may hold a feed's
    /// title), then cut by display width to ``maximumCellWidth`` columns, the last one `…`, when it is wider
    /// (``DisplayWidth/truncated(_:to:)``: never inside a character).
    package static func cell(_ text: String) -> String {
        let text = TerminalText.escaped(text)
        // Short enough in bytes is narrow enough: no character takes more columns than bytes.
        guard text.utf8.count > maximumCellWidth else { return text }
        return DisplayWidth.truncated(text, to: maximumCellWidth)
    }

    /// Columns separated by two spaces, each padded to its widest cell (cells cut by ``cell(_:)``); the first
    /// row is the header.
    ///
    /// The last column is not padded, so lines carry no trailing spaces. The header is bold when `style` is.
    /// Each cell is measured once: counting characters is most of the work for a list of 100,000 episodes.
    package static func columns(_ rows: [[String]], style: TextStyle = .plain) -> String {
        guard let header = rows.first else { return "" }
        let cells = rows.map { $0.map(cell) }
        let counts = cells.map { $0.map(width) }
        var widths = [Int](repeating: 0, count: header.count)
        for row in counts {
            for (column, count) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], count)
            }
        }
        // Bytes, not String appends: 100,000 rows of five cells are half a million appends.
        var text: [UInt8] = []
        text.reserveCapacity(counts.reduce(0) { $0 + $1.reduce(2 * $1.count, +) } + cells.count * 8)
        for (index, row) in cells.enumerated() {
            for (column, cell) in row.enumerated() {
                text.append(contentsOf: (index == 0 ? style.bold(cell) : cell).utf8)
                if column < row.count - 1 {
                    let width = column < widths.count ? widths[column] : 0
                    text.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - counts[index][column] + 2))
                }
            }
            text.append(UInt8(ascii: "\n"))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A cell's width in terminal columns (``DisplayWidth``), so CJK and emoji titles line up.
    private static func width(_ text: String) -> Int {
        DisplayWidth.of(text)
    }

    /// Formats an integral number of tenths without Foundation's locale-dependent number formatting.
    private static func oneDecimal(tenths: Double) -> String {
        let tenths = wholeNumber(tenths)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
