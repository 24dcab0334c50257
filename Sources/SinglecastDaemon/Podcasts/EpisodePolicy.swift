import SinglecastStore
import SinglecastSupport

/// Which of a podcast's episodes are downloaded without being asked for, and which downloaded files are kept.
///
/// Pure: it is handed the episodes and answers with ids and reasons, so every rule is tested without a store or a
/// network. ``skip(_:now:)`` is the one place that decides whether an episode may be downloaded automatically, and
/// why not: auto-download, `episodes` and `rules --dry-run` all ask it.
package struct EpisodePolicy: Sendable {
    /// What is downloaded without being asked for.
    package enum Fetch: Sendable, Hashable {
        case off
        /// Every episode that appears in the feed from now on.
        case allNew
        /// The newest N episodes the rules let through, whenever one of them is not downloaded.
        case latest(Int)
    }

    /// An episode as the policy sees it.
    package struct Candidate: Sendable, Hashable {
        package var id: Int64
        package var title: String
        package var enclosureURL: String?
        /// The episode has a download (live, or completed with its file).
        package var hasDownload: Bool
        package var durationSeconds: Int?
        /// Published, else first seen (milliseconds since 1970).
        package var date: Int64
        package var episodeType: String?
        package var played: Bool
        /// Why the episode's file was deleted, if it was: it is not downloaded again by itself.
        package var fileDeletedReason: String?

        package init(
            id: Int64,
            title: String,
            enclosureURL: String?,
            hasDownload: Bool,
            durationSeconds: Int? = nil,
            date: Int64 = 0,
            episodeType: String? = nil,
            played: Bool = false,
            fileDeletedReason: String? = nil
        ) {
            self.id = id
            self.title = title
            self.enclosureURL = enclosureURL
            self.hasDownload = hasDownload
            self.durationSeconds = durationSeconds
            self.date = date
            self.episodeType = episodeType
            self.played = played
            self.fileDeletedReason = fileDeletedReason
        }

        package init(_ record: EpisodeRecord) {
            self.init(
                id: record.id,
                title: record.title,
                enclosureURL: record.enclosureURL,
                hasDownload: record.downloadID != nil,
                durationSeconds: record.durationSeconds,
                date: record.publishedAt ?? record.firstSeenAt,
                episodeType: record.episodeType,
                played: record.playedAt != nil,
                fileDeletedReason: record.fileDeletedAt != nil ? (record.fileDeletedReason ?? "deleted") : nil
            )
        }
    }

    /// Why an episode is not downloaded automatically.
    package enum Skip: Sendable, Hashable, CustomStringConvertible {
        /// A feed may name anything as an enclosure (`file:///etc/passwd`, `javascript:`); only http and https
        /// URLs with a host are downloaded.
        case noEnclosure
        /// `require_https` is on and the enclosure is plain http: the queue would refuse it.
        case plainHTTP
        case titleExcludes(TitlePattern)
        case titleLacks(TitlePattern)
        /// The title expression gave up on this title (a PCRE2 limit): neither rule can vouch for it.
        case titleUndecided(TitlePattern, String)
        case shorterThan(Int)
        case longerThan(Int)
        case olderThan(Int64)
        case episodeType(String)
        case played
        case fileDeleted(String)

        package var description: String {
            switch self {
            case .noEnclosure: "no http or https enclosure"
            case .plainHTTP: "plain http enclosure, and require_https is on"
            case .titleExcludes(let pattern): "title excludes \(pattern)"
            case .titleLacks(let pattern): "title does not include \(pattern)"
            case .titleUndecided(let pattern, let reason): "title pattern \(pattern) failed on this title: \(reason)"
            case .shorterThan(let seconds):
                "shorter than \(EpisodeRules.writtenDuration(milliseconds: Int64(seconds).saturatingMultiply(1000)))"
            case .longerThan(let seconds):
                "longer than \(EpisodeRules.writtenDuration(milliseconds: Int64(seconds).saturatingMultiply(1000)))"
            case .olderThan(let age): "older than \(EpisodeRules.writtenDuration(milliseconds: age))"
            case .episodeType(let type): "episode type \(type)"
            case .played: "played"
            case .fileDeleted(let reason): "file deleted (\(reason))"
            }
        }
    }

    /// Why a policy is refused.
    package enum Problem: Error, Equatable, Sendable {
        case negativeKeep(Int)
        /// Keeping fewer than `latest:N` downloads would delete the newest and download them again, for ever.
        case keepBelowLatest(keep: Int, latest: Int)
        case rules(EpisodeRules.Problem)
    }

    package var fetch: Fetch
    /// Downloaded episodes kept, newest first; `nil` keeps all.
    package var keep: Int?
    /// The podcast's rules over the configured defaults.
    package var rules: EpisodeRules
    /// `require_https`: plain http enclosures are skipped, not queued (the queue would refuse them).
    package var requireHTTPS = false

    package init(fetch: Fetch, keep: Int?, rules: EpisodeRules = EpisodeRules()) {
        self.fetch = fetch
        self.keep = keep
        self.rules = rules
    }

    /// The policy stored for a podcast (`auto_download`, `keep` and `rules` columns) over the configured rules.
    package init(_ podcast: PodcastRecord, defaults: EpisodeRules) {
        self.init(
            fetch: Fetch(stored: podcast.autoDownload) ?? .off,
            keep: podcast.keep,
            rules: EpisodeRules(stored: podcast.rules).over(defaults)
        )
    }

    /// Refuses contradictory settings before they are stored.
    package func validate() throws(Problem) {
        if let keep, keep < 0 { throw .negativeKeep(keep) }
        if case .latest(let count) = fetch, let keep, keep > 0, keep < count {
            throw .keepBelowLatest(keep: keep, latest: count)
        }
        do { try rules.validate() } catch { throw .rules(error) }
    }

    /// The episodes to queue now.
    ///
    /// - Parameters:
    ///   - newest: The podcast's newest episodes, newest first (`latest:N` takes the first N the rules let
    ///     through, so the caller hands in more when many are skipped; see ``newestNeeded(among:)``).
    ///   - inserted: Episodes the refresh just found.
    ///   - initial: The policy was just set or the podcast subscribed: `latest:N` fills up at once, while
    ///     `all-new` only takes episodes that appear from now on.
    package func wanted(newest: [Candidate], inserted: [Candidate], initial: Bool, now: Int64) -> [Int64] {
        switch fetch {
        case .off: return []
        case .allNew:
            return initial ? [] : inserted.filter { !$0.hasDownload && skip($0, now: now) == nil }.map(\.id)
        case .latest(let count):
            return newestCounted(newest, count: count, now: now)
                .filter { !$0.hasDownload && skip($0, now: now) == nil }.map(\.id)
        }
    }

    /// `latest:N`'s N: the newest episodes the rules let through. One played, or whose file was deleted, keeps its
    /// place (it is not fetched again, and nothing older is fetched in its stead); one the rules exclude has none,
    /// downloaded or not.
    private func newestCounted(_ newest: [Candidate], count: Int, now: Int64) -> ArraySlice<Candidate> {
        newest.filter { ruleSkip($0, now: now) == nil }.prefix(count)
    }

    /// Whether `newest` (newest first, all that were read) holds `latest:N`'s choice, or more must be read.
    package func hasEnough(_ newest: [Candidate], readAll: Bool, now: Int64) -> Bool {
        guard case .latest(let count) = fetch, !readAll else { return true }
        return newestCounted(newest, count: count, now: now).count >= count
    }

    /// Why the rules do not let `episode` be downloaded automatically, or `nil` when they do. The first rule that
    /// refuses it is named.
    package func skip(_ episode: Candidate, now: Int64) -> Skip? {
        if let reason = episode.fileDeletedReason { return .fileDeleted(reason) }
        if episode.played { return .played }
        return ruleSkip(episode, now: now)
    }

    /// What the rules say of the episode itself, whatever the listener did with it.
    private func ruleSkip(_ episode: Candidate, now: Int64) -> Skip? {
        guard let enclosure = episode.enclosureURL, HTTPURL.isValid(enclosure) else { return .noEnclosure }
        if requireHTTPS && !HTTPURL.isHTTPS(enclosure) { return .plainHTTP }
        if let pattern = rules.titleExclude {
            switch pattern.match(episode.title) {
            case .matched: return .titleExcludes(pattern)
            case .failed(let reason): return .titleUndecided(pattern, reason)
            case .notMatched: break
            }
        }
        if let pattern = rules.titleInclude {
            switch pattern.match(episode.title) {
            case .matched: break
            case .failed(let reason): return .titleUndecided(pattern, reason)
            case .notMatched: return .titleLacks(pattern)
            }
        }
        if let duration = episode.durationSeconds {
            if let minimum = rules.minDuration, duration < minimum { return .shorterThan(minimum) }
            if let maximum = rules.maxDuration, duration > maximum { return .longerThan(maximum) }
        }
        // What delete_older_than would delete at once is not downloaded either. No array of the two: this runs for
        // every episode, and an array is an allocation each time.
        let age =
            switch (rules.maxAge, rules.deleteOlderThan) {
            case (let maximum?, let older?): min(maximum, older)
            case (let maximum?, nil): maximum
            case (nil, let older): older
            }
        // Saturating: a date or an age near the end of Int64 (one stored before ages had a maximum) overflowed here
        // at every start.
        if let age, episode.date.saturatingAdd(age) < now { return .olderThan(age) }
        if let types = rules.episodeTypes {
            let type = episode.episodeType ?? "full"
            if !types.contains(where: { $0.rawValue == type }) { return .episodeType(type) }
        }
        return nil
    }

    /// The retention rules for ``Retention``.
    package var retention: Retention.Rules {
        Retention.Rules(keep: keep, deletePlayedAfter: rules.deletePlayedAfter, deleteOlderThan: rules.deleteOlderThan)
    }
}

extension EpisodePolicy {
    /// Skips as text, each distinct one written once: a podcast's thousands of skipped episodes share a handful of
    /// reasons, and writing each anew was a tenth of the time `rules` took over 5,000 episodes.
    package struct SkipTexts {
        private var written: [Skip: String] = [:]

        package init() {}

        package mutating func text(_ skip: Skip) -> String {
            if let text = written[skip] { return text }
            let text = skip.description
            written[skip] = text
            return text
        }
    }
}

extension EpisodePolicy.Fetch {
    /// Reads the stored form: `off`, `all-new` or `latest:N`.
    package init?(stored text: String) {
        switch text {
        case "off": self = .off
        case "all-new": self = .allNew
        default:
            guard text.hasPrefix("latest:"), let count = Int(text.dropFirst("latest:".count)), count >= 1 else {
                return nil
            }
            self = .latest(count)
        }
    }

    /// The stored form, which ``init(stored:)`` reads.
    package var stored: String {
        switch self {
        case .off: "off"
        case .allNew: "all-new"
        case .latest(let count): "latest:\(count)"
        }
    }
}
