import Foundation
import SinglecastDaemon
import SinglecastStore
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `on_complete` runner as a service: real programs (shell scripts), a real store, a real stop.
@Suite struct HookRunnerTests {
    /// A store holding one completed download whose hook is pending, and that download.
    private func pendingHook(_ home: TemporaryDirectory) async throws -> (Store, DownloadRecord) {
        let store = try Store(path: home.file("singlecast.sqlite3"))
        let queued = DownloadRecord(url: "http://a.example/a.mp3", directory: home.path, fileName: "a.mp3", addedAt: 0)
        var record = try await store.enqueue([queued])[0].record
        record.state = .completed
        try await store.save([record], pendingHooks: [record.id])
        return (store, record)
    }

    /// A program that writes its process id to `started`, runs for `seconds`, then marks its end (or, with
    /// `endless`, becomes a `sleep` of that process id, which the test ends).
    private func program(_ home: TemporaryDirectory, seconds: Double, endless: Bool = false) throws -> String {
        let path = home.file("hook.sh")
        let end = endless ? "exec sleep \(seconds)" : "sleep \(seconds)\ntouch \(home.file("ended"))"
        try "#!/bin/sh\necho $$ > \(home.file("started"))\n\(end)\n".write(
            toFile: path,
            atomically: true,
            encoding: .utf8
        )
        chmod(path, 0o755)
        return path
    }

    /// Waits (at most 20 s) for a file the program writes.
    private func appears(_ path: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: path) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    @Test func aStopWaitsForTheRunningHookAndStartsNoOther() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-hooks")
        let (store, record) = try await pendingHook(home)
        let runner = HookRunner(store: store, logger: Logger(level: .error), stopTimeout: .seconds(30))
        let hook = try program(home, seconds: 0.5)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await runner.run() }
            runner.run(hook, for: record)
            #expect(try await appears(home.file("started")))
            runner.shutdown()
            // A completion after the stop: its hook stays pending, for the next start.
            try await store.save([record], pendingHooks: [record.id])
            runner.run(hook, for: record)
            try await group.waitForAll()
        }
        #expect(FileManager.default.fileExists(atPath: home.file("ended")), "the stop did not wait for the hook")
        #expect(try await store.pendingHooks() == [record.id])
    }

    @Test func aStopWaitsNoLongerThanItsBound() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-hooks")
        let (store, record) = try await pendingHook(home)
        let runner = HookRunner(store: store, logger: Logger(level: .error), stopTimeout: .milliseconds(200))
        let hook = try program(home, seconds: 30, endless: true)
        let stopped = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await runner.run() }
            runner.run(hook, for: record)
            #expect(try await appears(home.file("started")))
            try await Task.sleep(for: .milliseconds(50))  // the process id is written
            let stop = ContinuousClock.now
            runner.shutdown()
            try await group.waitForAll()
            return ContinuousClock.now - stop
        }
        #expect(stopped < .seconds(5), "the stop waited \(stopped)")
        #expect(try await store.pendingHooks().isEmpty, "taken before it started: it never runs twice")
        // Killed by the stop; should that fail, end it, so nothing outlives the test.
        let pid = try String(contentsOfFile: home.file("started"), encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        if let pid = pid_t(pid) { kill(pid, SIGTERM) }
    }

    /// `hook_stop_timeout` bounds the stop: a program that ignores the SIGTERM a stop brings (systemd sends it to
    /// the whole unit) is killed once the configured bound has passed, and nothing of it outlives the daemon.
    @Test func aHookIgnoringSIGTERMIsKilledAfterTheConfiguredBound() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-hooks")
        let (store, record) = try await pendingHook(home)
        let configuration = try DaemonConfiguration.parse("hook_stop_timeout = 400ms\n", path: "/c", home: home.path)
        #expect(configuration.hookStopTimeout == .milliseconds(400))
        #expect(DaemonConfiguration().hookStopTimeout == .seconds(10))
        let runner = HookRunner(store: store, logger: Logger(level: .error), stopTimeout: configuration.hookStopTimeout)
        let path = home.file("stubborn.sh")
        try "#!/bin/sh\ntrap '' TERM\necho $$ > \(home.file("started"))\nwhile :; do sleep 0.05; done\n".write(
            toFile: path,
            atomically: true,
            encoding: .utf8
        )
        chmod(path, 0o755)
        let (stopped, pid) = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await runner.run() }
            runner.run(path, for: record)
            #expect(try await appears(home.file("started")))
            try await Task.sleep(for: .milliseconds(50))  // the process id is written
            let pid = try #require(
                pid_t(
                    String(contentsOfFile: home.file("started"), encoding: .utf8).trimmingCharacters(
                        in: .whitespacesAndNewlines
                    )
                )
            )
            #expect(kill(pid, SIGTERM) == 0)
            let stop = ContinuousClock.now
            runner.shutdown()
            try await group.waitForAll()
            return (ContinuousClock.now - stop, pid)
        }
        #expect(stopped >= .milliseconds(400), "the stop did not wait for its bound: \(stopped)")
        #expect(stopped < .seconds(5), "the stop waited \(stopped)")
        // Killed, then reaped by its thread: the process id names nothing any more.
        let deadline = ContinuousClock.now + .seconds(5)
        while kill(pid, 0) == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(kill(pid, 0) != 0, "the program that ignored SIGTERM still runs")
        if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }
}
