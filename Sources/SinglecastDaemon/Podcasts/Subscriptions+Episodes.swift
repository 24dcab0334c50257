import CPosix
import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// An episode as `episodes` and `inbox` list it, with its download as the queue shows it.
package struct ListedEpisode: Sendable, Hashable {
    package var record: EpisodeRecord
    package var download: DownloadSnapshot?
    /// Why the podcast's rules do not download it, for an episode without a download.
    package var skipped: String?
    /// Its chapters and transcript files; read only for `episode`.
    package var sidecars: [EpisodeSidecar]? = nil
}

/// What `episodes` lists: the podcast, and its episodes newest first.
package struct EpisodeListing: Sendable, Hashable {
    package var podcast: PodcastSummary
    package var episodes: [ListedEpisode]
}

/// One page of `podcasts`: the podcasts in id order, and the `after` of the next page when more follow.
package struct PodcastListing: Sendable, Hashable {
    package var podcasts: [PodcastSummary]
    package var next: Int64?
}

/// What `inbox` lists: new episodes of every podcast, newest first, and the podcasts they belong to.
package struct InboxListing: Sendable, Hashable {
    package var episodes: [ListedEpisode]
    package var podcasts: [PodcastSummary]
}

/// Episodes and their downloads: enqueue (placed by ``EpisodeEnqueuePlan``), delete, redownload and inbox, and
/// letting go of downloads that no other episode shares.
extension Subscriptions {
    /// What became of the files of episodes that let go of their downloads.
    package struct LetGo: Sendable {
        package var deleted: [String] = []
        /// Files another episode still has.
        package var kept: [String] = []
        /// Where deleted files went in the Trash, by their old path.
        package var trashed: [String: String] = [:]
        /// Episodes whose file the disposal refused, with why: they keep it, and their download.
        package var refused: [Int64: String] = [:]
    }

    /// Episodes let go of their downloads: a download no other episode points at is cancelled (an unfinished one)
    /// or forgotten with its file deleted (a completed one); a shared one stays for the other episodes. The episodes
    /// are marked as having had their file deleted for `reason`, so the policies do not download them again.
    func letGo(_ episodes: [EpisodeRecord], reason: String) async throws -> LetGo {
        let downloads = episodes.compactMap(\.downloadID)
        let owned = try await ownDownloads(downloads, leaving: episodes.map(\.id))
        let shared = Set(downloads).subtracting(owned)
        var outcome = LetGo()
        outcome.kept = await queue.infos(Array(shared)).values.filter { $0.state == .completed }.map(\.file).sorted()
        let episodeOf = Dictionary(episodes.compactMap { e in e.downloadID.map { ($0, e.id) } }) { first, _ in first }
        let discarded = try await queue.discard(owned, deleteFiles: true, reason: reason, episodes: episodeOf)
        await disposeSidecars(ofDownloads: owned.filter { discarded.refused[$0] == nil })
        for file in discarded.deleted {
            outcome.deleted.append(file.path)
            if let trashed = file.trashedTo { outcome.trashed[file.path] = trashed }
        }
        for episode in episodes {
            if let why = episode.downloadID.flatMap({ discarded.refused[$0] }) { outcome.refused[episode.id] = why }
        }
        episodesWritten()
        defer { episodesWritten() }
        do {
            try await store.releaseEpisodeFiles(
                episodes.filter { outcome.refused[$0.id] == nil }.compactMap { episode in
                    episode.downloadID.map { (episode.id, $0) }
                },
                at: now(),
                reason: reason
            )
        } catch {
            throw PodcastError.store("cannot unlink the episodes from their downloads: \(error)")
        }
        return outcome
    }

    /// `delete`: the episodes' files go (unless another episode has them), and their downloads with them.
    ///
    /// - Returns: The episodes that had a download, and what became of their files.
    package func delete(episodes ids: [Int64]) async throws -> (episodes: [Int64], files: LetGo) {
        let episodes = try await existingEpisodes(ids).filter { $0.downloadID != nil }
        let outcome = try await letGo(episodes, reason: "deleted on request")
        if !outcome.deleted.isEmpty {
            logger.info("deleted \(ListSummary.count(outcome.deleted.count, "episode file")) on request")
        }
        // An episode whose file the disposal refused keeps it: it is not among the deleted.
        return (episodes.map(\.id).filter { outcome.refused[$0] == nil }, outcome)
    }

