import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// What an enqueue of episodes does with each, without a store, a queue or a disk.
@Suite struct EpisodeEnqueuePlanTests {
    private let placement = EpisodeEnqueuePlan.Placement(downloadDirectory: "/d", naming: EpisodeNaming())

    private func podcast(_ id: Int64 = 1, feed: String = "https://feeds.example/show.xml") -> PodcastRecord {
        var podcast = PodcastRecord(feedURL: feed, subscribedAt: 0)
        podcast.id = id
        podcast.title = "Show"
        podcast.authUser = "me"
        podcast.authPassword = "secret"
        return podcast
    }

    private func episode(_ id: Int64, url: String?, download: Int64? = nil) -> EpisodeRecord {
        var episode = EpisodeRecord(podcastID: 1, identity: "e\(id)", title: "Episode \(id)", firstSeenAt: 0)
        episode.id = id
        episode.enclosureURL = url
        episode.downloadID = download
        return episode
    }

    private func download(_ id: Int64, _ state: DownloadRecord.State, file: String) -> DownloadSnapshot {
        let path = file.split(separator: "/", omittingEmptySubsequences: false)
        var record = DownloadRecord(
            id: id,
            url: "https://cdn.example/\(id).mp3",
            directory: path.dropLast().joined(separator: "/"),
            fileName: String(path.last ?? ""),
            position: id,
            addedAt: 0
        )
        record.state = state
        return DownloadSnapshot(record: record, bytesDone: 0)
    }

    private func plan(
        _ episodes: [EpisodeRecord],
        podcasts: [PodcastRecord]? = nil,
        downloads: [DownloadSnapshot] = [],
        files: Set<String> = []
    ) -> EpisodeEnqueuePlan {
        EpisodeEnqueuePlan(
            episodes: episodes,
            podcasts: Dictionary(uniqueKeysWithValues: (podcasts ?? [podcast()]).map { ($0.id, $0) }),
            downloads: Dictionary(uniqueKeysWithValues: downloads.map { ($0.id, $0) }),
            fileExists: { files.contains($0) },
            placement: placement,
            priority: 3,
            expedite: true
        )
    }

    @Test func anEpisodeIsPlacedInItsPodcastsFolderByTheTemplate() throws {
        let planned = plan([episode(7, url: "https://cdn.example/a.mp3")])
        let request = try #require(planned.requests.first)
        #expect(request.directory == "/d/Show")
        #expect(request.episode == 7)
        #expect(request.priority == 3)
        #expect(request.now)
        #expect(planned.replaced.isEmpty)
    }

    @Test func theFeedsCredentialsGoOnlyToTheFeedsHost() {
        let planned = plan([
            episode(1, url: "https://FEEDS.example/e1.mp3"), episode(2, url: "https://cdn.example/e2.mp3"),
        ])
        #expect(planned.requests.map(\.user) == ["me", nil])
        #expect(planned.requests.map(\.password) == ["secret", nil])
    }

    @Test func aLiveDownloadOrAFileOnDiskIsTheAnswer() {
        let planned = plan(
            [
                episode(1, url: "https://cdn.example/1.mp3", download: 10),
                episode(2, url: "https://cdn.example/2.mp3", download: 20),
            ],
            downloads: [download(10, .paused, file: "/d/Show/1.mp3"), download(20, .completed, file: "/d/Show/2.mp3")],
            files: ["/d/Show/2.mp3"]
        )
        #expect(planned.requests.isEmpty)
        #expect(planned.replaced.isEmpty)
    }

    @Test func aCompletedDownloadWhoseFileIsGoneIsReplaced() {
        let planned = plan(
            [episode(1, url: "https://cdn.example/1.mp3", download: 10)],
            downloads: [download(10, .completed, file: "/d/Show/1.mp3")]
        )
        #expect(planned.requests.map(\.episode) == [1])
        #expect(planned.replaced == [10])
    }

    @Test func anEpisodeWithoutItsPodcastOrAnEnclosureIsSkippedWithItsReason() {
        var orphan = episode(2, url: "https://cdn.example/2.mp3")
        orphan.podcastID = 9
        let planned = plan([episode(1, url: nil), orphan])
        #expect(planned.requests.isEmpty)
        let reasons = planned.steps.compactMap { step -> String? in
            if case .skipped(_, let reason) = step { reason } else { nil }
        }
        #expect(reasons == ["no http or https enclosure", "its podcast is unsubscribed"])
    }
}
