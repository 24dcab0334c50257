import Foundation
import SinglecastTestServers
import Testing

@testable import SinglecastHTTP

/// A speed limit set on transfers that are already running: smooth, accurate, and never a cause of stalls.
@Suite struct SpeedLimitTests {
    private enum Result: Sendable {
        case samples([Int64])
        case ending(Ending)
    }

    /// Two transfers start unlimited from a server that sends faster than the limit, so the sockets fill up; then a
    /// 200 kB/s limit must hold over every 10 s window without bursts, and the low-speed timeout (1024 bytes/s for
    /// 5 s) must never fire because of the engine's own limiter.
    @Test(.timeLimit(.minutes(1))) func limitOnRunningTransfersIsSmoothAndNeverStalls() async throws {
        let server = try FaultServer()
        let directory = try TemporaryDirectory(prefix: "singlecast-http-test")
        let files = try (0..<2).map { try TestFile("limited\($0).part", in: directory) }
        let options = TransferOptions(userAgent: "singlecast-tests", lowSpeedLimit: 1024, lowSpeedTime: .seconds(5))
        // /slow sends 64 KiB every 100 ms (640 KB/s), three times the per-transfer share.
        let requests = files.map { $0.request(server.url("/slow/40000000/5000000"), options: options) }
        let limit: Int64 = 200_000

        let (samples, endings) = try await withEngine { engine in
            try await withThrowingTaskGroup(of: Result.self) { group in
                for request in requests {
                    group.addTask { .ending(Ending(await engine.transfer(request, progress: { _ in }))) }
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(1))
                    engine.setSpeedLimit(limit)
                    // Three seconds for what was in flight before the limit (the sockets' buffers) to drain.
                    try await Task.sleep(for: .seconds(3))
                    var samples: [Int64] = []
                    for _ in 0...20 {
                        samples.append(files.reduce(0) { $0 + $1.size })
                        try await Task.sleep(for: .seconds(1))
                    }
                    return .samples(samples)
                }
                var samples: [Int64] = []
                var endings: [Ending] = []
                while let result = try await group.next() {
                    switch result {
                    case .samples(let values):
                        samples = values
                        group.cancelAll()  // stops the transfers
                    case .ending(let ending):
                        endings.append(ending)
                    }
                }
                return (samples, endings)
            }
        }

        #expect(endings.count == 2)
        #expect(endings.allSatisfy { if case .failed(.cancelled, _) = $0 { true } else { false } }, "\(endings)")
        let perSecond = zip(samples, samples.dropFirst()).map { $1 - $0 }
        print("bytes per second under a \(limit) B/s limit: \(perSecond)")
        let expected = Double(limit) * 10
        for start in 0...(samples.count - 11) {
            let received = Double(samples[start + 10] - samples[start])
            #expect(
                abs(received - expected) <= expected * 0.1,
                "seconds \(start)-\(start + 10): \(Int(received)) bytes instead of \(Int(expected))"
            )
        }
    }

    /// The token bucket behind the limit: no saved-up burst, a debt after a big chunk, and how long to pause.
    @Test func rateLimiterKeepsTransfersNearTheirShare() {
        let second: UInt64 = 1_000_000_000
        var limiter = ReceiveRateLimiter(now: 0)
        #expect(limiter.mayReceive, "unlimited")
        limiter.setRate(100_000, now: 0)
        #expect(!limiter.mayReceive, "a transfer that was unlimited starts with no tokens")
        #expect(limiter.nanosecondsUntilReceiving == 10_000)  // one byte's worth
        limiter.refill(now: 10 * second)
        #expect(limiter.tokens == 16 * 1024, "ten quiet seconds save up only the capacity, not 1 MB")
        limiter.consume(48 * 1024)
        #expect(!limiter.mayReceive)
        #expect(limiter.nanosecondsUntilReceiving == UInt64((32.0 * 1024 + 1) / 100_000 * 1e9))
        limiter.setRate(0, now: 10 * second)
        #expect(limiter.mayReceive, "lifting the limit lets a paused transfer go on at once")
    }
}