    /// `redownload`: as `delete`, then queued again.
    package func redownload(episodes ids: [Int64]) async throws -> [EnqueuedDownload] {
        let episodes = try await existingEpisodes(ids)
        // Checked before anything is deleted: an episode with nothing to download would lose its file for nothing.
        if let episode = episodes.first(where: { !Self.isDownloadable($0.enclosureURL) }) {
            throw Self.noEnclosure(episode)
        }
        _ = try await letGo(episodes.filter { $0.downloadID != nil }, reason: "deleted to download again")
        return try await enqueueEpisodes(ids, priority: nil, requested: true)
    }

    /// `inbox`: new episodes of every podcast, newest first.
    package func inbox(limit: Int?) async throws -> InboxListing {
        try ListingLimit.check(limit)
        let records: [EpisodeRecord]
        do {
            records = try await store.newEpisodes(limit: limit)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        return try await listing(records)
    }

    /// `episode`: the episodes with these ids, in the order asked, with everything known of them (their
    /// description too) and their downloads, and their podcasts.
    package func episodeDetails(_ ids: [Int64]) async throws -> InboxListing {
        var details = try await listing(try await existingEpisodes(ids, fields: .all))
        for index in details.episodes.indices {
            let sidecars = try await episodeSidecars(episodeID: details.episodes[index].record.id)
            details.episodes[index].sidecars = sidecars.isEmpty ? nil : sidecars
        }
        return details
    }

    /// `records` with their downloads, and the podcasts they belong to, by id.
    private func listing(_ records: [EpisodeRecord]) async throws -> InboxListing {
        let downloads = await queue.infos(records.compactMap(\.downloadID))
        let counts = try await counts()
        let shown = Set(records.map(\.podcastID))
        return InboxListing(
            episodes: records.map { ListedEpisode(record: $0, download: $0.downloadID.flatMap { downloads[$0] }) },
            podcasts: podcasts.values.filter { shown.contains($0.id) }.sorted { $0.id < $1.id }
                .map { summary($0, counts: counts[$0.id]) }
        )
    }

    /// The episodes with these ids, in the order asked; an unknown id is `unknown_episode`.
    func existingEpisodes(_ ids: [Int64], fields: EpisodeFields = .withoutDescription) async throws -> [EpisodeRecord] {
        guard !ids.isEmpty else {
            throw PodcastError.invalid("'episodes' must name at least one episode", parameter: "episodes")
        }
        let found: [EpisodeRecord]
        do {
            found = try await store.episodes(ids: ids, fields: fields)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let foundIDs = Set(found.map(\.id))
        if let missing = ids.first(where: { !foundIDs.contains($0) }) {
            throw PodcastError.unknownEpisode(missing, download: await downloadMention(missing))
        }
        return found
    }

    /// The listed download with this number and the episode it was made for, to say what a number that is no
    /// episode is instead.
    func downloadMention(_ id: Int64) async -> DownloadMention? {
        guard let download = await queue.list(state: nil, only: [id]).first else { return nil }
        let episode = (try? await store.episodeOfDownload(id)).map {
            EpisodeMention($0.episode, podcast: $0.podcast, download: .listed(id))
        }
        return DownloadMention(download, episode: episode)
    }

    /// The downloads among `downloads` that no episode but `leaving` points at: only those may be cancelled or have
    /// their files deleted when those episodes let go of them.
    func ownDownloads(_ downloads: [Int64], leaving episodes: [Int64]) async throws -> [Int64] {
        let shared: Set<Int64>
        do {
            shared = try await store.downloadsReferenced(downloads, exceptEpisodes: Set(episodes))
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        return downloads.filter { !shared.contains($0) }
    }

    /// Queues episodes into their podcasts' folders, named by the template, each linked to its download in the same
    /// transaction (a crash between the two would queue the episode again as `name (2)`).
    ///
    /// - Parameters:
    ///   - requested: The listener asked for these episodes; ``EpisodeRecord/requested`` is recorded first, so that
    ///     no retention run between the download's completion and the mark can take the file.
    ///   - now: Pass the download gate (`--now`), the episodes' existing downloads too.
    ///   - urls: Plain URL requests, already validated, queued in the same transaction before the episodes.
    func enqueueEpisodes(
        _ ids: [Int64],
        priority: Int?,
        requested: Bool,
        now: Bool = false,
        with urls: [DownloadRequest] = []
    ) async throws -> [EnqueuedDownload] {
        guard !ids.isEmpty || !urls.isEmpty else { return [] }
        let found = ids.isEmpty ? [] : try await existingEpisodes(ids)
        // Every episode is checked before any is queued, so a refused request queues nothing.
        if let episode = found.first(where: { podcasts[$0.podcastID] != nil && !Self.isDownloadable($0.enclosureURL) })
        {
            throw Self.noEnclosure(episode)
        }
        if requested, !found.isEmpty {
            do {
                try await store.setRequested(found.map(\.id))
            } catch {
                throw PodcastError.store("cannot mark the episodes: \(error)")
            }
        }
        // Every new download goes to the queue in one request, so ten thousand episodes cost one transaction.
        let existing = await queue.infos(found.compactMap(\.downloadID))
        let plan = EpisodeEnqueuePlan(
            episodes: found,
            podcasts: podcasts,
            downloads: existing,
            fileExists: { FileManager.default.fileExists(atPath: $0) },
            placement: EpisodeEnqueuePlan.Placement(downloadDirectory: downloadDirectory, naming: settings.naming),
            priority: priority ?? 0,
            expedite: now
        )
        let requests = urls + plan.requests
        let replaced = plan.replaced
        var entries: [EnqueuedDownload?] = Array(repeating: nil, count: urls.count)
        for step in plan.steps {
            switch step {
            case .existing(let download):
                entries.append(
                    EnqueuedDownload(
                        id: download.id,
                        url: download.url,
                        existing: true,
                        file: download.file,
                        state: download.state,
                        pauseReason: download.pauseReason
                    )
                )
            case .new:
                entries.append(nil)
            case .skipped:
                continue
            }
        }
        episodesWritten()
        defer { episodesWritten() }
        let enqueued = requests.isEmpty ? [] : try await queue.enqueue(requests)
        // An episode whose podcast was unsubscribed meanwhile: no episode owns its new download once the podcast is
        // gone, so it goes (unsubscribe discards what it found linked; this is what was linked after it looked).
        let podcastOf = Dictionary(found.map { ($0.id, $0.podcastID) }) { first, _ in first }
        let stray = zip(requests, enqueued).compactMap { request, entry -> Int64? in
            guard !entry.existing, let episode = request.episode, let podcast = podcastOf[episode],
                leaving.contains(podcast) || podcasts[podcast] == nil
            else { return nil }
            return entry.id
        }
        if !stray.isEmpty {
            _ = try await queue.discard(stray, deleteFiles: true, reason: "its podcast was unsubscribed")
        }
        var queued = enqueued[...]
        var result = entries.compactMap { $0 ?? queued.popFirst() }
        // The old rows go: their files are gone, and a row kept would count toward max_storage again once the new
        // download's file takes its name.
        if !replaced.isEmpty {
            let gone = try await ownDownloads(replaced, leaving: [])
            _ = try await queue.discard(gone, deleteFiles: false, reason: "its file was gone and it was queued again")
            // What was saved beside the vanished file goes too; the new download saves it again.
            await disposeSidecars(ofDownloads: gone)
        }
        if now {
            let existing = result.filter(\.existing).map(\.id)
            try await queue.expedite(existing)
            let states = await queue.infos(existing)
            for index in result.indices where result[index].existing {
                guard let info = states[result[index].id] else { continue }
                result[index].state = info.state
                result[index].pauseReason = info.pauseReason
            }
        }
        // The links as the queue's transaction wrote them: each episode queued to its download (new, or a live one
        // of the same URL), the others as they were found; a stray download has no episode any more.
        var links: [Int64: Int64] = [:]
        for episode in found {
            if let download = episode.downloadID { links[episode.id] = download }
        }
        for (request, entry) in zip(requests, enqueued) {
            if let episode = request.episode { links[episode] = entry.id }
        }
        if !stray.isEmpty {
            let discarded = Set(stray)
            links = links.filter { !discarded.contains($0.value) }
        }
        return namingEpisodes(result, of: found, links: links)
    }

    /// `entries` with the episode each was queued for: an episode id and a download id are both small integers, so
    /// the answer says which episode a number was taken for (`enqueue 29` meant for download 29 shows at once).
    ///
    /// - Parameter links: Each episode's download. (Reading them back from the store cost as much as reading the
    ///   episodes in the first place.)
    private func namingEpisodes(
        _ entries: [EnqueuedDownload],
        of episodes: [EpisodeRecord],
        links: [Int64: Int64]
    ) -> [EnqueuedDownload] {
        guard !episodes.isEmpty else { return entries }
        var episodeOf: [Int64: EpisodeRecord] = [:]
        for episode in episodes {
            if let download = links[episode.id], episodeOf[download] == nil { episodeOf[download] = episode }
        }
        return entries.map { entry in
            var entry = entry
            entry.episode = episodeOf[entry.id].map {
                EpisodeMention($0, podcast: podcasts[$0.podcastID]?.title ?? "", download: .listed(entry.id))
            }
            return entry
        }
    }
}
