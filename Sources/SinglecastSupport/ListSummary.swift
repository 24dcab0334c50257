/// Long lists and long titles as messages (not tables) show them: the first few items, then `… and 4,990 more`;
/// a title cut to a number of columns with `…`.
package enum ListSummary {
    /// How many items a message lists before it summarises the rest.
    package static let shownItems = 10
    /// The widest a title quoted in a message gets, in columns.
    package static let titleColumns = 80

    /// `3, 4, 12`, or `1, 2, …, 10, … and 4,990 more` past `limit` items.
    package static func list(_ items: some Collection<String>, limit: Int = shownItems) -> String {
        let shown = items.prefix(limit).joined(separator: ", ")
        guard items.count > limit else { return shown }
        return shown + ", … and \(grouped(items.count - limit)) more"
    }

    /// ``list(_:limit:)`` of ids.
    package static func ids(_ ids: some Collection<Int64>, limit: Int = shownItems) -> String {
        list(ids.lazy.map(String.init), limit: limit)
    }

    /// `title` cut by display width to ``titleColumns`` (``DisplayWidth/truncated(_:to:)``).
    package static func title(_ title: String, columns: Int = titleColumns) -> String {
        DisplayWidth.truncated(title, to: columns)
    }

    /// `1 episode`, `0 episodes`, `4,990 episodes`: a count with its noun, for messages and log lines instead of
    /// `episode(s)`.
    package static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(grouped(value)) \(value == 1 ? singular : plural ?? singular + "s")"
    }

    /// `4,990`, `1,234,567`, `-12`: a whole number with a comma between each group of three digits, the same in
    /// every locale (messages are English).
    package static func grouped(_ value: some BinaryInteger) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }
}
