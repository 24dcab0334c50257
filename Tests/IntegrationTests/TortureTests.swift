import Foundation
import Testing

/// The crash torture, short: `scripts/torture --small` kills the real daemon with SIGKILL at random moments (start-up,
/// enqueue bursts, completion bursts, commands), restarts it each time and compares the queue and the files with its
/// own record of what was acknowledged. The seed it used is the first line of its output.
@Suite struct TortureTests {
    private static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // IntegrationTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()
        .appendingPathComponent("scripts/torture").path

    @Test(.timeLimit(.minutes(2)))
    func killNineAtRandomMomentsLosesAndCorruptsNothing() async throws {
        let started = Date.now
        let arguments = [Self.script, "--duration", "25", "--small", "--bin", Binaries.directory.path]
        // Waited for on a thread of its own: the half minute it runs would otherwise hold one of the few threads
        // the other tests share.
        let run = try await onOwnThread { try runProgram("/usr/bin/python3", arguments) }
        let elapsed = Date.now.timeIntervalSince(started)
        let output = "\(run.stdout)\n\(run.stderr)"
        #expect(run.status == 0, "scripts/torture failed:\n\(output)")
        // "torture: N kills, M downloads, L lost, C corrupt"
        let summary = run.stdout.split(separator: "\n").last { $0.hasPrefix("torture: ") && $0.contains(" kills, ") }
        let line = try #require(summary.map(String.init), "no summary line in:\n\(output)")
        let numbers = line.split { !$0.isNumber }.compactMap { Int($0) }
        try #require(numbers.count == 4, "unexpected summary: \(line)")
        #expect(numbers[0] >= 5, "too few kills: \(line)")
        #expect(numbers[1] >= 20, "too few downloads: \(line)")
        #expect(numbers[2] == 0 && numbers[3] == 0, "\(output)")
        #expect(elapsed < 60, "the short torture took \(Int(elapsed)) s: \(line)")
    }
}
