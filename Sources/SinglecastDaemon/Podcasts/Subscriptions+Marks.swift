import FoundationEssentials
import SinglecastStore
import SinglecastSupport

/// Which episodes a mark applies to.
package enum EpisodeChoice: Sendable, Hashable {
    case episodes([Int64])
    /// Every episode of the podcast the selector names (an id or a title).
    case wholePodcast(String)
}

/// A mark the listener sets or takes back.
package enum EpisodeMark: String, Sendable, Hashable {
    case played, unplayed, pinned, unpinned
}

/// What a mark changed: the episodes whose state it changed, and those already so.
package struct MarkOutcome: Sendable, Hashable {
    package var changed: [Int64]
    package var unchanged: [Int64]
}

/// What the listener marks: played, unplayed, pinned, unpinned. Retention reads the marks.
extension Subscriptions {
    // MARK: - Played and pinned

    package func markPlayed(_ choice: EpisodeChoice, played: Bool) async throws -> MarkOutcome {
        let (ids, podcast) = try await episodeIDs(choice)
        let changed: [Int64]
        let at = now()
        do {
            changed = try await store.setPlayed(ids, at: played ? at : nil)
        } catch {
            throw PodcastError.store("cannot mark the episodes: \(error)")
        }
        if !changed.isEmpty {
            episodesWritten()
            if changed.count == 1 {
                // One episode is the event it always was, with its title: read only when watched.
                let records = events.episodesWatched ? try await store.episodes(ids: changed, fields: .listing) : []
                events.episodesMarked(records, played: played, at: at)
            } else {
                // `played --all` of a long back catalogue is one event, not thousands.
                events.episodesMarked(changed, played ? .played : .unplayed, podcast: podcast, at: at)
            }
            logger.info("marked \(ListSummary.count(changed.count, "episode")) \(played ? "played" : "unplayed")")
            // A played episode may be due for deletion now or later.
            await retentionWanted()
        }
        let changedSet = Set(changed)
        return MarkOutcome(changed: changed, unchanged: ids.filter { !changedSet.contains($0) })
    }

    package func pin(_ choice: EpisodeChoice, pinned: Bool) async throws -> MarkOutcome {
        let (ids, podcast) = try await episodeIDs(choice)
        let changed: [Int64]
        do {
            changed = try await store.setPinned(ids, pinned)
        } catch {
            throw PodcastError.store("cannot pin the episodes: \(error)")
        }
        if !changed.isEmpty {
            // No count changes: the episode totals stay cached.
            logger.info("\(pinned ? "pinned" : "unpinned") \(ListSummary.count(changed.count, "episode"))")
            events.episodesMarked(changed, pinned ? .pinned : .unpinned, podcast: podcast, at: now())
            if !pinned { await retentionWanted() }
        }
        let changedSet = Set(changed)
        return MarkOutcome(changed: changed, unchanged: ids.filter { !changedSet.contains($0) })
    }

    /// The episodes a mark applies to, newest first for a whole podcast, and that podcast.
    private func episodeIDs(_ choice: EpisodeChoice) async throws -> (ids: [Int64], podcast: Int64?) {
        switch choice {
        case .episodes(let ids):
            return (try await existingEpisodes(ids).map(\.id), nil)
        case .wholePodcast(let selector):
            let podcast = try resolve(selector)
            do {
                return (try await store.episodeIDs(of: podcast.id), podcast.id)
            } catch {
                throw PodcastError.store("cannot read the episodes: \(error)")
            }
        }
    }
}
