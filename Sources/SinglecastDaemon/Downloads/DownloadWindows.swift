import SinglecastSupport

/// One span of local wall-clock time in which downloads may run, such as `01:00-06:00`.
///
/// The end is excluded, and a span whose end comes before its start crosses midnight (`22:00-02:00`).
package struct DownloadWindow: Hashable, Sendable, CustomStringConvertible {
    /// Minutes after local midnight, 0..<1440.
    package var start: Int
    package var end: Int

    package init(start: Int, end: Int) {
        precondition((0..<1440).contains(start) && (0..<1440).contains(end) && start != end, "not a window")
        self.start = start
        self.end = end
    }

    /// Whether the minute of the day `minute` (0..<1440) lies in the window.
    package func contains(minute: Int) -> Bool {
        start < end ? (start..<end).contains(minute) : minute >= start || minute < end
    }

    /// `01:00-06:00`.
    package var description: String { Self.clock(start) + "-" + Self.clock(end) }

    /// `HH:MM` of a minute of the day.
    package static func clock(_ minute: Int) -> String {
        let hours = minute / 60
        let minutes = minute % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }

    /// Reads `HH:MM-HH:MM`.
    ///
    /// - Returns: The window, or why the text is not one (a clause for the configuration error).
    package static func parse(_ text: String) -> Result<DownloadWindow, Problem> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .failure(Problem("'\(text)' is not a range such as 01:00-06:00")) }
        guard let start = minute(parts[0]) else {
            return .failure(Problem("'\(parts[0])' in '\(text)' is not a time from 00:00 to 23:59"))
        }
        guard let end = minute(parts[1]) else {
            return .failure(Problem("'\(parts[1])' in '\(text)' is not a time from 00:00 to 23:59"))
        }
        guard start != end else {
            return .failure(
                Problem("'\(text)' starts and ends at the same time; to download at any time, use always")
            )
        }
        return .success(DownloadWindow(start: start, end: end))
    }

    /// `H:MM` or `HH:MM` (24-hour) as minutes after midnight.
    private static func minute(_ text: Substring) -> Int? {
        let fields = text.trimmingWhitespace().split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2, (1...2).contains(fields[0].count), fields[1].count == 2,
            fields.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let hours = Int(fields[0]), let minutes = Int(fields[1]), hours < 24, minutes < 60
        else { return nil }
        return hours * 60 + minutes
    }

    package struct Problem: Error, Hashable, Sendable {
        package var message: String
        init(_ message: String) { self.message = message }
    }
}

/// The configured download windows (`download_window`): when downloads may run. None means always.
///
/// Pure: the local time comes from a ``LocalTimeZone``, so tests move a clock and choose the zone (daylight saving
/// changes included) by hand.
package struct DownloadWindows: Hashable, Sendable, CustomStringConvertible {
    package var windows: [DownloadWindow]

    package init(_ windows: [DownloadWindow] = []) { self.windows = windows }

    /// Reads a comma-separated list such as `01:00-06:00, 13:00-14:00`, or `always` (no windows).
    package static func parse(_ text: String) -> Result<DownloadWindows, DownloadWindow.Problem> {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !text.trimmingWhitespace().isEmpty else {
            return .failure(.init("it is empty; give ranges such as 01:00-06:00, or always"))
        }
        if text.trimmingWhitespace().lowercased() == "always" { return .success(DownloadWindows()) }
        var windows: [DownloadWindow] = []
        for item in items {
            switch DownloadWindow.parse(String(item.trimmingWhitespace())) {
            case .success(let window): windows.append(window)
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(DownloadWindows(windows))
    }

    /// `01:00-06:00, 22:00-23:00`, or `always`.
    package var description: String {
        windows.isEmpty ? "always" : windows.map(\.description).joined(separator: ", ")
    }

    /// Whether downloads may run at `unixSeconds` in `zone`.
    package func isOpen(at unixSeconds: Int64, in zone: LocalTimeZone) -> Bool {
        guard !windows.isEmpty else { return true }
        let minute = Self.secondOfDay(unixSeconds, in: zone) / 60
        return windows.contains { $0.contains(minute: minute) }
    }

    /// The first instant after `unixSeconds` at which ``isOpen(at:in:)`` changes, in Unix seconds; `nil` when it
    /// does not change within two days (no windows, or windows covering the whole day).
    ///
    /// Walks local minute boundaries, asking the zone at each, instead of computing dates: a daylight saving change
    /// (a minute that repeats or never happens) then only means that a boundary comes later or earlier, never a
    /// wrong answer or a loop. Every step moves forward by 1 to 60 s, and there are at most ~3000 of them.
    package func nextChange(after unixSeconds: Int64, in zone: LocalTimeZone) -> Int64? {
        guard !windows.isEmpty else { return nil }
        let open = isOpen(at: unixSeconds, in: zone)
        var instant = unixSeconds
        let limit = unixSeconds + 2 * 86_400 + 3600
        while instant < limit {
            instant += Int64(60 - Self.secondOfDay(instant, in: zone) % 60)
            if isOpen(at: instant, in: zone) != open { return instant }
        }
        return nil
    }

    /// Seconds after local midnight, 0..<86400.
    private static func secondOfDay(_ unixSeconds: Int64, in zone: LocalTimeZone) -> Int {
        let local = unixSeconds + Int64(zone.secondsFromUTC(at: unixSeconds))
        let second = local % 86_400
        return Int(second < 0 ? second + 86_400 : second)
    }
}
