import Foundation
import SinglecastProtocol
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// `podcasts` with `limit` and `after`: pages cut by id, on the catalogue (``Subscriptions/list(_:)``) and on the wire.
@Suite struct PodcastPagingTests {
    /// A harness subscribed to `count` feeds, each with `episodes` episodes; their ids in subscription order.
    private func subscribed(_ count: Int, episodes: Int = 2) async throws -> (PodcastHarness, [Int64]) {
        let harness = try await PodcastHarness(enclosures: [])
        var ids: [Int64] = []
        for index in 0..<count { ids.append(try await subscribe(index, harness, episodes: episodes)) }
        return (harness, ids)
    }

    private func subscribe(_ index: Int, _ harness: PodcastHarness, episodes: Int = 2) async throws -> Int64 {
        let url = "https://feeds.example/\(index).xml"
        let enclosures = (0..<episodes).map { "http://cdn.example/\(index)-\($0).mp3" }
        harness.feeds.documents.withLock { $0[url] = PodcastHarness.feed(enclosures) }
        return try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(url))).podcast.record.id
    }

    private func page(_ harness: PodcastHarness, after: Int64? = nil, limit: Int?) async throws -> PodcastListing {
        try await harness.subscriptions.list(PodcastPage(after: after, limit: limit))
    }

    @Test func pagesWalkEveryPodcastOnceInIDOrderWithTheWholeListingsFigures() async throws {
        let (harness, ids) = try await subscribed(5)
        // The first pages count their own podcasts' episodes (no listing filled the cache yet).
        let first = try await page(harness, limit: 2)
        let middle = try await page(harness, after: first.next, limit: 2)
        let last = try await page(harness, after: middle.next, limit: 2)
        #expect(first.podcasts.map(\.record.id) == Array(ids[0..<2]))
        #expect(first.next == ids[1])
        #expect(middle.podcasts.map(\.record.id) == Array(ids[2..<4]))
        #expect(middle.next == ids[3])
        #expect(last.podcasts.map(\.record.id) == [ids[4]])
        #expect(last.next == nil)

        let whole = try await harness.subscriptions.list(PodcastPage())
        #expect(whole.next == nil)
        #expect(first.podcasts + middle.podcasts + last.podcasts == whole.podcasts)
        #expect(whole.podcasts.allSatisfy { $0.counts == EpisodeCounts(total: 2, new: 0) })
        // Now from the counts the whole listing cached: the same page.
        #expect(try await page(harness, after: first.next, limit: 2) == middle)
    }

    @Test func aLimitOfExactlyTheRestSaysNoMoreFollow() async throws {
        let (harness, ids) = try await subscribed(3)
        #expect(try await page(harness, limit: 3) == PodcastListing(podcasts: try await all(harness), next: nil))
        #expect(try await page(harness, after: ids[0], limit: 2).next == nil)
        #expect(try await page(harness, limit: .max).podcasts.count == 3)
        #expect(try await page(harness, after: ids[0], limit: nil).podcasts.map(\.record.id) == Array(ids[1...]))
    }

    private func all(_ harness: PodcastHarness) async throws -> [PodcastSummary] {
        try await harness.subscriptions.list(PodcastPage()).podcasts
    }

    @Test func noPodcastsOrACursorPastTheEndIsAnEmptyLastPage() async throws {
        let (empty, _) = try await subscribed(0)
        #expect(try await page(empty, limit: 50) == PodcastListing(podcasts: [], next: nil))
        let (harness, ids) = try await subscribed(2)
        #expect(try await page(harness, after: ids[1], limit: 50) == PodcastListing(podcasts: [], next: nil))
        #expect(try await page(harness, after: .max, limit: 1) == PodcastListing(podcasts: [], next: nil))
        #expect(try await page(harness, after: .min, limit: 1).podcasts.map(\.record.id) == [ids[0]])
    }

    /// Keyset paging: unsubscribing podcasts already listed (the cursor's own too) and subscribing new ones between
    /// two pages lists no podcast twice and skips none that stayed; the new one comes on a later page.
    @Test func podcastsAddedAndRemovedBetweenPagesAreNeitherRepeatedNorSkipped() async throws {
        let (harness, ids) = try await subscribed(4)
        let first = try await page(harness, limit: 2)
        #expect(first.podcasts.map(\.record.id) == Array(ids[0..<2]))
        for id in ids[0..<2] {
            _ = try await harness.subscriptions.unsubscribe(UnsubscribeCommand(podcast: String(id)))
        }
        let added = try await subscribe(4, harness)
        let second = try await page(harness, after: first.next, limit: 2)
        #expect(second.podcasts.map(\.record.id) == Array(ids[2..<4]))
        let third = try await page(harness, after: second.next, limit: 2)
        #expect(third.podcasts.map(\.record.id) == [added])
        #expect(third.next == nil)
    }

    /// The one rule of listings' limits: `podcasts` refuses what `episodes`, `inbox` and `downloads` refuse, alike.
    @Test(arguments: [0, -1, Int.min]) func aLimitBelowOneIsRefusedAsEveryListingRefusesIt(limit: Int) async throws {
        let (harness, _) = try await subscribed(1)
        let podcasts = #expect(throws: PodcastError.self) { try PodcastPage(limit: limit) }
        let episodes = await #expect(throws: PodcastError.self) {
            try await harness.subscriptions.episodes(EpisodeQuery(podcast: "Show", limit: limit))
        }
        let inbox = await #expect(throws: PodcastError.self) { try await harness.subscriptions.inbox(limit: limit) }
        let downloads = #expect(throws: PodcastError.self) { try DownloadListQuery(limit: limit) }
        #expect(podcasts != nil && podcasts == episodes && podcasts == inbox && podcasts == downloads)
        #expect(RPCError(domain: try #require(podcasts))?.data?.details?["parameter"] == "limit")
    }

    // MARK: on the wire

    private func result(_ answer: RPCIncoming) throws -> PodcastsResult {
        guard case .result(_, let value) = answer else { throw RPCErrorMismatch(answer: answer) }
        return try WireCoding.decode(PodcastsResult.self, from: value)
    }

    private func error(_ answer: RPCIncoming) throws -> RPCError {
        guard case .error(_, let error) = answer else { throw RPCErrorMismatch(answer: answer) }
        return error
    }

    @Test func theRouterReadsLimitAndAfterAndRefusesWhatEpisodesRefuses() async throws {
        try await InProcessRouter.with { daemon in
            let whole = try await daemon.answer(#"{"jsonrpc":"2.0","id":1,"method":"podcasts"}"#)
            #expect(try result(whole) == PodcastsResult(podcasts: []))
            // Accepted while `podcasts` took no parameters, so still accepted.
            for empty in ["[]", "{}"] {
                let answer = try await daemon.answer(
                    #"{"jsonrpc":"2.0","id":1,"method":"podcasts","params":\#(empty)}"#
                )
                #expect(try result(answer) == PodcastsResult(podcasts: []), "\(empty)")
            }
            let paged = try await daemon.answer(
                #"{"jsonrpc":"2.0","id":2,"method":"podcasts","params":{"limit":50,"after":7}}"#
            )
            #expect(try result(paged) == PodcastsResult(podcasts: [], next: nil))
            let refused = try error(
                try await daemon.answer(#"{"jsonrpc":"2.0","id":3,"method":"podcasts","params":{"limit":0}}"#)
            )
            let inbox = try error(
                try await daemon.answer(#"{"jsonrpc":"2.0","id":4,"method":"inbox","params":{"limit":0}}"#)
            )
            #expect(refused == inbox)
            #expect(refused.reason == "invalid_params" && refused.data?.details?["parameter"] == "limit")
            let wrongType = try error(
                try await daemon.answer(#"{"jsonrpc":"2.0","id":5,"method":"podcasts","params":{"after":"x"}}"#)
            )
            #expect(wrongType.data?.details?["parameter"] == "after")
            let unknown = try error(
                try await daemon.answer(#"{"jsonrpc":"2.0","id":6,"method":"podcasts","params":{"offset":5}}"#)
            )
            #expect(unknown.reason == "invalid_params")
        }
    }
}
