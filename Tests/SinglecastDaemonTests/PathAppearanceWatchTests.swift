import Dispatch
import Foundation
import SinglecastTestServers
import Testing

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The metered-network watch waits for a missing system bus socket with inotify instead of trying every minute.
@Suite struct PathAppearanceWatchTests {
    @Test func watchesTheNearestDirectoryThatExists() {
        let existing: Set<String> = ["/", "/run"]
        let target = { PathAppearanceWatch.target(for: $0, isDirectory: existing.contains) }
        #expect(target("/run/dbus/system_bus_socket") == .init(directory: "/run", name: "dbus"))
        #expect(target("/run/socket") == .init(directory: "/run", name: "socket"))
        #expect(target("/var/run/dbus/socket") == .init(directory: "/", name: "var"))
        #expect(target("//run///dbus/") == .init(directory: "/run", name: "dbus"))
        #expect(target("relative/socket") == nil)
        #expect(target("/") == nil)
        #expect(PathAppearanceWatch.target(for: "/a/b", isDirectory: { _ in false }) == nil)
    }

    @Test func findsTheSocketFileOfAUnixPathBusAddress() {
        let path = MeteredNetworkMonitor.socketPath(ofBusAddress:)
        #expect(path("unix:path=/run/dbus/system_bus_socket") == "/run/dbus/system_bus_socket")
        #expect(path("unix:guid=0123,path=/tmp/bus%20one") == "/tmp/bus one")
        #expect(path("unix:path=/tmp/%E2%9C%93") == "/tmp/✓")
        #expect(path("unix:abstract=/tmp/dbus-x") == nil, "an abstract socket has no file to wait for")
        #expect(path("tcp:host=localhost,port=1234") == nil)
        #expect(path("unix:path=/a;unix:path=/b") == nil, "sd-bus tries each in turn: keep the timer")
        #expect(path("unix:path=/a%2") == nil)
        #expect(path("unix:path=/a%zz") == nil)
        #expect(path("unix:path=/a%00b") == nil)
        #expect(path("unix:path=") == nil)
    }

    @Test func readsTheEventsThatMatter() {
        func event(_ mask: Int32, _ name: String) -> [UInt8] {
            var header = inotify_event()
            header.wd = 1
            header.mask = UInt32(mask)
            var padded = Array(name.utf8) + [0]
            while padded.count % 8 != 0 { padded.append(0) }
            header.len = UInt32(name.isEmpty ? 0 : padded.count)
            return withUnsafeBytes(of: header) { Array($0) } + (name.isEmpty ? [] : padded)
        }
        func mentions(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { PathAppearanceWatch.mentions("dbus", in: $0) }
        }
        #expect(mentions(event(IN_CREATE, "dbus")))
        #expect(mentions(event(IN_CREATE, "other") + event(IN_MOVED_TO, "dbus")))
        #expect(!mentions(event(IN_CREATE, "other") + event(IN_CREATE, "dbus-1")))
        #expect(mentions(event(IN_DELETE_SELF, "")), "the watched directory went: look again")
        #expect(mentions(event(IN_IGNORED, "")))
        #expect(!mentions([]))
        #expect(mentions(Array(event(IN_CREATE, "dbus").prefix(20))), "a cut event is not trusted to be unrelated")
    }

    @Test(.timeLimit(.minutes(1)))
    func wakesForEachStepOnTheWayToTheFileAndNothingElse() async throws {
        let place = try TemporaryDirectory(prefix: "sc-watch")
        let reactor = try Reactor()
        reactor.start()
        let socketPath = place.file("run/dbus/socket")
        func later(_ milliseconds: Int, _ work: @escaping @Sendable () -> Void) {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds), execute: work)
        }

        let first = try PathAppearanceWatch(path: socketPath, reactor: reactor)
        #expect(first.target == .init(directory: place.path, name: "run"))
        #expect(!first.appeared)
        later(100) { _ = open(place.file("unrelated"), O_CREAT | O_WRONLY, 0o600) }
        later(400) { mkdir(place.file("run"), 0o700) }
        try await first.changed()
        #expect(FileManager.default.fileExists(atPath: place.file("run")), "it woke for an unrelated file")
        first.close()

        let second = try PathAppearanceWatch(path: socketPath, reactor: reactor)
        #expect(second.target == .init(directory: place.file("run"), name: "dbus"))
        later(100) { mkdir(place.file("run/dbus"), 0o700) }
        try await second.changed()
        second.close()

        let third = try PathAppearanceWatch(path: socketPath, reactor: reactor)
        #expect(third.target == .init(directory: place.file("run/dbus"), name: "socket"))
        later(100) {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8) + [0]) }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            close(fd)
        }
        try await third.changed()
        #expect(third.appeared)
        third.close()
        await reactor.stop()
    }
}
