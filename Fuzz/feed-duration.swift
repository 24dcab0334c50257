import SinglecastFeeds

/// Durations as feeds write them (`itunes:duration`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzFeedDuration(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    _ = FeedDuration.exactSeconds(text)
    _ = FeedDuration.seconds(text)
    return 0
}
