import FoundationEssentials
import SinglecastFeeds

@testable import SinglecastDaemon

/// A whole feed document, as a subscription reads it: encoding detection, the XML reader, the builder, HTML to
/// text, URL resolution, then each episode as the store keeps it; read both ways the daemon reads feeds (whole,
/// and in batches). Each enclosure URL's stored form must be its own parse, and its quick reading the full one's.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzFeed(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let data = Data(bytes: start, count: count)
    if let feed = try? FeedParser.parse(data, url: "https://example.com/podcast/feed.xml") {
        for (order, episode) in feed.episodes.enumerated() {
            _ = FeedFetcher.record(of: episode, feedOrder: order, now: 1_780_000_000_000)
            // A completion keeps a download's stored URL unparsed when libcurl reports it back unchanged.
            if let text = episode.enclosure?.url, let stored = try? HTTPURL(text).string {
                precondition((try? HTTPURL(stored).string) == stored, "HTTPURL changed its own form \(stored)")
            }
            // A plain URL taken as written must be what the full parse makes of it.
            if let text = episode.enclosure?.url {
                let quick = try? HTTPURL(text)
                let full = try? HTTPURL(parsing: text)
                precondition(quick == full, "HTTPURL read \(text) otherwise than its full parse")
            }
        }
    }
    _ = try? FeedParser.parse(data, url: nil, batchSize: 7) { _ in }
    return 0
}
