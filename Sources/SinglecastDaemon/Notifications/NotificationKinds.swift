/// What the `notify` configuration key turns on: desktop notifications for completed downloads, new
/// episodes found by a refresh, and failed downloads.
package struct NotificationKinds: OptionSet, Hashable, Sendable {
    package let rawValue: Int

    package init(rawValue: Int) { self.rawValue = rawValue }

    package static let downloads = NotificationKinds(rawValue: 1 << 0)
    package static let episodes = NotificationKinds(rawValue: 1 << 1)
    package static let failures = NotificationKinds(rawValue: 1 << 2)

    /// The words of the `notify` key, in documentation order.
    package static let names: [(name: String, kind: NotificationKinds)] = [
        ("downloads", .downloads), ("episodes", .episodes), ("failures", .failures),
    ]

    /// Parses `downloads,episodes,failures` (any of them, in any order) or `off`.
    ///
    /// - Returns: the kinds, or `nil` when a word is unknown.
    package static func parse(_ value: String) -> NotificationKinds? {
        if ["", "off", "none"].contains(value.lowercased()) { return [] }
        var kinds: NotificationKinds = []
        for word in value.split(separator: ",") {
            let name = word.lowercased().filter { !$0.isWhitespace }
            guard let kind = names.first(where: { $0.name == name })?.kind else { return nil }
            kinds.insert(kind)
        }
        return kinds
    }
}
