import FoundationEssentials
import SinglecastFeeds

@testable import SinglecastDaemon

/// Dates as feeds write them (`pubDate`, `dc:date`, `published`): every reader, then what the daemon does with an
/// episode's date (Unix milliseconds in the store, RFC 822 text in an export, a date in a file name).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzFeedDate(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    for date in [FeedDate.parse(text), FeedDate.parseRFC822(text), FeedDate.parseISO8601(text)] {
        guard let date else { continue }
        var episode = Episode(title: "episode")
        episode.published = date
        _ = FeedFetcher.record(of: episode, feedOrder: 0, now: 1_780_000_000_000)
        _ = FeedDate.rfc822String(date)
    }
    return 0
}
