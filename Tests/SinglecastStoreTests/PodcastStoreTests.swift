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

    @Test("subscribing twice returns the first podcast; a refresh merges episodes by identity")
    func refreshMergesByIdentity() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, existing) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            #expect(!existing && podcast.id > 0)
            #expect(try await store.insertPodcast(PodcastRecord(feedURL: podcast.feedURL, subscribedAt: 2)).existing)

            var first = try await store.applyRefresh(podcast, episodes: [episode("x", day: 2), episode("y", day: 1)])
            #expect(first.map(\.identity) == ["x", "y"])
            try await store.setEpisodeDownloads([(first[0].id, 99)])

            // x changes its title and keeps its download; y disappears from the feed but stays; z is new.
            first = try await store.applyRefresh(
                podcast,
                episodes: [episode("z", day: 3), episode("x", title: "x renamed", day: 2), episode("z", day: 3)]
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

    @Test("a refresh longer than one batch matches every episode, keeps the first of a repeated identity")
    func refreshInBatches() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            let (podcast, _) = try await store.insertPodcast(
                PodcastRecord(feedURL: "https://feeds.example.com/a", subscribedAt: 1)
            )
            let size = Store.refreshBatchSize
            let stored = (0..<(2 * size + 10)).map { episode("e\($0)") }
            let first = try await store.applyRefresh(podcast, episodes: stored)
            #expect(first.count == stored.count)
            try await store.setEpisodeDownloads([(first[size].id, 7)])

            // One new episode in each batch, a rename in the second, and the first episode again in the third.
            var feed = stored
            feed.insert(episode("new-a"), at: 3)
            feed[size + 1].title = "renamed"
            feed.insert(episode("new-b"), at: size + 5)
            feed.insert(episode("e0", title: "a repeat"), at: 2 * size + 2)
            let inserted = try await store.applyRefresh(podcast, episodes: feed)
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
            let stored = try await store.applyRefresh(podcast, episodes: feed)
            let listed = try await store.episodes(of: podcast.id)
            #expect(listed.map(\.identity) == ["new", "tie-a", "tie-b", "old", "undated-1", "undated-2"])
            #expect(try await store.episodes(of: podcast.id, limit: 2).map(\.identity) == ["new", "tie-a"])

            let ids = stored.map(\.id)
            let asked = [ids[3], ids[0], 9_999, ids[3]]
            let full = try await store.episodes(ids: asked)
            #expect(full.map(\.identity) == ["new", "undated-1", "new"])
            #expect(full[0].description == "Show notes of new")
            // Without descriptions, everything else is the same.
            let slim = try await store.episodes(ids: asked, includingDescriptions: false)
            #expect(slim.allSatisfy { $0.description.isEmpty })
            var described = slim
            for index in described.indices { described[index].description = full[index].description }
            #expect(described == full)
        }
    }
}
