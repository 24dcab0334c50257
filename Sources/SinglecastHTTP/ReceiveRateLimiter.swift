/// One transfer's share of the engine's speed limit, as a token bucket: the engine pauses the transfer
/// (`CURL_WRITEFUNC_PAUSE`) when it runs out of tokens and resumes it when tokens are back.
///
/// The engine limits instead of libcurl because libcurl's own limit (`CURLOPT_MAX_RECV_SPEED_LARGE`) misbehaves
/// when it is set on a running transfer: libcurl 7.88 drains the socket buffer (megabytes, once a fast server has
/// filled it) in one burst and then waits tens of seconds to make the average right, and its low-speed check runs
/// during that wait, so two 40 MB downloads limited to 100 KB/s mid-transfer grew in 8 MB steps and failed as
/// "stalled". Here a transfer takes at most one chunk (libcurl hands the write callback at most 16 KiB at a time)
/// beyond its tokens, and libcurl skips the low-speed check of a paused transfer.
///
/// Pure: the engine passes the time in, so the arithmetic is tested without a clock.
struct ReceiveRateLimiter: Sendable, Hashable {
    /// Bytes per second; `0`: unlimited.
    private(set) var rate: Int64 = 0
    /// Bytes that may be received now; negative after a chunk larger than what was left.
    private(set) var tokens: Double = 0
    /// When ``tokens`` was last brought up to date, in nanoseconds of a monotonic clock.
    private var updated: UInt64

    init(now: UInt64) {
        updated = now
    }

    /// At most a tenth of a second's worth (but one whole chunk) is saved up, so that after a quiet spell the
    /// transfer does not burst.
    private var capacity: Double { max(16 * 1024, Double(rate) / 10) }

    /// Changes the rate (`0`: unlimited). Tokens saved up at the old rate are kept up to the new capacity; a
    /// transfer that was unlimited starts with none.
    mutating func setRate(_ newRate: Int64, now: UInt64) {
        refill(now: now)
        if rate == 0 { tokens = 0 }
        rate = max(0, newRate)
        tokens = min(tokens, capacity)
    }

    /// Adds the tokens earned since the last update.
    mutating func refill(now: UInt64) {
        defer { updated = now }
        guard rate > 0, now > updated else { return }
        tokens = min(capacity, tokens + Double(rate) * Double(now - updated) / 1e9)
    }

    /// Whether a chunk may be received now.
    var mayReceive: Bool { rate == 0 || tokens > 0 }

    /// Takes `count` received bytes out of the bucket.
    mutating func consume(_ count: Int) {
        if rate > 0 { tokens -= Double(count) }
    }

    /// How long until ``mayReceive`` turns true, in nanoseconds (`0`: it is already).
    var nanosecondsUntilReceiving: UInt64 {
        guard !mayReceive else { return 0 }
        return UInt64((-tokens + 1) / Double(rate) * 1e9)
    }
}
