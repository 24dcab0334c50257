import SinglecastDaemon

/// Runs the queue's loop while `body` runs, then stops it.
func whileRunning<T: Sendable>(_ queue: DownloadQueue, _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await queue.run() }
        defer { queue.shutdown() }
        return try await body()
    }
}

/// Polls until `condition` holds or 120 s pass; returns whether it held.
///
/// Generous on purpose: in a full `swift test` on two cores, blocking integration tests can hold both threads of the
/// cooperative pool for half a minute, and the queue under test runs on that pool.
func eventually(
    every interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}
