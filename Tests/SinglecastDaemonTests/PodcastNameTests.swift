import SinglecastProtocol
import Testing

@testable import SinglecastDaemon

/// How a `PODCAST` argument finds its podcast (``TitleMatch``): by id, by a folded title equal to it, else by a part
/// of a title; equal titles are refused with their ids.
@Suite struct PodcastNameTests {
    /// Subscribes one feed per title, in order; their ids are 1, 2, ….
    private func harness(titles: [String]) async throws -> PodcastHarness {
        let harness = try await PodcastHarness(enclosures: [])
        for (index, title) in titles.enumerated() {
            let url = "https://feeds.example/\(index).xml"
            let document = PodcastHarness.feed([]).replacing("<title>Show</title>", with: "<title>\(title)</title>")
            harness.feeds.documents.withLock { $0[url] = document }
            _ = try await harness.subscriptions.subscribe(SubscribeCommand(feed: .url(url)))
        }
        return harness
    }

    @Test func aNameMatchesAnyPartOfTheTitleWithoutCaseAccentsOrALeadingThe() async throws {
        let harness = try await harness(titles: ["The Daily", "Café Society", "Die Straße", "Tech Weekly"])
        for (name, title) in [
            ("daily", "The Daily"), ("THE DAILY", "The Daily"), ("cafe", "Café Society"), ("SOCIÉTY", "Café Society"),
            ("strasse", "Die Straße"), ("weekly", "Tech Weekly"), ("2", "Café Society"),
        ] {
            #expect(try await harness.subscriptions.resolve(name).title == title, "\(name)")
        }
        let unknown = await #expect(throws: PodcastError.self) { try await harness.subscriptions.resolve("monthly") }
        #expect(unknown?.code == .unknownPodcast("monthly"))
    }

    @Test func equalTitlesAreRefusedWithTheirIds() async throws {
        let harness = try await harness(titles: ["The Daily", "Daily Tech", "the daily"])
        let equal = await #expect(throws: PodcastError.self) { try await harness.subscriptions.resolve("Daily") }
        #expect(equal?.code == .ambiguousPodcast("Daily"))
        #expect(equal?.message == "'Daily' names 2 podcasts with that title: 1 'The Daily', 3 'the daily'; give the id")
        #expect(try await harness.subscriptions.resolve("daily tech").id == 2)
        let parts = await #expect(throws: PodcastError.self) { try await harness.subscriptions.resolve("ail") }
        #expect(
            parts?.message
                == "'ail' matches 3 podcasts: 1 'The Daily', 2 'Daily Tech', 3 'the daily'; give more of the title or the id"
        )
    }

    @Test func manyMatchesAreSummarisedAndLongTitlesCut() async throws {
        let long = "Talk of " + String(repeating: "very ", count: 20) + "long"
        let harness = try await harness(titles: (1...12).map { "Talk \($0)" } + [long + " A", long + " B"])
        let refused = await #expect(throws: PodcastError.self) { try await harness.subscriptions.resolve("talk") }
        let message = try #require(refused?.message)
        #expect(message.hasPrefix("'talk' matches 14 podcasts: 1 'Talk 1', 2 'Talk 2', "))
        #expect(message.hasSuffix(", 10 'Talk 10', … and 4 more; give more of the title or the id"))
        let cut = await #expect(throws: PodcastError.self) { try await harness.subscriptions.resolve("very long") }
        let shown = "Talk of very very very very very very very very very very very very very very v…"
        #expect(
            cut?.message
                == "'very long' matches 2 podcasts: 13 '\(shown)', 14 '\(shown)'; give more of the title or the id"
        )
    }
}
