import FoundationEssentials
import SinglecastFeeds

/// An OPML subscription list as `import` receives it.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOPML(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    _ = try? OPML.parse(Data(bytes: start, count: count))
    return 0
}
