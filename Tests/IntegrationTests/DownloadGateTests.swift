import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The download gate against real parts: the daemon's own clock and time zone (`TZ`), a trickling loopback server
/// that honours Range, and NetworkManager as python-dbusmock on a private bus.
@Suite struct DownloadGateIntegrationTests {
    private func enqueue(_ client: LineClient, _ url: String, into directory: String) throws -> Int64 {
        let json = String(
            decoding: try WireCoding.encoder().encode(EnqueueParams(urls: [url], directory: directory)),
            as: UTF8.self
        )
        return try client.result("enqueue", as: EnqueueResult.self, params: json).downloads[0].id
    }

    /// Polls `show` until `condition` holds; fails with the last state after `timeout` seconds.
    @discardableResult
    private func waitFor(
        _ client: LineClient,
        _ id: Int64,
        timeout: Double,
        _ condition: (DownloadInfo) -> Bool
    ) throws -> DownloadInfo {
        let deadline = Date.now.addingTimeInterval(timeout)
        var info = try client.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
        while !condition(info) {
            guard Date.now < deadline else { throw HarnessError("download \(id) stuck: \(info)") }
            usleep(50_000)
            info = try client.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
        }
        return info
    }

    private func partialSize(_ info: DownloadInfo) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: info.file + ".part"))?[.size] as? Int64) ?? -1
    }

    /// The byte where the log says download `id` resumed with a Range request, if it did.
    private func resumedAt(_ log: String, _ id: Int64) -> Int? {
        let line = log.split(separator: "\n").first { $0.contains("download \(id) resumes at byte ") }
        return line.flatMap { $0.split(separator: " ").drop { $0 != "byte" }.dropFirst().first.flatMap { Int($0) } }
    }

    /// `HH:MM` of a minute of the day.
    private func clock(_ minute: Int) -> String {
        let minute = (minute % 1440 + 1440) % 1440
        return String(format: "%02d:%02d", minute / 60, minute % 60)
    }

    /// A window that closes a few seconds from now and the next one a minute later: `TZ` gets an offset with seconds
    /// (POSIX allows `hh:mm:ss`) that puts a local minute boundary right where the test wants it, so the daemon's
    /// real clock and C library decide, and nothing in it is replaced for the test. Windows are whole minutes, so
    /// the pause lasts one minute.
    @Test(.timeLimit(.minutes(4)))
    func aWindowClosingPausesARunningDownloadAndItsOpeningResumesIt() throws {
        let server = try FaultServer()
        let closesAt = Int64(Date.now.timeIntervalSince1970.rounded(.up)) + 8
        let offset = Int((60 - closesAt % 60) % 60)  // local = UTC + offset; local(closesAt) is hh:mm:00
        let minute = Int((closesAt + Int64(offset)) % 86_400 / 60)
        let daemon = DaemonProcess(extraEnvironment: ["TZ": String(format: "SCT-00:00:%02d", offset)])
        try daemon.writeConfig(
            "download_window = \(clock(minute - 1))-\(clock(minute)), \(clock(minute + 1))-\(clock(minute + 2))\n"
        )
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let size = 2 << 20
        let id = try enqueue(client, server.url("/slow-ranges/\(size)/131072"), into: daemon.root.file("dl"))
        let running = try waitFor(client, id, timeout: 20) { $0.state == .active && $0.bytesDone > 0 }
        #expect(
            Int64(Date.now.timeIntervalSince1970) < closesAt,
            "the machine was too slow to start the transfer in time"
        )

        let paused = try waitFor(client, id, timeout: 20) { $0.state == .paused }
        #expect(Date.now.timeIntervalSince1970 >= Double(closesAt) - 1, "paused before the window closed: \(paused)")
        #expect(paused.pauseReason == "outside_window")
        #expect(paused.resumesAt != nil)
        #expect(paused.bytesDone >= running.bytesDone)
        #expect(paused.bytesDone < Int64(size))
        usleep(500_000)
        let held = partialSize(paused)
        #expect(held > 0, "the partial file is kept")
        usleep(1_000_000)
        #expect(partialSize(paused) == held, "a paused download does not move")
        let status = try client.result("status", as: StatusResult.self)
        #expect(status.downloads?.gate?.closedBecause == "outside_window")

        let done = try client.finished([id], timeout: 120)[0]
        #expect(done.state == .completed, "\(done)")
        #expect(Date.now.timeIntervalSince1970 >= Double(closesAt + 59), "resumed before the next window opened")
        #expect(sameBytes(FileManager.default.contents(atPath: done.file), TestContent.data(size: Int64(size))))
        // It continued from the kept bytes with a Range request instead of starting over.
        #expect((resumedAt(daemon.log, id) ?? 0) >= Int(held), "\(daemon.log)")
        #expect(daemon.log.contains("downloads held: outside the download windows"))
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }

    static let canRunNetworkManagerMock = PrivateBus.isAvailable(template: "networkmanager")

    /// dbus-daemon and python-dbusmock come from scripts/bootstrap; without them the test is skipped, not passed.
    @Test(.enabled(if: canRunNetworkManagerMock), .timeLimit(.minutes(2)))
    func aMeteredNetworkPausesDownloadsUntilItIsNoLonger() async throws {
        let bus = try await PrivateBus(template: "networkmanager", name: "org.freedesktop.NetworkManager", system: true)
        let manager = ["org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager"]
        // The template has no Metered property: add it, as NM_METERED_NO (2).
        try bus.busctl(
            ["call"] + manager + [
                "org.freedesktop.DBus.Mock", "AddProperty", "ssv", "org.freedesktop.NetworkManager", "Metered", "u",
                "2",
            ]
        )
        func setMetered(_ value: Int) throws {
            // Properties.Set on the mock emits org.freedesktop.DBus.Properties.PropertiesChanged, as NetworkManager does.
            try bus.busctl(["set-property"] + manager + ["org.freedesktop.NetworkManager", "Metered", "u", "\(value)"])
        }
        let server = try FaultServer()
        let daemon = DaemonProcess(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        try daemon.writeConfig("metered = pause\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let size = 2 << 20
        let id = try enqueue(client, server.url("/slow-ranges/\(size)/262144"), into: daemon.root.file("dl"))
        try waitFor(client, id, timeout: 20) { $0.state == .active && $0.bytesDone > 0 }
        #expect(try client.result("status", as: StatusResult.self).downloads?.gate?.metered == false)

        try setMetered(1)  // NM_METERED_YES
        let paused = try waitFor(client, id, timeout: 20) { $0.state == .paused }
        #expect(paused.pauseReason == "metered")
        usleep(500_000)
        let held = partialSize(paused)
        #expect(held > 0 && held < Int64(size), "the partial file is kept")
        let gate = try client.result("status", as: StatusResult.self).downloads?.gate
        #expect(gate?.closedBecause == "metered")
        #expect(gate?.metered == true)

        try setMetered(4)  // NM_METERED_GUESS_NO
        let done = try client.finished([id], timeout: 60)[0]
        #expect(done.state == .completed, "\(done)")
        #expect(sameBytes(FileManager.default.contents(atPath: done.file), TestContent.data(size: Int64(size))))
        #expect((resumedAt(daemon.log, id) ?? 0) >= Int(held), "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }

    /// NetworkManager as python-dbusmock on a private bus in `place`, its `Metered` property set to `value`.
    private func networkManager(
        metered value: Int,
        place: SinglecastTestServers.TemporaryDirectory
    ) async throws -> PrivateBus {
        let bus = try await PrivateBus(
            template: "networkmanager",
            name: "org.freedesktop.NetworkManager",
            system: true,
            place: place
        )
        try bus.busctl(
            ["call", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager"] + [
                "org.freedesktop.DBus.Mock", "AddProperty", "ssv", "org.freedesktop.NetworkManager", "Metered", "u",
                "2",
            ]
        )
        // Properties.Set emits PropertiesChanged, which a client that asked before the property was there hears.
        if value != 2 {
            try bus.busctl(
                ["set-property", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager"] + [
                    "org.freedesktop.NetworkManager", "Metered", "u", "\(value)",
                ]
            )
        }
        return bus
    }

    /// The system bus restarts (dbus-daemon and NetworkManager with it) and the network is metered now: the daemon
    /// connects again and pauses the download, instead of running it on the metered link until its own restart.
    @Test(.enabled(if: canRunNetworkManagerMock), .timeLimit(.minutes(2)))
    func theMeteredWatchConnectsAgainAfterTheBusWentAway() async throws {
        let place = try SinglecastTestServers.TemporaryDirectory(prefix: "sc-bus")
        let first = try await networkManager(metered: 2, place: place)
        let server = try FaultServer()
        let daemon = DaemonProcess(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": first.address])
        try daemon.writeConfig("metered = pause\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let id = try enqueue(client, server.url("/slow-ranges/\(16 << 20)/262144"), into: daemon.root.file("dl"))
        try waitFor(client, id, timeout: 20) { $0.state == .active && $0.bytesDone > 0 }

        first.stop()
        let second = try await networkManager(metered: 1, place: place)  // NM_METERED_YES
        let paused = try? waitFor(client, id, timeout: 30) { $0.state == .paused }
        #expect(paused?.pauseReason == "metered", "\(daemon.log)")
        #expect(daemon.log.contains("connected to the system bus again"), "\(daemon.log)")
        #expect(daemon.stop() == 0)
        second.stop()
    }

    /// No system bus when the daemon starts, and one starts later: the daemon follows it as soon as its socket
    /// appears. It used to try again after 1, 2, 4 … up to 60 s, so it noticed late, and an idle daemon on a
    /// machine without a bus woke every minute for nothing.
    @Test(.enabled(if: canRunNetworkManagerMock), .timeLimit(.minutes(2)))
    func aSystemBusThatStartsLaterIsFollowedAsSoonAsItsSocketAppears() async throws {
        let place = try SinglecastTestServers.TemporaryDirectory(prefix: "sc-bus")
        let daemon = DaemonProcess(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(place.file("bus"))"])
        try daemon.writeConfig("metered = pause\nlog_level = debug\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        // Past the retries at 1, 3 and 7 s: the old timer's next one would come 15 s after the start.
        usleep(8_500_000)
        #expect(
            daemon.log.contains("waiting for the system bus socket \(place.file("bus")) to appear"),
            "\(daemon.log)"
        )
        #expect(try client.result("status", as: StatusResult.self).downloads?.gate?.metered != true)

        let bus = try await networkManager(metered: 1, place: place)  // NM_METERED_YES
        let deadline = Date.now.addingTimeInterval(3)
        while try client.result("status", as: StatusResult.self).downloads?.gate?.metered != true, Date.now < deadline {
            usleep(50_000)
        }
        #expect(try client.result("status", as: StatusResult.self).downloads?.gate?.metered == true, "\(daemon.log)")
        #expect(daemon.stop() == 0)
        bus.stop()
    }

    /// The system bus goes away and its socket comes back with nobody answering on it (dbus.socket listening while
    /// dbus.service is stopped): the metered watch connects to it and waits for an answer, and a SIGTERM meanwhile
    /// must still stop the daemon at once. Closing the connection used to flush it first, which blocked for sd-bus's
    /// authentication time-out (longer than systemd's default TimeoutStopSec leaves after it).
    @Test(.enabled(if: canRunNetworkManagerMock), .timeLimit(.minutes(2)))
    func aStopWhileTheMeteredWatchWaitsForASilentBusEndsAtOnce() async throws {
        let place = try SinglecastTestServers.TemporaryDirectory(prefix: "sc-bus")
        let bus = try await networkManager(metered: 2, place: place)
        let daemon = DaemonProcess(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        try daemon.writeConfig("metered = pause\n")
        try daemon.startAndWaitUntilReady()
        bus.stop()
        let socketPath = place.file("bus")
        unlink(socketPath)
        // Listens and never accepts: connecting succeeds, and no byte ever comes back.
        let silent = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(silent) }
        #expect(withUnixAddress(socketPath) { bind(silent, $0, $1) } == 0 && listen(silent, 16) == 0)
        let deadline = Date.now.addingTimeInterval(30)
        while !daemon.log.contains("connected to the system bus again"), Date.now < deadline { usleep(50_000) }
        #expect(daemon.log.contains("connected to the system bus again"), "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 10) == 0, "\(daemon.log)")
    }

    /// A download a metered network paused stays paused across a restart until NetworkManager answers, however
    /// long it takes to; a download queued meanwhile runs.
    @Test(.enabled(if: canRunNetworkManagerMock), .timeLimit(.minutes(2)))
    func meteredPausesHoldUntilNetworkManagersFirstAnswer() async throws {
        let place = try SinglecastTestServers.TemporaryDirectory(prefix: "sc-bus")
        let bus = try await networkManager(metered: 1, place: place)
        let server = try FaultServer()
        let daemon = DaemonProcess(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        try daemon.writeConfig("metered = pause\n")
        try daemon.startAndWaitUntilReady()
        var client = try LineClient(path: daemon.socketPath)
        // NetworkManager's first answer is in before the enqueue, so the download is paused by it from the start.
        let deadline = Date.now.addingTimeInterval(20)
        while try client.result("status", as: StatusResult.self).downloads?.gate?.metered != true, Date.now < deadline {
            usleep(50_000)
        }
        let id = try enqueue(client, server.url("/slow-ranges/\(1 << 20)/262144"), into: daemon.root.file("dl"))
        #expect(try waitFor(client, id, timeout: 20) { $0.state == .paused }.pauseReason == "metered")
        #expect(daemon.stop() == 0)

        bus.freezeService()  // NetworkManager owns its name and answers nothing
        let again = DaemonProcess(root: daemon.root, extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        try again.startAndWaitUntilReady()
        client = try LineClient(path: again.socketPath)
        usleep(3_000_000)
        let held = try client.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
        #expect(held.state == .paused && held.pauseReason == "metered", "\(held)")

        bus.thawService()
        usleep(1_000_000)
        let after = try client.result("show", as: DownloadInfo.self, params: "{\"id\":\(id)}")
        #expect(after.state == .paused && after.pauseReason == "metered", "\(after)")
        #expect(try client.result("status", as: StatusResult.self).downloads?.gate?.metered == true)
        #expect(again.stop() == 0)
    }

    /// NetworkManager owns its name and answers nothing for longer than sd-bus's 10 s time-out (busy at boot): the
    /// daemon says so when the time-out passes, then asks again until it answers, so that a metered network still
    /// counts once NetworkManager answers.
    @Test(.enabled(if: canRunNetworkManagerMock), .timeLimit(.minutes(2)))
    func aNetworkManagerThatAnswersLateIsAskedAgain() async throws {
        let place = try SinglecastTestServers.TemporaryDirectory(prefix: "sc-bus")
        let bus = try await networkManager(metered: 1, place: place)
        bus.freezeService()
        let daemon = DaemonProcess(extraEnvironment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        try daemon.writeConfig("metered = pause\n")
        try daemon.startAndWaitUntilReady()
        let started = Date.now
        let notice = "NetworkManager does not answer on the system bus"
        while !daemon.log.contains(notice), Date.now < started.addingTimeInterval(30) { usleep(100_000) }
        #expect(daemon.log.contains(notice), "\(daemon.log)")
        #expect(Date.now.timeIntervalSince(started) > 9, "the notice came before sd-bus's time-out")
        var client = try LineClient(path: daemon.socketPath)
        #expect(try client.result("status", as: StatusResult.self).downloads?.gate?.metered == nil)

        bus.thawService()
        let deadline = Date.now.addingTimeInterval(30)
        while try client.result("status", as: StatusResult.self).downloads?.gate?.metered != true, Date.now < deadline {
            usleep(100_000)
        }
        #expect(try client.result("status", as: StatusResult.self).downloads?.gate?.metered == true)
        #expect(daemon.log.components(separatedBy: notice).count == 2, "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func withoutASystemBusDownloadsRunAndThatIsLoggedOnce() throws {
        let server = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.writeConfig("metered = pause\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let id = try enqueue(client, server.url("/slow-ranges/65536/262144"), into: daemon.root.file("dl"))
        #expect(try client.finished([id], timeout: 20)[0].state == .completed)
        let lines = daemon.log.split(separator: "\n").filter { $0.contains("metered networks are not detected") }
        #expect(lines.count == 1, "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }
}
