import Foundation
import SinglecastStore
import Testing

@Suite("Podcast store")
struct PodcastStoreTests {
    private func episode(_ identity: String, title: String? = nil, day: Int64? = nil) -> EpisodeRecord {
        var record = EpisodeRecord(podcastID: 0, identity: identity, title: title ?? identity, firstSeenAt: 1)
        record.publishedAt = day.map { $0 * 86_400_000 }
        record.enclosureURL = "https://cdn.example.com/\(identity).mp3"
        return record
    }

    /// Stores `episodes` as one refresh, handed over `chunk` at a time, and returns the episodes it inserted.
    private func refresh(
        _ store: Store,
        _ podcast: PodcastRecord,
        _ episodes: [EpisodeRecord],
        chunk: Int = .max
    ) async throws -> [EpisodeRecord] {
        let ids = try await store.applyRefresh(podcast) { apply in
            for start in stride(from: 0, to: episodes.count, by: chunk) {
                try apply(Array(episodes[start..<min(start + chunk, episodes.count)]))
            }
        }
        return try await store.episodes(ids: ids)
    }

    @Test("subscribing twice returns the first podcast; a refresh merges episodes by identity")
    func refreshMergesByIdentity() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, existing) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            #expect(!existing && podcast.id > 0)
            #expect(try await store.insertPodcast(PodcastRecord(feedURL: podcast.feedURL, subscribedAt: 2)).existing)

            var first = try await refresh(store, podcast, [episode("x", day: 2), episode("y", day: 1)])
            #expect(first.map(\.identity) == ["x", "y"])
            try await store.setEpisodeDownloads([(first[0].id, 99)])

            // x changes its title and keeps its download; y disappears from the feed but stays; z is new.
            first = try await refresh(
                store,
                podcast,
                [episode("z", day: 3), episode("x", title: "x renamed", day: 2), episode("z", day: 3)]
            )
            #expect(first.map(\.identity) == ["z"], "a duplicate item inside one feed is stored once")
            let all = try await store.episodes(of: podcast.id)
            #expect(all.map(\.identity) == ["z", "x", "y"])
            #expect(all[1].title == "x renamed" && all[1].downloadID == 99 && !all[1].isNew)
            #expect(try await store.episodes(of: podcast.id, onlyNew: true, limit: 1).map(\.identity) == ["z"])
            #expect(try await store.episodeCounts()[podcast.id] == EpisodeCounts(total: 3, new: 2))

            // Unsubscribing removes the episodes with the podcast.
            try await store.deletePodcast(podcast.id)
            #expect(try await store.episodes(of: podcast.id).isEmpty)
            #expect(try await store.podcasts().isEmpty)
        }
    }

    /// A refresh's answer counts its own podcast's episodes, not every podcast's: the same figures as the whole count.
    @Test("one podcast's counts match its row of the whole count; a podcast without episodes counts zero")
    func countsOfOnePodcast() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (a, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            let (b, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/b", subscribedAt: 1)
            )
            let (empty, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/c", subscribedAt: 1)
            )
            var seen = episode("y")
            seen.isNew = false
            _ = try await refresh(store, a, [episode("x"), seen])
            _ = try await refresh(store, b, [episode("z")])

            let all = try await store.episodeCounts()
            #expect(try await store.episodeCounts(of: a.id) == EpisodeCounts(total: 2, new: 1))
            #expect(try await store.episodeCounts(of: a.id) == all[a.id])
            #expect(try await store.episodeCounts(of: b.id) == all[b.id])
            #expect(try await store.episodeCounts(of: b.id) == EpisodeCounts(total: 1, new: 1))
            #expect(try await store.episodeCounts(of: empty.id) == EpisodeCounts(total: 0, new: 0))
        }
    }

    /// `podcasts` pages by id: a page starts after the cursor, holds at most the limit, and a deleted or added podcast
    /// moves no other one from its page.
    @Test("podcast ids page by a cursor; a page's counts are the whole count's rows")
    func podcastPages() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            var podcasts: [PodcastRecord] = []
            for name in ["a", "b", "c", "d", "e"] {
                podcasts.append(
                    try await store.insertPodcast(
                        PodcastRecord(feedURL: "https://feeds.example.com/\(name)", subscribedAt: 1)
                    ).podcast
                )
            }
            let ids = podcasts.map(\.id)
            #expect(try await store.podcastIDs() == ids)
            #expect(try await store.podcastIDs(limit: 2) == Array(ids[0..<2]))
            #expect(try await store.podcastIDs(after: ids[1], limit: 2) == Array(ids[2..<4]))
            #expect(try await store.podcastIDs(after: ids[3], limit: 2) == [ids[4]])
            #expect(try await store.podcastIDs(after: ids[4], limit: 2).isEmpty)
            #expect(try await store.podcastIDs(after: .max).isEmpty)
            #expect(try await store.podcastIDs(after: ids[2]) == Array(ids[3...]))

            // The cursor's own podcast deleted, and one added: the next page is still the rest, in order.
            try await store.deletePodcast(ids[1])
            let added = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/f", subscribedAt: 1)
            ).podcast.id
            #expect(added > ids[4])
            #expect(try await store.podcastIDs(after: ids[1], limit: 3) == [ids[2], ids[3], ids[4]])
            #expect(try await store.podcastIDs(after: ids[4], limit: 3) == [added])

            _ = try await refresh(store, podcasts[0], [episode("x")])
            _ = try await refresh(store, podcasts[2], [episode("y"), episode("w")])
            _ = try await refresh(store, podcasts[3], [episode("z")])
            let all = try await store.episodeCounts()
            let page = try await store.episodeCounts(podcastIDs: ids[2]...ids[3])
            #expect(page.count == 2)
            #expect(page[ids[2]] == all[ids[2]] && page[ids[3]] == all[ids[3]] && page[ids[0]] == nil)
        }
    }

    /// A page costs the same however many podcasts and episodes there are: both of its queries search an index.
    @Test("a page of podcasts and its counts are read by index ranges, never by a scan")
    func podcastPageQueryPlans() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/s.db"
            try await Store(path: path).close()
            let connection = try configuredConnection(path)
            func plan(_ sql: String, _ bindings: [SQLiteValue]) throws -> String {
                try connection.query("EXPLAIN QUERY PLAN " + sql, bindings).compactMap { $0.string(3) }
                    .joined(separator: "; ")
            }
            let page = try plan(Store.podcastPageSQL, [.integer(10), .integer(51)])
            #expect(page.contains("SEARCH podcasts USING INTEGER PRIMARY KEY (rowid>?)"), "\(page)")
            #expect(!page.contains("TEMP B-TREE"), "\(page)")
            let counts = try plan(Store.episodeCountsSQL, [.integer(10), .integer(60)])
            #expect(
                counts.contains("SEARCH episodes USING COVERING INDEX episodes_by_new (podcast_id>? AND podcast_id<?)"),
                "\(counts)"
            )
            #expect(!counts.contains("TEMP B-TREE"), "\(counts)")
        }
    }

    /// A refresh answered 304 saves its podcast without an fsync: what it wrote is read back, and after reopening.
    @Test("a podcast saved for a process crash only is stored as one saved for a power loss")
    func savingWithoutSync() async throws {
        try await withTemporaryDirectory { directory in
            var store = try Store(path: directory + "/s.db")
            var (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            podcast.refreshedAt = 1_000
            podcast.nextRefreshAt = 3_600_000
            try await store.savePodcast(podcast, durability: .processCrash)
            #expect(try await store.podcasts() == [podcast])
            podcast.refreshedAt = 2_000
            try await store.savePodcast(podcast)
            try await store.close()
            store = try Store(path: directory + "/s.db")
            #expect(try await store.podcasts() == [podcast])
        }
    }

    @Test("a refresh longer than one batch matches every episode, keeps the first of a repeated identity")
    func refreshInBatches() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            let size = Store.refreshBatchSize
            let stored = (0..<(2 * size + 10)).map { episode("e\($0)") }
            let first = try await refresh(store, podcast, stored)
            #expect(first.map(\.identity) == stored.map(\.identity))
            try await store.setEpisodeDownloads([(first[size].id, 7)])

            // One new episode in each batch, a rename in the second, and the first episode again in the third.
            var feed = stored
            feed.insert(episode("new-a"), at: 3)
            feed[size + 1].title = "renamed"
            feed.insert(episode("new-b"), at: size + 5)
            feed.insert(episode("e0", title: "a repeat"), at: 2 * size + 2)
            // Handed over in pieces that do not line up with the store's batches, as a parser's batches may not.
            let inserted = try await refresh(store, podcast, feed, chunk: size / 3 + 1)
            #expect(inserted.map(\.identity) == ["new-a", "new-b"])
            let all = Dictionary(
                uniqueKeysWithValues: try await store.episodes(of: podcast.id).map { ($0.identity, $0) }
            )
            #expect(all.count == stored.count + 2)
            #expect(all["e0"]?.title == "e0")
            #expect(all["e\(size)"]?.title == "renamed")
            #expect(all["e\(size)"]?.downloadID == 7)
        }
    }

    /// A podcast's first refresh skips looking its episodes up (it has none): its own repeats must still be dropped,
    /// across batches and the pieces it is handed in, and the next refresh must find every one of them.
    @Test("a first refresh stores a repeated identity once across batches; the next refresh matches every episode")
    func firstRefreshDropsRepeatsWithoutLookup() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            let size = Store.refreshBatchSize
            var feed = (0..<(size + 20)).map { episode("e\($0)") }
            feed.insert(episode("e1", title: "repeat in the first batch"), at: 5)
            feed.insert(episode("e2", title: "repeat in the second batch"), at: size + 3)
            let first = try await refresh(store, podcast, feed, chunk: 7)
            #expect(first.count == size + 20)
            #expect(Set(first.map(\.identity)).count == size + 20)
            #expect(first.first { $0.identity == "e1" }?.title == "e1")
            #expect(first.first { $0.identity == "e2" }?.title == "e2")

            // A second podcast's first refresh is not matched against the first podcast's episodes.
            let (other, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/b", subscribedAt: 1)
            )
            #expect(try await refresh(store, other, [episode("e1"), episode("e2")]).count == 2)

            // The second refresh looks every batch up, the last one shorter than a batch (padded with NULLs).
            var again = feed
            again[size + 10].title = "renamed"
            again.append(episode("new"))
            #expect(try await refresh(store, podcast, again).map(\.identity) == ["new"])
            let all = try await store.episodes(of: podcast.id)
            #expect(all.count == size + 21)
            #expect(all.first { $0.identity == again[size + 10].identity }?.title == "renamed")
        }
    }

    @Test("a refresh numbers its new episodes past every id ever used, also those of deleted episodes")
    func episodeIDsAreNeverReused() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (first, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            let (second, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/b", subscribedAt: 1)
            )
            let old = try await refresh(store, first, [episode("a"), episode("b"), episode("c")]).map(\.id)
            #expect(old.count == 3 && Set(old).count == 3)
            let kept = try await refresh(store, second, [episode("k")]).map(\.id)
            #expect(kept.count == 1 && kept[0] > old.max()!)
            // The newest ids go with their podcast; the next ones still come after them.
            try await store.deletePodcast(first.id)
            try await store.deletePodcast(second.id)
            let (third, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/c", subscribedAt: 1)
            )
            let new = try await refresh(store, third, [episode("x"), episode("y")]).map(\.id)
            #expect(new == [kept[0] + 1, kept[0] + 2])
        }
    }

    @Test("a refresh whose episodes cannot all be read stores none of them and throws the reader's error")
    func failedRefreshStoresNothing() async throws {
        struct Unreadable: Error {}
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            var (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            _ = try await refresh(store, podcast, [episode("kept")])
            podcast.title = "from the failed refresh"
            // More than one batch is stored before the failure.
            let read = (0...Store.refreshBatchSize).map { episode("lost-\($0)") }
            await #expect(throws: Unreadable.self) {
                try await store.applyRefresh(podcast) { apply in
                    try apply(read)
                    throw Unreadable()
                }
            }
            #expect(try await store.episodes(of: podcast.id).map(\.identity) == ["kept"])
            #expect(try await store.podcasts().map(\.title) == [""])
        }
    }

    @Test("episodes are listed newest first, undated ones last, then in feed order; ids keep the order asked")
    func episodeOrder() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            var feed = [episode("undated-1"), episode("old", day: 1), episode("undated-2"), episode("new", day: 5)]
            feed += [episode("tie-a", day: 3), episode("tie-b", day: 3)]
            for index in feed.indices {
                feed[index].feedOrder = index
                feed[index].description = "Show notes of \(feed[index].identity)"
                feed[index].link = "https://example.com/\(feed[index].identity)"
            }
            let stored = try await refresh(store, podcast, feed)
            let listed = try await store.episodes(of: podcast.id)
            #expect(listed.map(\.identity) == ["new", "tie-a", "tie-b", "old", "undated-1", "undated-2"])
            #expect(try await store.episodes(of: podcast.id, limit: 2).map(\.identity) == ["new", "tie-a"])

            let ids = stored.map(\.id)
            let asked = [ids[3], ids[0], 9_999, ids[3]]
            let full = try await store.episodes(ids: asked)
            #expect(full.map(\.identity) == ["new", "undated-1", "new"])
            #expect(full[0].description == "Show notes of new")
            // Without descriptions, everything else is the same.
            let slim = try await store.episodes(ids: asked, fields: .withoutDescription)
            #expect(slim.allSatisfy { $0.description.isEmpty })
            var described = slim
            for index in described.indices { described[index].description = full[index].description }
            #expect(described == full)
            // A listing keeps what a list shows and the rules read, and leaves the rest empty.
            let listing = try await store.episodes(of: podcast.id, fields: .listing)
            #expect(listing.map(\.id) == listed.map(\.id))
            #expect(listing.map(\.title) == listed.map(\.title))
            #expect(listing.map(\.publishedAt) == listed.map(\.publishedAt))
            #expect(listing.map(\.enclosureURL) == listed.map(\.enclosureURL))
            #expect(listing.allSatisfy { $0.description.isEmpty && $0.link == nil && $0.identity.isEmpty })
        }
    }
}
