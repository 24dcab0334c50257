@testable import SinglecastDaemon

/// A Trash info file (any program may write one into the Trash singlecast reads for `max_storage`): which of them
/// are singlecast's own, and where their files came from. The first line is the file system's top directory.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTrashInfo(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let top = parts.first.map(String.init) ?? "/"
    let info = parts.count > 1 ? String(parts[1]) : ""
    if let original = Trash.ownOriginal(info: info, top: top) {
        precondition(original.hasPrefix("/") || !top.hasPrefix("/"), "a path read back is absolute")
        precondition(!original.split(separator: "/").contains(".."), "no path read back climbs out")
    }
    if let episode = Trash.ownEpisode(info: info) { precondition(episode > 0, "an episode id read back is positive") }
    _ = Trash.percentDecoded(info)
    return 0
}
