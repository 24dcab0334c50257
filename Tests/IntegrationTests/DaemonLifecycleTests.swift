import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct DaemonLifecycleTests {
    @Test func reportsReadyThenStatusThenStoppingAndExitsCleanly() throws {
        let daemon = DaemonProcess()
        let startup = try daemon.startAndWaitUntilReady()
        let ready = try #require(startup.last)
        #expect(ready.contains("READY=1"))
        #expect(ready.contains("STATUS=Ready; idle; listening on \(daemon.socketPath)"))
        // READY=1 promises the socket already listens.
        let client = try LineClient(path: daemon.socketPath)
        let pong = try client.result("ping", as: PingResult.self)
        #expect(pong.pong)

        daemon.signal(SIGTERM)
        let stopping = try #require(daemon.notify.receive(until: "STOPPING=1"))
        #expect(stopping.last?.contains("STATUS=Stopping") == true)
        #expect(daemon.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed on exit")
        #expect(daemon.log.contains("stopped"))
    }

    /// A notify socket nobody reads fills up (10 datagrams by default), and sd_notify then blocks. It used to block
    /// on the cooperative pool, and the SIGTERM handler's STOPPING=1 came before the stop itself: the daemon never
    /// stopped (seen under load as a stop timing out 20 s after SIGTERM, with every pool thread in sendmsg).
    @Test func aNotifySocketNobodyReadsDoesNotKeepTheDaemonFromStopping() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        // Each reload sends RELOADING=1 and READY=1; the test reads none of them.
        for _ in 0..<8 {
            daemon.signal(SIGHUP)
            usleep(100_000)
        }
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 10) == 0, "\(daemon.log)")
    }

    @Test func statusReportsXDGPathsAndEmbeddedDefaults() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let status = try LineClient(path: daemon.socketPath).result("status", as: StatusResult.self)
        #expect(status.pid == daemon.process.processIdentifier)
        #expect(status.paths.config == daemon.configPath)
        #expect(status.paths.configLoaded == false)
        #expect(status.paths.stateDirectory == daemon.stateDirectory)
        #expect(status.paths.database == daemon.stateDirectory + "/singlecast.sqlite3")
        #expect(status.paths.downloadDirectory == daemon.root.file("data/singlecast/episodes"))
        #expect(status.paths.socket == daemon.socketPath)
        #expect(status.socketActivated == false)
        #expect(status.store.schemaVersion >= 1)
        #expect(status.store.daemonStarts == 1)
        #expect(status.store.previousRunClean == nil)
        #expect(status.connections.clients == 1)
        #expect(status.logLevel == "info")
        #expect(status.version == SinglecastVersion.current)

        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(daemon.root.file("run/singlecast"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(daemon.stop() == 0)
    }

    @Test func versionNamesDaemonProtocolAndLibraries() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        let version = try LineClient(path: daemon.socketPath).result("version", as: VersionResult.self)
        #expect(version.daemon == SinglecastVersion.current)
        #expect(version.protocolVersion == ProtocolVersion.current)
        #expect(version.sqlite.hasPrefix("3."))
        #expect(!version.libcurl.isEmpty)
        #expect(daemon.stop() == 0)
    }

    @Test func secondInstanceOnTheSameStateIsRefused() throws {
        let first = DaemonProcess()
        try first.startAndWaitUntilReady()
        let second = DaemonProcess(root: first.root)
        try second.start(arguments: ["--socket", first.root.file("other.sock")])
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("another singlecastd (pid \(first.process.processIdentifier)) is already running"))
        // The first one is unharmed.
        #expect(try LineClient(path: first.socketPath).result("ping", as: PingResult.self).pong)
        #expect(first.stop() == 0)
    }

    @Test func anotherDaemonListeningOnTheSocketIsNotDisplaced() throws {
        let first = DaemonProcess()
        try first.startAndWaitUntilReady()
        let second = DaemonProcess()
        try second.start(arguments: ["--socket", first.socketPath])
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("another singlecastd is already listening"))
        #expect(try LineClient(path: first.socketPath).result("ping", as: PingResult.self).pong)
        #expect(first.stop() == 0)
    }

    @Test func staleSocketFromACrashIsReplacedAndRunHistoryNotesTheCrash() throws {
        let crashed = DaemonProcess()
        try crashed.startAndWaitUntilReady()
        crashed.signal(SIGKILL)
        _ = crashed.waitForExit()
        #expect(FileManager.default.fileExists(atPath: crashed.socketPath), "kill -9 leaves the socket file behind")

        let restarted = DaemonProcess(root: crashed.root)
        try restarted.startAndWaitUntilReady()
        #expect(restarted.log.contains("removed stale socket"))
        #expect(restarted.log.contains("did not shut down cleanly"))
        let status = try LineClient(path: restarted.socketPath).result("status", as: StatusResult.self)
        #expect(status.store.daemonStarts == 2)
        #expect(status.store.uncleanShutdowns == 1)
        #expect(status.store.previousRunClean == false)
        #expect(restarted.stop() == 0)

        let third = DaemonProcess(root: crashed.root)
        try third.startAndWaitUntilReady()
        let after = try LineClient(path: third.socketPath).result("status", as: StatusResult.self)
        #expect(after.store.previousRunClean == true)
        #expect(after.store.daemonStarts == 3)
        #expect(third.stop() == 0)
    }

    @Test func aPathThatIsNotASocketIsNeverRemoved() throws {
        let daemon = DaemonProcess()
        try FileManager.default.createDirectory(
            atPath: daemon.root.file("run/singlecast"),
            withIntermediateDirectories: true
        )
        try "precious".write(toFile: daemon.socketPath, atomically: true, encoding: .utf8)
        try daemon.start()
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("exists and is not a socket"))
        #expect(try String(contentsOfFile: daemon.socketPath, encoding: .utf8) == "precious")
    }

    @Test func configurationErrorsStopStartupWithFileAndLine() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("# comment\nlog_level = debug\nmax_clents = 3\n")
        try daemon.start()
        #expect(daemon.waitForExit() == 78)
        #expect(daemon.log.contains("\(daemon.configPath):3: unknown key 'max_clents'; did you mean 'max_clients'?"))

        let badValue = DaemonProcess()
        try badValue.writeConfig("log_level = loud\n")
        try badValue.start()
        #expect(badValue.waitForExit() == 78)
        #expect(badValue.log.contains("\(badValue.configPath):1: log_level must be one of"))
    }

    /// A file named with `--config` is meant to be read: a missing one stops start-up (exit 78) naming it,
    /// where it used to run on the defaults with one info line. The default path may still be absent.
    @Test func aMissingConfigFileGivenExplicitlyStopsStartup() throws {
        let daemon = DaemonProcess()
        let missing = daemon.root.file("nowhere/singlecast.conf")
        try daemon.start(arguments: ["--config", missing])
        #expect(daemon.waitForExit() == 78)
        #expect(daemon.log.contains("configuration error: \(missing): the file does not exist (named with --config)"))
        #expect(!daemon.log.contains("embedded defaults"))
    }

    @Test func corruptDatabaseIsReportedAndLeftUntouched() throws {
        let daemon = DaemonProcess()
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        let database = daemon.stateDirectory + "/singlecast.sqlite3"
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: database))
        try daemon.start()
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains(database))
        #expect(sameBytes(try Data(contentsOf: URL(fileURLWithPath: database)), garbage))
    }

    @Test func usageErrorsExit64AndHelpExits0() throws {
        let bad = try runProgram(Binaries.daemon.path, ["--frobnicate"])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("Error: Unknown option '--frobnicate'\nUsage: singlecastd"))
        let help = try runProgram(Binaries.daemon.path, ["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("OVERVIEW: The singlecast podcast download daemon."))
        #expect(help.stdout.contains("USAGE: singlecastd"))
        let version = try runProgram(Binaries.daemon.path, ["--version"])
        #expect(version.stdout == SinglecastVersion.current + "\n")
    }

    @Test func sighupReloadsLiveSettingsAndKeepsOldOnesWhenTheFileIsBroken() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("log_level = info\n")
        try daemon.startAndWaitUntilReady()
        let watcher = try LineClient(path: daemon.socketPath)
        _ = try watcher.result("watch", as: WatchResult.self, params: #"{"topics":["daemon"]}"#)

        try daemon.writeConfig("log_level = debug\nmax_clients = 7\n")
        daemon.signal(SIGHUP)
        let reload = try #require(daemon.notify.receive(until: "READY=1"))
        #expect(reload.first?.contains("RELOADING=1") == true)
        #expect(reload.first?.contains("MONOTONIC_USEC=") == true)
        let event = try #require(try watcher.readLine())
        #expect(event.contains(#""method":"daemon.reloaded""#))

        let client = try LineClient(path: daemon.socketPath)
        let status = try client.result("status", as: StatusResult.self)
        #expect(status.logLevel == "debug")
        #expect(status.lastReload?.ok == true)

        try daemon.writeConfig("log_level = debug\nthis is not a setting\n")
        daemon.signal(SIGHUP)
        let failed = try #require(daemon.notify.receive(until: "READY=1"))
        #expect(failed.last?.contains("last reload failed") == true)
        let failedEvent = try #require(try watcher.readLine())
        #expect(failedEvent.contains(#""method":"daemon.reload_failed""#))
        let after = try client.result("status", as: StatusResult.self)
        #expect(after.lastReload?.ok == false)
        #expect(after.lastReload?.message?.contains("singlecast.conf:2: expected 'key = value'") == true)
        #expect(after.logLevel == "debug")

        // Watchers hear that the daemon stops before the connection closes.
        daemon.signal(SIGTERM)
        let stopping = try #require(try watcher.readLine())
        #expect(stopping.contains(#""method":"daemon.stopping""#))
        #expect(try watcher.readLine() == nil)
        #expect(daemon.waitForExit() == 0)
    }

    @Test func logLinesCarrySyslogPrioritiesOnlyWhenStderrIsTheJournalStream() throws {
        let plain = DaemonProcess()
        try plain.startAndWaitUntilReady()
        #expect(plain.stop() == 0)
        #expect(plain.log.contains(" notice: ready; listening on "))

        // JOURNAL_STREAM names the device and inode of the stream systemd connected to stderr: here, the log file.
        let journal = DaemonProcess()
        _ = FileManager.default.createFile(atPath: journal.stderrPath, contents: nil)
        var info = stat()
        #expect(stat(journal.stderrPath, &info) == 0)
        journal.environment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
        try journal.startAndWaitUntilReady(arguments: ["--log-level", "debug"])
        #expect(journal.stop() == 0)
        let lines = journal.log.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<5>ready; listening on ") })
        #expect(lines.contains { $0.hasPrefix("<6>singlecastd \(SinglecastVersion.current) starting") })
        #expect(lines.contains { $0.hasPrefix("<7>stopping the control server") })
        #expect(lines.allSatisfy { $0.hasPrefix("<") })
    }

    @Test func watchdogPingsAtHalfTheInterval() throws {
        let daemon = DaemonProcess(extraEnvironment: ["WATCHDOG_USEC": "200000"])
        try daemon.startAndWaitUntilReady()
        let started = Date.now
        #expect(daemon.notify.receive(until: "WATCHDOG=1", timeout: 5) != nil)
        #expect(daemon.notify.receive(until: "WATCHDOG=1", timeout: 5) != nil)
        #expect(
            Date.now.timeIntervalSince(started) < 10,
            "pings come at half of WATCHDOG_USEC, not at some slower pace"
        )
        #expect(daemon.stop() == 0)
    }

    /// The descriptor table is grown once, while the daemon has one thread: grown later, by a burst of connections,
    /// each growth holds the accepting thread for an RCU grace period.
    @Test func theDescriptorTableIsSizedBeforeTheFirstConnection() throws {
        let daemon = DaemonProcess()
        try daemon.startAndWaitUntilReady()
        defer { _ = daemon.stop() }
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let expected = Int(min(limit.rlim_cur, 1024))
        let pid = daemon.process.processIdentifier
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("FDSize:") })
        let size = try #require(Int(line.split(separator: "\t").last ?? ""))
        #expect(size >= expected, "FDSize \(size): the table was left to grow under load")
        // The descriptor that grew it is closed again; the daemon's own stay low.
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap { Int($0) }
        #expect(open.allSatisfy { $0 < 256 }, "descriptors open: \(open.sorted())")
    }
}
