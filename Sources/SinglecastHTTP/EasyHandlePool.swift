import CCurl

/// Easy handles of finished fetches, reset and kept for the next fetch: creating a handle, setting it up and cleaning
/// it up for every feed was a third of the engine thread's CPU in a refresh of 1,000 unchanged feeds
/// (docs/ARCHITECTURE.md, Refreshing many feeds).
///
/// Connections live in the multi handle's connection cache, not in an easy handle, so reuse changes nothing there.
/// `curl_easy_reset` puts every option back to its default: no header list, range, callback, private pointer, error
/// buffer, credential or timeout of the transfer before reaches the next one (each transfer sets all of its own).
/// Only fetches are kept (``mayKeep(_:succeeded:cancelled:paused:)``), so downloads, whose handles read 120 KiB chunks,
/// still get a fresh handle each. Used on the engine thread only.
final class EasyHandlePool {
    private var idle: [UnsafeMutableRawPointer] = []
    /// The most idle handles kept: about the fetches that run at once.
    let capacity: Int

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var idleCount: Int { idle.count }

    /// A kept handle, else a new one; `nil` when libcurl cannot make one.
    func take() -> UnsafeMutableRawPointer? { idle.popLast() ?? curl_easy_init() }

    /// Takes back the handle of a finished transfer (already removed from the multi handle): reset and kept while
    /// there is room and `keep` says so, cleaned up otherwise.
    func give(_ easy: UnsafeMutableRawPointer, keep: Bool) {
        guard keep, idle.count < capacity else {
            curl_easy_cleanup(easy)
            return
        }
        curl_easy_reset(easy)
        idle.append(easy)
    }

    /// Cleans up every kept handle; before the multi handle goes.
    func drain() {
        for easy in idle { curl_easy_cleanup(easy) }
        idle = []
    }

    /// Whether a transfer's handle may serve another: a fetch (small reads, never a download) that ended on its own,
    /// without error, cancellation or pause, on a connection it was allowed to keep. Anything else took a path
    /// (an abort inside a callback, a paused receive) after which a fresh handle is the safer start. Pure.
    ///
    /// - Parameter succeeded: libcurl ended the transfer with `CURLE_OK`.
    static func mayKeep(_ request: TransferRequest, succeeded: Bool, cancelled: Bool, paused: Bool) -> Bool {
        !request.readsLargeChunks && !request.freshConnection && succeeded && !cancelled && !paused
    }
}

@available(*, unavailable)
extension EasyHandlePool: Sendable {}
