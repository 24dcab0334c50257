import FoundationEssentials

@testable import SinglecastDaemon

/// A gPodder API server's answers (subscription changes, upload answers, device lists, episode actions) and the
/// action timestamps in them: all from the network, parsed with the bounds of `SyncWire`.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzSyncJSON(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let body = Data(UnsafeBufferPointer(start: start, count: count))
    _ = try? SyncWire.subscriptionChanges(body)
    _ = try? SyncWire.uploadResponse(body)
    _ = try? SyncWire.devices(body)
    if let actions = try? SyncWire.actions(body) {
        for action in actions.actions { _ = action.reachedEnd }
    }
    _ = SyncWire.parseTimestamp(String(decoding: body, as: UTF8.self))
    return 0
}
