import SinglecastFeeds

/// A web page given to `subscribe` (any server's bytes): the feeds its `<link rel="alternate">` tags name.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzFeedLinks(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let page = FeedLinks.scan(UnsafeBufferPointer(start: start, count: count), pageURL: "https://example.com/a/b.html")
    precondition(Set(page.feeds.map(\.url)).count == page.feeds.count, "no feed is named twice")
    if let first = page.feeds.first, page.feeds.contains(where: { $0.kind == .rss }) {
        precondition(first.kind == .rss, "an RSS feed comes first when there is one")
    }
    return 0
}
