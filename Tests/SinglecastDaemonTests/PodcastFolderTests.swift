import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// A podcast's folder below the download directory: its own, even when another podcast has the same title, and gone
/// with its files when it is unsubscribed with `--delete-files`.
@Suite struct PodcastFolderTests {
    private let enclosures = ["http://cdn.example/e2.mp3", "http://cdn.example/e1.mp3"]

    /// Subscribes with `latest:2` and waits for both files.
    private func downloaded(_ harness: PodcastHarness) async throws {
        _ = try await harness.subscriptions.subscribe(
            SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(2))
        )
        #expect(try await harness.completed(2))
    }

    @Test func unsubscribingWithItsFilesRemovesTheEmptyFolderAndNothingElse() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        let root = harness.home.file("episodes")
        try await harness.whileRunning {
            try await downloaded(harness)
            #expect(FileManager.default.fileExists(atPath: root + "/Show"))
            let outcome = try await harness.subscriptions.unsubscribe(
                UnsubscribeCommand(podcast: "Show", deleteFiles: true)
            )
            #expect(outcome.deletedFiles.count == 2)
            #expect(!FileManager.default.fileExists(atPath: root + "/Show"), "the empty folder stayed")
            #expect(FileManager.default.fileExists(atPath: root), "the download directory went too")
        }
    }

    @Test func aFolderWithSomethingElseInItStays() async throws {
        let harness = try await PodcastHarness(enclosures: enclosures)
        let root = harness.home.file("episodes")
        try await harness.whileRunning {
            try await downloaded(harness)
            let notes = root + "/Show/notes.txt"
            #expect(FileManager.default.createFile(atPath: notes, contents: Data("mine".utf8)))
            _ = try await harness.subscriptions.unsubscribe(UnsubscribeCommand(podcast: "Show", deleteFiles: true))
            #expect(FileManager.default.fileExists(atPath: notes))
        }
    }

    @Test func aSecondPodcastOfTheSameTitleGetsAFolderOfItsOwn() async throws {
        let otherFeed = "https://feeds.example/other.xml"
        let others = ["http://cdn.example/other/e2.mp3", "http://cdn.example/other/e1.mp3"]
        let harness = try await PodcastHarness(enclosures: enclosures + others)
        // Both feeds are titled "Show", and both name their newest episode "Episode 2" of the same day.
        harness.feeds.documents.withLock {
            $0[PodcastHarness.feedURL] = PodcastHarness.feed(enclosures)
            $0[otherFeed] = PodcastHarness.feed(others)
        }
        let root = harness.home.file("episodes")
        try await harness.whileRunning {
            let first = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(PodcastHarness.feedURL), autoDownload: .latest(2))
            )
            let second = try await harness.subscriptions.subscribe(
                SubscribeCommand(feed: .url(otherFeed), autoDownload: .latest(2))
            )
            #expect(try await harness.completed(4))
            let stored = Dictionary(uniqueKeysWithValues: try await harness.store.podcasts().map { ($0.id, $0) })
            #expect(stored[first.podcast.record.id]?.folder == nil)
            #expect(stored[second.podcast.record.id]?.folder == "Show (2)")
            let files = await harness.queue.list(state: nil).map(\.file)
            #expect(Set(files).count == 4, "files collided: \(files)")
            let own = try FileManager.default.contentsOfDirectory(atPath: root + "/Show (2)")
            #expect(own.count == 2)
            // Unsubscribing the first leaves the second's folder alone.
            _ = try await harness.subscriptions.unsubscribe(
                UnsubscribeCommand(podcast: String(first.podcast.record.id), deleteFiles: true)
            )
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Show (2)").count == 2)
            #expect(!FileManager.default.fileExists(atPath: root + "/Show"))
        }
    }
}
