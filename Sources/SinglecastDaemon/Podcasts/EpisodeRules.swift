import SinglecastSupport

/// The rules that choose which episodes are downloaded without being asked for and how long their files stay.
///
/// One syntax for all of them, the configuration file's (`title_exclude = trailer`, `max_age = 30d`): the
/// configuration sets defaults, `set` sets a podcast's own, which win rule by rule. A podcast's own rules are
/// stored in that same written form, so the store, the configuration and the protocol share one reader.
package struct EpisodeRules: Sendable, Hashable {
    /// Titles must contain this (case-insensitive), or match it when written `/…/`.
    package var titleInclude: TitlePattern?
    /// Titles must not contain (or match) this.
    package var titleExclude: TitlePattern?
    /// Shortest and longest `itunes:duration`, in seconds; an episode without a duration passes both.
    package var minDuration: Int?
    package var maxDuration: Int?
    /// Episodes published (else first seen) longer ago than this, in milliseconds, are not downloaded.
    package var maxAge: Int64?
    /// The `itunes:episodeType`s downloaded; `nil` takes all. An episode without a type counts as `full`.
    package var episodeTypes: Set<EpisodeType>?
    /// A played episode's file goes this long (milliseconds) after it was played.
    package var deletePlayedAfter: Int64?
    /// An episode's file goes once the episode is older than this (milliseconds).
    package var deleteOlderThan: Int64?
    /// Rules turned off (written `none`): a podcast's own `none` keeps the configured rule from applying to it.
    package var turnedOff: Set<Key> = []

    package init() {}

    package enum EpisodeType: String, Sendable, Hashable, CaseIterable, Comparable {
        case full, trailer, bonus

        package static func < (left: EpisodeType, right: EpisodeType) -> Bool {
            allCases.firstIndex(of: left)! < allCases.firstIndex(of: right)!
        }
    }

    /// Each rule's name, in the configuration and in `set`.
    package enum Key: String, Sendable, Hashable, CaseIterable {
        case titleInclude = "title_include"
        case titleExclude = "title_exclude"
        case minDuration = "min_duration"
        case maxDuration = "max_duration"
        case maxAge = "max_age"
        case episodeTypes = "episode_types"
        case deletePlayedAfter = "delete_played_after"
        case deleteOlderThan = "delete_older_than"
    }

    /// A value that is not a rule, or rules that contradict each other.
    package struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        package var message: String
        package var key: Key?

        package var description: String { message }

        package init(message: String, key: Key?) {
            self.message = message
            self.key = key
        }
    }

    /// Sets one rule from its written value; an empty value removes it (a podcast's: the configured one applies
    /// again), `none` turns it off (a podcast's: the configured one does not apply to it).
    package mutating func set(_ key: Key, to value: String) throws(Problem) {
        let value = value.trimmingWhitespace()
        turnedOff.remove(key)
        if value.lowercased() == "none" {
            try set(key, to: "")
            turnedOff.insert(key)
            return
        }
        func fail(_ expected: String) -> Problem {
            Problem(message: "\(key.rawValue) must be \(expected); got '\(value)'", key: key)
        }
        func duration(_ expected: String) throws(Problem) -> Int64? {
            guard !value.isEmpty else { return nil }
            let duration: Duration
            do {
                duration = try readDuration(value)
            } catch .longerThanMaximum {
                throw Problem(
                    message: "\(key.rawValue) must be at most \(longestDurationText); got '\(value)'",
                    key: key
                )
            } catch {
                throw fail(expected)
            }
            guard duration > .zero else { throw fail(expected) }
            // At most longestDuration: the milliseconds fit, and leave room to add any date.
            return duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
        switch key {
        case .titleInclude, .titleExclude:
            var pattern: TitlePattern?
            if !value.isEmpty {
                do {
                    pattern = try TitlePattern(value)
                } catch {
                    throw Problem(message: "\(key.rawValue) '\(value)' is not a usable pattern: \(error)", key: key)
                }
            }
            if key == .titleInclude { titleInclude = pattern } else { titleExclude = pattern }
        case .minDuration:
            minDuration = try duration("a duration such as 10m or 90s, or empty").map { Int($0 / 1000) }
        case .maxDuration:
            maxDuration = try duration("a duration such as 2h or 90m, or empty").map { Int($0 / 1000) }
        case .maxAge: maxAge = try duration("an age such as 30d, 2w or 12h, or empty")
        case .episodeTypes:
            guard !value.isEmpty else {
                episodeTypes = nil
                return
            }
            var types: Set<EpisodeType> = []
            for name in value.split(separator: ",") {
                guard let type = EpisodeType(rawValue: name.trimmingWhitespace().lowercased()) else {
                    throw fail("a comma-separated list of full, trailer and bonus")
                }
                types.insert(type)
            }
            episodeTypes = types
        case .deletePlayedAfter: deletePlayedAfter = try duration("a delay such as 7d or 12h, or empty")
        case .deleteOlderThan: deleteOlderThan = try duration("an age such as 90d or 4w, or empty")
        }
    }

    /// A rule's written value, `nil` when it is not set.
    package func value(of key: Key) -> String? {
        if turnedOff.contains(key) { return "none" }
        return switch key {
        case .titleInclude: titleInclude?.text
        case .titleExclude: titleExclude?.text
        case .minDuration: minDuration.map { Self.writtenDuration(milliseconds: Int64($0).saturatingMultiply(1000)) }
        case .maxDuration: maxDuration.map { Self.writtenDuration(milliseconds: Int64($0).saturatingMultiply(1000)) }
        case .maxAge: maxAge.map(Self.writtenDuration(milliseconds:))
        case .episodeTypes: episodeTypes.map { $0.sorted().map(\.rawValue).joined(separator: ",") }
        case .deletePlayedAfter: deletePlayedAfter.map(Self.writtenDuration(milliseconds:))
        case .deleteOlderThan: deleteOlderThan.map(Self.writtenDuration(milliseconds:))
        }
    }

    /// The rules that are set, by key.
    package var values: [Key: String] {
        var values: [Key: String] = [:]
        for key in Key.allCases { values[key] = value(of: key) }
        return values
    }

    package var isEmpty: Bool { values.isEmpty }

    /// These rules, and `defaults`' where these set none: a podcast's own rule wins, rule by rule, and one it
    /// turned off keeps the default from applying.
    package func over(_ defaults: EpisodeRules) -> EpisodeRules {
        var merged = self
        func pick<Value>(_ key: Key, _ own: Value?, _ fallback: Value?) -> Value? {
            turnedOff.contains(key) ? nil : own ?? fallback
        }
        merged.titleInclude = pick(.titleInclude, titleInclude, defaults.titleInclude)
        merged.titleExclude = pick(.titleExclude, titleExclude, defaults.titleExclude)
        merged.minDuration = pick(.minDuration, minDuration, defaults.minDuration)
        merged.maxDuration = pick(.maxDuration, maxDuration, defaults.maxDuration)
        merged.maxAge = pick(.maxAge, maxAge, defaults.maxAge)
        merged.episodeTypes = pick(.episodeTypes, episodeTypes, defaults.episodeTypes)
        merged.deletePlayedAfter = pick(.deletePlayedAfter, deletePlayedAfter, defaults.deletePlayedAfter)
        merged.deleteOlderThan = pick(.deleteOlderThan, deleteOlderThan, defaults.deleteOlderThan)
        merged.turnedOff = []
        return merged
    }

    /// Refuses rules that cannot all hold.
    package func validate() throws(Problem) {
        if let minDuration, let maxDuration, minDuration > maxDuration {
            throw Problem(
                message: "min_duration \(value(of: .minDuration) ?? "") is longer than max_duration "
                    + "\(value(of: .maxDuration) ?? ""): no episode could be downloaded",
                key: .minDuration
            )
        }
        if let maxAge, let deleteOlderThan, deleteOlderThan < maxAge {
            throw Problem(
                message: "delete_older_than \(value(of: .deleteOlderThan) ?? "") is shorter than max_age "
                    + "\(value(of: .maxAge) ?? ""): episodes would be downloaded and deleted at once",
                key: .deleteOlderThan
            )
        }
        if let episodeTypes, episodeTypes.isEmpty {
            throw Problem(message: "episode_types names no type", key: .episodeTypes)
        }
    }

    /// The stored form: one `key = value` line per rule that is set.
    package var stored: String? {
        let lines = Key.allCases.compactMap { key in value(of: key).map { "\(key.rawValue) = \($0)" } }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// Reads the stored form; a line that no longer reads (a key since removed) is left out rather than losing the
    /// podcast.
    package init(stored: String?) {
        self.init()
        for line in (stored ?? "").split(separator: "\n") {
            guard let equals = line.firstIndex(of: "="),
                let key = Key(rawValue: line[..<equals].trimmingWhitespace())
            else { continue }
            try? set(key, to: String(line[line.index(after: equals)...]))
        }
    }

    /// `30d`, `12h`, `90m`, `45s`: the largest unit that writes the duration exactly (weeks read back as days,
    /// as people write them: `7d`, `14d`).
    package static func writtenDuration(milliseconds: Int64) -> String {
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000)]
        where milliseconds % size == 0 {
            return "\(milliseconds / size)\(unit)"
        }
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }
}
