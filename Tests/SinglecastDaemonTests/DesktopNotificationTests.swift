import Foundation
import SinglecastDaemon
import SinglecastProtocol
import SinglecastTestServers
import Synchronization
import Testing

/// `notify`: which events become notifications, and delivery to a real notification server (python-dbusmock's
/// notification-daemon template) on a private `dbus-daemon`.
@Suite struct DesktopNotificationTests {
    static func download(_ state: DownloadState, error: DownloadErrorInfo? = nil) -> DownloadInfo {
        DownloadInfo(
            id: 7,
            url: "https://feeds.example.com/show/7.mp3",
            finalURL: nil,
            file: "/home/me/Podcasts/Harbour/2026-11-29 Low tide.mp3",
            state: state,
            pauseReason: nil,
            priority: 0,
            position: 7,
            bytesDone: 1000,
            bytesTotal: 1000,
            speed: nil,
            etaSeconds: nil,
            attempts: 1,
            lastError: error,
            nextRetryAt: nil,
            addedAt: "2026-11-29T11:00:00Z",
            completedAt: nil,
            headerNames: [],
            hasCredentials: false
        )
    }

    static func line(_ method: DownloadEvent, _ download: DownloadInfo) throws -> Data {
        try WireCoding.notificationLine(method: method.rawValue, params: DownloadEventParams(download: download))
    }

    /// `podcast.refreshed` as the subscriptions publish it, built from JSON so the test does not depend on
    /// every field of ``PodcastInfo``.
    static func refreshedLine(title: String, newEpisodes: Int) -> Data {
        let line = """
            {"jsonrpc":"2.0","method":"podcast.refreshed","params":{"new_episodes":\(newEpisodes),\
            "podcast":{"title":"\(title)"}}}
            """
        return Data(line.utf8)
    }

    // MARK: policy

