import SinglecastStore

/// The server's changes applied here through the podcast layer, which owns the subscriptions and the marks.
extension SyncService {
    /// Applies remote subscription changes through the podcast layer; returns what changed and what failed.
    func apply(subscribe: [String], unsubscribe: [String]) async -> (Int, Int, Int) {
        var added = 0
        var removed = 0
        var failed = 0
        for url in subscribe {
            do {
                let outcome = try await podcasts.subscribe(
                    SubscribeCommand(feed: .url(url), autoDownload: settings.autoDownload)
                )
                if !outcome.existing { added += 1 }
            } catch {
                failed += 1
                logger.warning(
                    "sync: cannot subscribe to \(url), as another device did: \(error); trying again next sync"
                )
            }
        }
        if !unsubscribe.isEmpty {
            let byURL = Dictionary(((try? await store.podcasts()) ?? []).map { ($0.feedURL, $0.id) }) { first, _ in
                first
            }
            for url in unsubscribe {
                guard let id = byURL[url] else { continue }
                do {
                    _ = try await podcasts.unsubscribe(UnsubscribeCommand(podcast: String(id)))
                    removed += 1
                } catch {
                    logger.warning("sync: cannot unsubscribe from \(url), as another device did: \(error)")
                }
            }
        }
        return (added, removed, failed)
    }

    /// Applies remote plays through the marks; the echoes the marks write to the outbox are dropped, so that the
    /// server's own actions do not go back to it.
    func apply(played: [SyncRun.EpisodeKey], unplayed: [SyncRun.EpisodeKey]) async -> (Int, Int, Int) {
        guard !played.isEmpty || !unplayed.isEmpty else { return (0, 0, 0) }
        let mark = (try? await store.syncOutboxMark()) ?? .max
        var unmatched = 0
        var counts: [Int] = []
        for (keys, isPlayed) in [(played, true), (unplayed, false)] {
            let ids = (try? await store.episodeIDs(matching: keys.map { ($0.podcast, $0.episode, $0.guid) })) ?? []
            unmatched += ids.filter { $0 == nil }.count
            let found = ids.compactMap { $0 }
            guard !found.isEmpty else {
                counts.append(0)
                continue
            }
            do {
                counts.append(try await podcasts.markPlayed(.episodes(found), played: isPlayed).changed.count)
            } catch {
                logger.warning(
                    "sync: cannot mark \(found.count) episode(s) \(isPlayed ? "played" : "unplayed"): \(error)"
                )
                counts.append(0)
            }
        }
        let echoes = (played.map { ($0, SyncOutboxEntry.Kind.play) } + unplayed.map { ($0, .new) }).map {
            SyncOutboxEntry(id: 0, kind: $0.1, podcastURL: $0.0.podcast, episodeURL: $0.0.episode, at: 0)
        }
        try? await store.dropSyncEchoes(after: mark, echoes)
        return (counts[0], counts[1], unmatched)
    }
}
