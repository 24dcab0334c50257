import Testing

@testable import SinglecastDaemon

/// The stop of one refresh, which cancels the task the refresh runs in.
@Suite struct RefreshStopTests {
    /// Runs `body` under `stop` in a child task of its own, as the refresher runs each refresh.
    private func run(
        _ stop: RefreshStop,
        _ body: @escaping @Sendable () async -> Bool
    ) async -> (cancelled: Bool, stopped: Bool) {
        await withTaskGroup(of: (Bool, Bool).self) { group in
            group.addTask {
                let run = await stop.run { await body() }
                return (run.result, run.stopped)
            }
            return await group.next()!
        }
    }

    @Test func aStopWhileItRunsCancelsItsTask() async {
        let stop = RefreshStop()
        let started = Completion()
        let ended = await withTaskGroup(of: (cancelled: Bool, stopped: Bool)?.self) { group in
            group.addTask {
                await run(stop) {
                    started.succeed()
                    // Until cancelled: a minute is far longer than any test.
                    try? await Task.sleep(for: .seconds(60))
                    return Task.isCancelled
                }
            }
            group.addTask {
                try? await started.wait()
                stop.stop()
                return nil
            }
            var ended: (cancelled: Bool, stopped: Bool)?
            for await result in group { if let result { ended = result } }
            return ended
        }
        #expect(ended?.cancelled == true)
        #expect(ended?.stopped == true)
    }

    @Test func aStopBeforeItBeginsCancelsItAsItBegins() async {
        let stop = RefreshStop()
        stop.stop()
        let ended = await run(stop) { Task.isCancelled }
        #expect(ended.cancelled)
        #expect(ended.stopped)
    }

    @Test func aRunNobodyStopsIsNotCancelled() async {
        let stop = RefreshStop()
        let ended = await run(stop) {
            await Task.yield()
            return Task.isCancelled
        }
        #expect(!ended.cancelled)
        #expect(!ended.stopped)
        // Once it ended, a stop does nothing (the task it ran in may be gone).
        stop.stop()
    }
}
