import SinglecastStore

/// Which of a podcast's episodes are downloaded and which downloaded files are kept.
///
/// Pure: it is handed the episodes and answers with ids, so every rule is tested without a store or a network.
/// A rule that decides whether one episode may be downloaded at all is one small ``EpisodeRule``.
package struct EpisodePolicy: Sendable {
    /// What is downloaded without being asked for.
    package enum Fetch: Sendable, Hashable {
        case off
        /// Every episode that appears in the feed from now on.
        case allNew
        /// The newest N episodes, whenever one of them is not downloaded.
        case latest(Int)
    }

    /// An episode as the policy sees it.
    package struct Candidate: Sendable, Hashable {
        package var id: Int64
        package var title: String
        package var enclosureURL: String?
        /// The episode has a download (live, or completed with its file).
        package var hasDownload: Bool

        package init(id: Int64, title: String, enclosureURL: String?, hasDownload: Bool) {
            self.id = id
            self.title = title
            self.enclosureURL = enclosureURL
            self.hasDownload = hasDownload
        }

        package init(_ record: EpisodeRecord) {
            self.init(
                id: record.id,
                title: record.title,
                enclosureURL: record.enclosureURL,
                hasDownload: record.downloadID != nil
            )
        }
    }

    /// Why a policy is refused.
    package enum Problem: Error, Equatable, Sendable {
        case negativeKeep(Int)
        /// Keeping fewer than `latest:N` downloads would delete the newest and download them again, for ever.
        case keepBelowLatest(keep: Int, latest: Int)
    }

    package var fetch: Fetch
    /// Downloaded episodes kept, newest first; `nil` keeps all.
    package var keep: Int?
    /// Every rule an episode must pass to be downloaded automatically.
    package var rules: [any EpisodeRule] = [HasDownloadableEnclosure()]

    package init(fetch: Fetch, keep: Int?) {
        self.fetch = fetch
        self.keep = keep
    }

    /// The policy stored for a podcast (`auto_download` and `keep` columns): one reading of the stored text.
    package init(_ podcast: PodcastRecord) {
        self.init(fetch: Fetch(stored: podcast.autoDownload) ?? .off, keep: podcast.keep)
    }

    /// Refuses contradictory settings before they are stored.
    package func validate() throws(Problem) {
        if let keep, keep < 0 { throw .negativeKeep(keep) }
        if case .latest(let count) = fetch, let keep, keep > 0, keep < count {
            throw .keepBelowLatest(keep: keep, latest: count)
        }
    }

    /// The episodes to queue now.
    ///
    /// - Parameters:
    ///   - newest: The podcast's newest episodes, newest first (at least `latest:N` of them).
    ///   - inserted: Episodes the refresh just found.
    ///   - initial: The policy was just set or the podcast subscribed: `latest:N` fills up at once, while
    ///     `all-new` only takes episodes that appear from now on.
    package func wanted(newest: [Candidate], inserted: [Candidate], initial: Bool) -> [Int64] {
        let chosen: [Candidate]
        switch fetch {
        case .off: chosen = []
        case .allNew: chosen = initial ? [] : inserted
        case .latest(let count): chosen = newest.prefix(count).filter { !$0.hasDownload }
        }
        return chosen.filter(admits).map(\.id)
    }

    /// Downloaded episodes beyond `keep`, to let go of: `downloaded` newest first.
    package func surplus(downloaded: [Int64]) -> [Int64] {
        guard let keep else { return [] }
        return Array(downloaded.dropFirst(keep))
    }

    /// Whether every rule lets the episode be downloaded automatically.
    package func admits(_ episode: Candidate) -> Bool { rules.allSatisfy { $0.admits(episode) } }
}

/// One rule about which episodes may be downloaded automatically.
package protocol EpisodeRule: Sendable {
    func admits(_ episode: EpisodePolicy.Candidate) -> Bool
}

/// A feed may name anything as an enclosure (`file:///etc/passwd`, `javascript:`); only http and https URLs with
/// a host are downloaded, so such an episode cannot hold up the others.
package struct HasDownloadableEnclosure: EpisodeRule {
    package init() {}

    package func admits(_ episode: EpisodePolicy.Candidate) -> Bool { HTTPURL.isValid(episode.enclosureURL) }
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
