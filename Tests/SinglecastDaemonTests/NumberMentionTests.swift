import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// Episode ids and download ids are both small integers: a number given to the wrong kind of command is refused
/// with what it is and the command that takes it, and a download names its episode.
@Suite struct NumberMentionTests {
    private let enclosures = ["http://cdn.example/e3.mp3", "http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]

    /// Downloads 1 to 5 are cancelled URL downloads, so the newest episode's download, 6, shares no number with an
    /// episode, and no episode's number is a listed download.
    private func subscribed(_ harness: PodcastHarness) async throws -> (episodes: [EpisodeRecord], download: Int64) {
        let urls = (1...5).map {
            DownloadRequest(url: "http://cdn.example/other\($0).mp3", directory: harness.home.file("u"))
        }
        let queued = try await harness.queue.enqueue(urls)
        _ = try await harness.queue.cancel(queued.map(\.id), deletePartial: true)
        _ = try await harness.subscriptions.subscribe(
            SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(1))
        )
        #expect(try await harness.completed(1))
        let episodes = try await harness.episodes()
        return (episodes, try #require(episodes[0].downloadID))
    }

    @Test func aDownloadCommandGivenAnEpisodesNumberSaysWhatItIs() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            let (episodes, download) = try await subscribed(harness)
            #expect(download == 6)
            let newest = episodes[0]
            do {
                _ = try await harness.queue.pause(.ids([newest.id]))
                Issue.record("pause took episode \(newest.id) for a download")
            } catch let error as DownloadQueueError {
                #expect(error.code == .unknownDownload(newest.id))
                #expect(
                    error.message
                        == "there is no download \(newest.id); episode \(newest.id) is \"\(newest.title)\" of \"Show\" "
                        + "(its download is \(download))"
                )
            }
            let older = episodes[1]
            await #expect(
                throws: DownloadQueueError.unknownDownload(
                    older.id,
                    episode: EpisodeMention(older, podcast: "Show", download: .none)
                )
            ) {
                try await harness.queue.show(older.id)
            }
            await #expect(
                throws: DownloadQueueError.unknownDownload(
                    older.id,
                    episode: EpisodeMention(older, podcast: "Show", download: .none)
                )
            ) {
                try await harness.queue.move(older.id, to: .top)
            }
            let message = DownloadQueueError.unknownDownload(
                older.id,
                episode: EpisodeMention(older, podcast: "Show", download: .none)
            ).message
            #expect(
                message
                    == "there is no download \(older.id); episode \(older.id) is \"\(older.title)\" of \"Show\" "
                    + "(not downloaded; 'singlecastctl enqueue \(older.id)' downloads it)"
            )
            // A number that is neither says where the downloads are listed.
            await #expect(throws: DownloadQueueError.unknownDownload(99)) { try await harness.queue.retry(.ids([99])) }
            #expect(
                DownloadQueueError.unknownDownload(99).message
                    == "there is no download 99; 'singlecastctl downloads' lists them"
            )
        }
    }

    @Test func anEpisodeCommandGivenADownloadsNumberSaysWhatItIs() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            let (episodes, download) = try await subscribed(harness)
            let newest = episodes[0]
            for attempt in [
                { _ = try await harness.subscriptions.episodeDetails([download]) },
                {
                    _ = try await harness.subscriptions.enqueue(
                        EpisodeEnqueueCommand(episodes: [download], priority: nil)
                    )
                },
                { _ = try await harness.subscriptions.redownload(episodes: [download]) },
            ] as [() async throws -> Void] {
                do {
                    try await attempt()
                    Issue.record("episode \(download) was found")
                } catch let error as PodcastError {
                    #expect(error.code == .unknownEpisode(download))
                    #expect(
                        error.message
                            == "there is no episode \(download); download \(download) is the download of episode "
                            + "\(newest.id), \"\(newest.title)\" of \"Show\", completed "
                            + "('singlecastctl show \(download)' shows it)"
                    )
                }
            }
        }
    }

    @Test func downloadsNameTheirEpisodeAndFilterByPodcast() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            let (episodes, download) = try await subscribed(harness)
            let url = try await harness.queue.enqueue([
                DownloadRequest(url: "http://cdn.example/loose.mp3", directory: harness.home.file("u"))
            ])[0].id
            let all = try await harness.subscriptions.downloads(DownloadListQuery())
            #expect(Set(all.map(\.download.id)) == [download, url])
            let listed = try #require(all.first { $0.download.id == download })
            #expect(listed.episode?.id == episodes[0].id)
            #expect(listed.episode?.title == episodes[0].title)
            #expect(listed.episode?.podcast == "Show")
            #expect(all.first { $0.download.id == url }?.episode == nil)
            let shown = try await harness.subscriptions.download(download)
            #expect(shown.episode?.id == episodes[0].id)

            let ofShow = try await harness.subscriptions.downloads(DownloadListQuery(podcast: "show"))
            #expect(ofShow.map(\.download.id) == [download])
            #expect(try await harness.subscriptions.downloads(DownloadListQuery(limit: 1)).count == 1)
            #expect(throws: PodcastError.self) { try DownloadListQuery(limit: 0) }
            await #expect(throws: PodcastError.self) {
                try await harness.subscriptions.downloads(DownloadListQuery(podcast: "nothing like it"))
            }
        }
    }
}

extension NumberMentionTests {
    @Test func enqueueingAnEpisodeSaysWhichEpisodeItTookTheNumberFor() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        try await harness.whileRunning {
            let (episodes, download) = try await subscribed(harness)
            let older = episodes[1]
            let queued = try await harness.subscriptions.enqueue(
                EpisodeEnqueueCommand(episodes: [older.id], priority: nil)
            )
            #expect(queued.map(\.episode?.id) == [older.id])
            #expect(queued.first?.episode?.podcast == "Show")
            #expect(queued.first?.episode?.title == older.title)
            // Asked again beside the newest one, whose download is done: each answer names its own episode.
            let again = try await harness.subscriptions.enqueue(
                EpisodeEnqueueCommand(episodes: [episodes[0].id, older.id], priority: nil)
            )
            #expect(again.map(\.existing) == [true, true])
            #expect(again.map(\.id) == [download, queued[0].id])
            #expect(again.map(\.episode?.id) == [episodes[0].id, older.id])
        }
    }
}
