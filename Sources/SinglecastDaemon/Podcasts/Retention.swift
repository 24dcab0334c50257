import SinglecastSupport

/// Which downloaded episode files go, and why.
///
/// Pure, like ``EpisodePolicy``: handed the downloaded files, each podcast's rules and the time, it answers with
/// the deletions and when the next one falls due, so the daemon sleeps until then instead of checking on a timer.
/// Pinned files are never chosen, and neither is anything still downloading (only completed files are handed in).
package enum Retention {
    /// A downloaded episode file as retention sees it.
    package struct File: Sendable, Hashable {
        package var episodeID: Int64
        package var podcastID: Int64
        package var downloadID: Int64
        /// Published, else first seen (milliseconds since 1970): what "oldest" means.
        package var date: Int64
        package var playedAt: Int64?
        package var pinned: Bool
        package var size: Int64
        /// The listener asked for it: `keep` and `delete_older_than`, which choose among what the rules
        /// downloaded, neither count nor delete it, and `max_storage` never makes room with it while it is unplayed.
        /// Once played, it goes like any other.
        package var requested: Bool

        package init(
            episodeID: Int64,
            podcastID: Int64,
            downloadID: Int64,
            date: Int64,
            playedAt: Int64?,
            pinned: Bool,
            size: Int64,
            requested: Bool = false
        ) {
            self.requested = requested
            self.episodeID = episodeID
            self.podcastID = podcastID
            self.downloadID = downloadID
            self.date = date
            self.playedAt = playedAt
            self.pinned = pinned
            self.size = size
        }
    }

    /// One podcast's retention rules.
    package struct Rules: Sendable, Hashable {
        /// Downloaded episodes kept, newest first.
        package var keep: Int?
        package var deletePlayedAfter: Int64?
        package var deleteOlderThan: Int64?

        package init(keep: Int? = nil, deletePlayedAfter: Int64? = nil, deleteOlderThan: Int64? = nil) {
            self.keep = keep
            self.deletePlayedAfter = deletePlayedAfter
            self.deleteOlderThan = deleteOlderThan
        }
    }

    package enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// Beyond the newest `keep`.
        case beyondKeep(Int)
        /// Played longer ago than `delete_played_after`.
        case playedLongAgo(Int64)
        /// Older than `delete_older_than`.
        case olderThan(Int64)
        /// Over `max_storage`, oldest played first, then oldest unplayed.
        case overBudget(Int64)

        /// Short and stable, for logs, events and the episode's record.
        package var description: String {
            switch self {
            case .beyondKeep(let keep): "beyond the newest \(keep) kept"
            case .playedLongAgo(let delay): "played more than \(EpisodeRules.writtenDuration(milliseconds: delay)) ago"
            case .olderThan(let age): "older than \(EpisodeRules.writtenDuration(milliseconds: age))"
            case .overBudget(let bytes): "over max_storage \(Self.size(bytes))"
            }
        }

        /// `50G`, `512M`, `1536K`: the largest binary unit that writes the size exactly, as `max_storage` reads it.
        private static func size(_ bytes: Int64) -> String {
            for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] where bytes % (1 << shift) == 0 {
                return "\(bytes >> shift)\(unit)"
            }
            return "\(bytes)"
        }
    }

    package struct Deletion: Sendable, Hashable {
        package var file: File
        package var reason: Reason
    }

    package struct Plan: Sendable, Hashable {
        /// Files of singlecast's to empty from the Trash for `max_storage`, oldest first; they go before any episode.
        package var purges: [Trash.OwnFile] = []
        package var deletions: [Deletion]
        /// When a rule next lets go of a file that stays now, if one will.
        package var nextDue: Int64?
    }

    /// - Parameters:
    ///   - files: Every completed episode file.
    ///   - rules: Each podcast's rules; a podcast without an entry keeps everything (except over budget).
    ///   - maxStorage: The budget for every file singlecast downloaded, or `nil` for none.
    ///   - otherUsage: Bytes of downloaded files that are no episode's (a plain `enqueue`): they count towards the
    ///     budget, but retention never deletes them.
    ///   - trashed: What singlecast moved to the Trash and is still there: it counts towards the budget, and the
    ///     oldest of it is emptied first.
    package static func plan(
        files: [File],
        rules: [Int64: Rules],
        maxStorage: Int64?,
        otherUsage: Int64 = 0,
        trashed: [Trash.OwnFile] = [],
        now: Int64
    ) -> Plan {
        var purges: [Trash.OwnFile] = []
        var deletions: [Deletion] = []
        var chosen: Set<Int64> = []
        var nextDue: Int64?
        func due(_ time: Int64) { nextDue = min(nextDue ?? time, time) }
        func delete(_ file: File, _ reason: Reason) {
            guard !file.pinned, chosen.insert(file.episodeID).inserted else { return }
            deletions.append(Deletion(file: file, reason: reason))
        }

        let byPodcast = Dictionary(grouping: files, by: \.podcastID)
        for podcastID in byPodcast.keys.sorted() {
            guard let rules = rules[podcastID], let podcastFiles = byPodcast[podcastID] else { continue }
            let newestFirst = podcastFiles.sorted(by: newer)
            if let keep = rules.keep {
                for file in newestFirst.filter({ !$0.requested }).dropFirst(keep) { delete(file, .beyondKeep(keep)) }
            }
            for file in newestFirst where !file.pinned {
                // Saturating: a time or a delay near the end of Int64 overflowed here at every start.
                if let delay = rules.deletePlayedAfter, let playedAt = file.playedAt {
                    let at = playedAt.saturatingAdd(delay)
                    if at <= now { delete(file, .playedLongAgo(delay)) } else { due(at) }
                }
                if let age = rules.deleteOlderThan, !file.requested {
                    let at = file.date.saturatingAdd(age)
                    if at <= now { delete(file, .olderThan(age)) } else { due(at) }
                }
            }
        }

        if let maxStorage {
            // A download two episodes share is one file: counted once, and freed once both let go of it.
            var sizes: [Int64: Int64] = [:]
            var holders: [Int64: Int] = [:]
            for file in files {
                sizes[file.downloadID] = file.size
                holders[file.downloadID, default: 0] += 1
            }
            for deletion in deletions { holders[deletion.file.downloadID, default: 1] -= 1 }
            let held = sizes.filter { holders[$0.key, default: 0] > 0 }.values
            var used = (Array(held) + trashed.map(\.size)).reduce(otherUsage) { $0.saturatingAdd($1) }
            for file in trashed.sorted(by: { ($0.trashedAt, $0.path) < ($1.trashedAt, $1.path) })
            where used > maxStorage {
                purges.append(file)
                used -= file.size
            }
            if used > maxStorage {
                // An unplayed episode the listener asked for is never the room made for another.
                let remaining = files.filter {
                    !$0.pinned && !chosen.contains($0.episodeID) && !($0.requested && $0.playedAt == nil)
                }
                let played = remaining.filter { $0.playedAt != nil }.sorted(by: older)
                let unplayed = remaining.filter { $0.playedAt == nil }.sorted(by: older)
                for file in played + unplayed where used > maxStorage {
                    delete(file, .overBudget(maxStorage))
                    holders[file.downloadID, default: 1] -= 1
                    if holders[file.downloadID] == 0 { used -= file.size }
                }
            }
        }
        return Plan(purges: purges, deletions: deletions, nextDue: nextDue)
    }

    private static func newer(_ left: File, _ right: File) -> Bool {
        left.date != right.date ? left.date > right.date : left.episodeID > right.episodeID
    }

    private static func older(_ left: File, _ right: File) -> Bool { newer(right, left) }
}