    @Test func parsesTheNotifyKey() throws {
        #expect(NotificationKinds.parse("off") == [])
        #expect(NotificationKinds.parse("") == [])
        #expect(NotificationKinds.parse("downloads, failures") == [.downloads, .failures])
        #expect(NotificationKinds.parse("downloads,episodes,failures") == [.downloads, .episodes, .failures])
        #expect(NotificationKinds.parse("downloads,podcasts") == nil)
        let configuration = try DaemonConfiguration.parse(
            "notify = episodes,downloads\n",
            path: "test.conf",
            home: "/home/u"
        )
        #expect(configuration.notify == NotificationKinds([.episodes, .downloads]))
        #expect(try DaemonConfiguration.parse("", path: "test.conf", home: "/home/u").notify == [])
        #expect(throws: (any Error).self) {
            try DaemonConfiguration.parse("notify = everything\n", path: "test.conf", home: "/home/u")
        }
    }

    @Test func completedAndFailedDownloadsBecomeNotificationsWhenAskedFor() throws {
        let completed = try Self.line(.completed, Self.download(.completed))
        #expect(
            NotificationPolicy.notification(forEventLine: completed, kinds: .downloads)
                == DesktopNotification(
                    summary: "Download complete",
                    body: "2026-11-29 Low tide.mp3",
                    icon: "document-save"
                )
        )
        #expect(NotificationPolicy.notification(forEventLine: completed, kinds: [.failures, .episodes]) == nil)

        let failed = try Self.line(
            .failed,
            Self.download(.failed, error: DownloadErrorInfo(code: "http_status", message: "HTTP 404 Not Found"))
        )
        #expect(
            NotificationPolicy.notification(forEventLine: failed, kinds: .failures)?.body
                == "2026-11-29 Low tide.mp3: HTTP 404 Not Found"
        )
        #expect(NotificationPolicy.notification(forEventLine: failed, kinds: .downloads) == nil)

        let progress = try Self.line(.progress, Self.download(.active))
        #expect(NotificationPolicy.notification(forEventLine: progress, kinds: [.downloads, .failures]) == nil)
    }

    @Test func aRefreshWithNewEpisodesIsOneNotification() {
        let three = NotificationPolicy.notification(
            forEventLine: Self.refreshedLine(title: "Harbour Lights", newEpisodes: 3),
            kinds: .episodes
        )
        #expect(
            three == DesktopNotification(summary: "Harbour Lights", body: "3 new episodes", icon: "audio-x-generic")
        )
        let none = Self.refreshedLine(title: "Harbour Lights", newEpisodes: 0)
        #expect(NotificationPolicy.notification(forEventLine: none, kinds: .episodes) == nil)
        #expect(NotificationPolicy.selection(for: []) == .none)
        #expect(NotificationPolicy.selection(for: .episodes) == EventSelection(events: ["podcast.refreshed"]))
        #expect(NotificationPolicy.selection(for: .failures) == EventSelection(events: ["download.failed"]))
        #expect(
            NotificationPolicy.selection(for: [.downloads, .failures])
                == EventSelection(events: ["download.completed", "download.failed"])
        )
    }

    // MARK: the bus

    /// dbus-daemon and python-dbusmock come from scripts/bootstrap; without them the test is skipped, not passed.
    static let canRunBus = PrivateBus.isAvailable(template: "notification_daemon")

    /// Collects what the sender reports.
    final class Reports: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test(.enabled(if: canRunBus), .timeLimit(.minutes(1)))
    func eventsOnTheBusReachTheNotificationServer() async throws {
        do {
            let (bus, events, task) = try await Self.notificationServer(kinds: [.downloads, .episodes])
            defer { task.cancel() }
            events.publish(
                .downloads,
                method: DownloadEvent.completed.rawValue,
                params: DownloadEventParams(download: Self.download(.completed))
            )
            events.publish(
                .downloads,
                method: DownloadEvent.progress.rawValue,
                params: DownloadEventParams(download: Self.download(.active))
            )
            // Three podcasts refreshed, one with new episodes: one notification.
            for (title, count) in [("Quiet", 0), ("Harbour Lights", 2), ("Also quiet", 0)] {
                events.publish(
                    .podcasts,
                    method: PodcastEvent.refreshed.rawValue,
                    params: RawParams(title: title, newEpisodes: count)
                )
            }
            let calls = try await Self.waitForNotifyCalls(2, in: bus.log ?? "")
            #expect(calls.count == 2, "\(calls)")
            #expect(calls.first?.contains("\"Download complete\"") == true, "\(calls)")
            #expect(calls.first?.contains("2026-11-29 Low tide.mp3") == true, "\(calls)")
            #expect(calls.last?.contains("\"Harbour Lights\" \"2 new episodes\"") == true, "\(calls)")
        }
    }

    /// A bulk operation's twelve completions and three failures are two notifications, not fifteen.
    @Test(.enabled(if: canRunBus), .timeLimit(.minutes(1)))
    func downloadsEndingTogetherAreGroupedOnTheBus() async throws {
        let (bus, events, task) = try await Self.notificationServer(kinds: [.downloads, .failures])
        defer { task.cancel() }
        for _ in 0..<12 {
            events.publish(
                .downloads,
                method: DownloadEvent.completed.rawValue,
                params: DownloadEventParams(download: Self.download(.completed))
            )
        }
        let refused = DownloadErrorInfo(code: "http_status", message: "the server answered HTTP 404", httpStatus: 404)
        for _ in 0..<3 {
            events.publish(
                .downloads,
                method: DownloadEvent.failed.rawValue,
                params: DownloadEventParams(download: Self.download(.failed, error: refused))
            )
        }
        let calls = try await Self.waitForNotifyCalls(2, in: bus.log ?? "")
        #expect(calls.count == 2, "\(calls)")
        #expect(calls.first?.contains("\"12 downloads completed\"") == true, "\(calls)")
        #expect(calls.last?.contains("\"3 downloads failed\"") == true, "\(calls)")
        #expect(calls.last?.contains("2026-11-29 Low tide.mp3: the server answered HTTP 404") == true, "\(calls)")
    }

    @Test(.timeLimit(.minutes(1))) func withoutABusTheProblemIsReportedOnce() async throws {
        let reports = Reports()
        let missing = "unix:path=/tmp/sc-no-bus-\(UUID().uuidString.prefix(8))/bus"
        let sender = SessionBusSender(environment: ["DBUS_SESSION_BUS_ADDRESS": missing]) { reports.add($0) }
        defer { sender.stop() }
        let start = ContinuousClock.now
        for _ in 0..<5 {
            sender.send(DesktopNotification(summary: "s", body: "b", icon: "i"))
        }
        // send never waits for the bus. The bound is loose, since the suite shares two cores; a send that
        // connected first would wait for the bus thread's whole attempt and its report.
        #expect(ContinuousClock.now - start < .seconds(1))
        while reports.all.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(reports.all.count == 1, "\(reports.all)")
        #expect(reports.all.first?.contains("cannot connect to the session bus \(missing)") == true, "\(reports.all)")
    }
}

/// `podcast.refreshed` params with only the fields the policy reads.
private struct RawParams: Encodable {
    struct Podcast: Encodable { var title: String }
    var podcast: Podcast
    var newEpisodes: Int

    init(title: String, newEpisodes: Int) {
        podcast = Podcast(title: title)
        self.newEpisodes = newEpisodes
    }

    enum CodingKeys: String, CodingKey {
        case podcast
        case newEpisodes = "new_episodes"
    }
}

extension DesktopNotificationTests {
    /// python-dbusmock's notification server on a private bus, and the service for `kinds` showing `events` on it,
    /// once it watches them.
    static func notificationServer(
        kinds: NotificationKinds
    ) async throws -> (bus: PrivateBus, events: EventBus, task: Task<Void, any Error>) {
        let bus = try await PrivateBus(
            template: "notification_daemon",
            name: "org.freedesktop.Notifications",
            system: false,
            logCalls: true
        )
        let events = EventBus(logger: Logger(level: .error, environment: [:]))
        let service = DesktopNotifications(
            kinds: kinds,
            events: events,
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
            logger: Logger(level: .error, environment: [:])
        )
        let task = Task { try await service.run() }
        // The service subscribes as it starts; publish once it watches.
        let topics = NotificationPolicy.selection(for: kinds).topics
        while !topics.allSatisfy(events.isWatched) { try await Task.sleep(for: .milliseconds(10)) }
        return (bus, events, task)
    }

    /// The mock's log lines for `Notify` once there are `count`, giving them a moment to exceed it.
    static func waitForNotifyCalls(_ count: Int, in log: String) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(20)
        func calls() -> [String] {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.contains(" Notify ") }.map(String.init)
        }
        while calls().count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        return calls()
    }
}
