import Foundation
import SinglecastTestServers
import Testing

@testable import SinglecastHTTP

/// A speed limit set on transfers that are already running: smooth, accurate, and never a cause of stalls.
@Suite struct SpeedLimitTests {
    private enum Result: Sendable {
        case samples([Sample])
        case ending(Ending)
    }

    /// Bytes on disk, and when they were counted: a sleep on a loaded machine may overshoot its second.
    private struct Sample: Sendable {
        var bytes: Int64
        var at: ContinuousClock.Instant
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
                    var samples: [Sample] = []
                    for _ in 0...20 {
                        samples.append(Sample(bytes: files.reduce(0) { $0 + $1.size }, at: .now))
                        try await Task.sleep(for: .seconds(1))
                    }
                    return .samples(samples)
                }
                var samples: [Sample] = []
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
        let perSample = zip(samples, samples.dropFirst()).map { $1.bytes - $0.bytes }
        print("bytes per sample (about a second) under a \(limit) B/s limit: \(perSample)")
        for start in 0...(samples.count - 11) {
            let window = samples[start + 10].at - samples[start].at
            let seconds = Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
            let expected = Double(limit) * seconds
            let received = Double(samples[start + 10].bytes - samples[start].bytes)
            #expect(
                abs(received - expected) <= expected * 0.1,
                "samples \(start)-\(start + 10) (\(window)): \(Int(received)) bytes instead of \(Int(expected))"
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
