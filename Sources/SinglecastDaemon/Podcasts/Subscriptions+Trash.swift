import SinglecastStore
import SinglecastSupport

/// A file singlecast moved to the Trash, with the episode it was, as `trash` lists it.
package struct TrashedFile: Sendable, Hashable {
    package var file: Trash.OwnFile
    /// `nil` when the Trash does not say (a file trashed by an older singlecast) or the episode is forgotten.
    package var episode: EpisodeRecord?
    package var podcastTitle: String?
}

/// What `trash restore` did with one file.
package struct RestoredFile: Sendable, Hashable {
    package var id: String
    /// Where the file is now: its original path.
    package var path: String
    package var episode: Int64?
    /// The completed download the episode has again.
    package var download: Int64?
    /// The episode was pinned, so that retention does not delete it again at once.
    package var pinned: Bool
}

/// What `trash restore` did: the files put back, and those left in the Trash with why.
package struct TrashRestore: Sendable, Hashable {
    package struct Refusal: Sendable, Hashable {
        package var id: String
        /// Where the file would go back to.
        package var path: String
        package var reason: String
    }

    package var restored: [RestoredFile] = []
    package var refused: [Refusal] = []
}

/// What `trash empty` did.
package struct TrashEmptied: Sendable, Hashable {
    package var purged: [Trash.OwnFile] = []
    /// Files that stay, by trash path, with why.
    package var failed: [String: String] = [:]
}

/// What singlecast put in the Trash: listing it, putting it back, emptying it. Only singlecast's own files from the
/// download directory (``Trash/ownFiles(from:)``) are ever shown or touched.
extension Subscriptions {
    /// singlecast's files in the Trash, newest first, with their episodes; none when `use_trash` is off.
    package func trashed() async throws -> [TrashedFile] {
        guard let trash = await queue.fileDisposal.trash else { return [] }
        let files = trash.ownFiles(from: downloadDirectory).sorted {
            ($0.trashedAt, $0.path) > ($1.trashedAt, $1.path)
        }
        let episodes = try await knownEpisodes(files.compactMap(\.episode))
        return files.map { file in
            let episode = file.episode.flatMap { episodes[$0] }
            return TrashedFile(
                file: file,
                episode: episode,
                podcastTitle: episode.flatMap { podcasts[$0.podcastID]?.title }
            )
        }
    }

    /// Puts files back where they were, each as a completed download of its episode again, pinned.
    ///
    /// Every id must name one of singlecast's files in the Trash, or nothing is done. A file whose place is taken,
    /// or whose episode has a download again, stays in the Trash and is reported.
    package func restore(_ ids: [String]) async throws -> TrashRestore {
        guard let trash = await queue.fileDisposal.trash else {
            throw PodcastError.invalid("use_trash is off, so singlecast put nothing in the Trash", parameter: "ids")
        }
        let listed = try await trashed()
        let byID = Dictionary(listed.map { ($0.file.id, $0) }) { first, _ in first }
        for id in ids where byID[id] == nil { throw PodcastError.unknownTrashedFile(id) }
        var outcome = TrashRestore()
        var seen: Set<String> = []
        for id in ids where seen.insert(id).inserted {
            guard let entry = byID[id] else { continue }
            let file = entry.file
            if let episode = entry.episode, let download = episode.downloadID {
                let reason = "episode \(episode.id) has download \(download) now; delete that one first"
                outcome.refused.append(.init(id: id, path: file.original, reason: reason))
                continue
            }
            if let refusal = trash.restore(file, root: downloadDirectory) {
                outcome.refused.append(.init(id: id, path: file.original, reason: refusal.message))
                continue
            }
            logger.info("restored \(file.original) from the Trash")
            var restored = RestoredFile(id: id, path: file.original, episode: entry.episode?.id, pinned: false)
            if let episode = entry.episode, let url = episode.enclosureURL {
                restored.download = try await adopt(file, episode: episode.id, url: url)
                restored.pinned = try await pinRestored(episode.id)
            }
            outcome.restored.append(restored)
        }
        if !outcome.restored.isEmpty {
            episodesWritten()
            // The restored files count against max_storage again.
            await retentionWanted()
        }
        return outcome
    }

    /// Empties singlecast's own files from the Trash for good: all, or those trashed at least `olderThan`
    /// milliseconds ago.
    package func emptyTrash(olderThan: Int64?) async -> TrashEmptied {
        guard let trash = await queue.fileDisposal.trash else { return TrashEmptied() }
        let cutoff = olderThan.map { now().saturatingSubtract($0) }
        var outcome = TrashEmptied()
        for file in trash.ownFiles(from: downloadDirectory) where cutoff.map({ file.trashedAt <= $0 }) ?? true {
            if let problem = trash.purge(file) {
                outcome.failed[file.path] = problem
            } else {
                outcome.purged.append(file)
            }
        }
        if !outcome.purged.isEmpty {
            logger.info("emptied \(outcome.purged.count) of singlecast's file(s) from the Trash on request")
        }
        return outcome
    }

    private func knownEpisodes(_ ids: [Int64]) async throws -> [Int64: EpisodeRecord] {
        guard !ids.isEmpty else { return [:] }
        do {
            let records = try await store.episodes(ids: Array(Set(ids)), fields: .withoutDescription)
            return Dictionary(records.map { ($0.id, $0) }) { first, _ in first }
        } catch {
            throw PodcastError.store("cannot read the episodes of the trashed files: \(error)")
        }
    }

    private func adopt(_ file: Trash.OwnFile, episode: Int64, url: String) async throws -> Int64 {
        do {
            return try await queue.adoptRestored(url: url, path: file.original, size: file.size, episode: episode)
        } catch {
            throw PodcastError.store("\(file.original) is back, but its download cannot be recorded: \(error)")
        }
    }

    /// Pins a restored episode: retention let go of it once and would at its next turn.
    ///
    /// - Returns: Whether it is pinned.
    private func pinRestored(_ episode: Int64) async throws -> Bool {
        do {
            let changed = try await store.setPinned([episode], true)
            if !changed.isEmpty { events.episodesMarked(changed, .pinned, podcast: nil, at: now()) }
            return true
        } catch {
            logger.warning("cannot pin restored episode \(episode): \(error)")
            return false
        }
    }
}
