import SinglecastProtocol
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// The queue's domain answers as the protocol's results (`Router+DownloadsResults.swift`): every field of the wire's
/// shapes comes from the right domain fact.
@Suite struct DownloadResultsTests {
    /// 2026-01-02T03:04:05Z and a minute later, in Unix milliseconds.
    private let added: Int64 = 1_767_323_045_000
    private let minute: Int64 = 60_000

    @Test func aSnapshotBecomesDownloadInfoFieldByField() {
        var record = DownloadRecord(
            id: 7,
            url: "https://cdn.example/a.mp3",
            directory: "/d/Show",
            fileName: "a.mp3",
            priority: 2,
            position: 5,
            addedAt: added,
            headers: ["X-Token: secret", " Referer :https://example.org"],
            authUser: "me",
            authPassword: "pw"
        )
        record.finalURL = "https://edge.example/a.mp3"
        record.state = .active
        record.pauseReason = nil
        record.bytesDone = 100  // the last checkpoint: the snapshot's live count is what is shown
        record.attempts = 3
        record.errorCode = "http_error"
        record.errorMessage = "503 from the server"
        record.errorHTTPStatus = 503
        record.nextAttemptAt = added + minute
        record.completedAt = added + 2 * minute
        record.bypassesGate = true
        let snapshot = DownloadSnapshot(
            record: record,
            bytesDone: 4_000,
            bytesTotal: 10_000,
            speed: 2_000,
            etaSeconds: 3,
            stalledSince: added + 3 * minute,
            resumesAt: added + 4 * minute
        )
        let expected = DownloadInfo(
            id: 7,
            url: "https://cdn.example/a.mp3",
            finalURL: "https://edge.example/a.mp3",
            file: "/d/Show/a.mp3",
            state: .active,
            pauseReason: nil,
            priority: 2,
            position: 5,
            bytesDone: 4_000,
            bytesTotal: 10_000,
            speed: 2_000,
            etaSeconds: 3,
            attempts: 3,
            lastError: DownloadErrorInfo(code: "http_error", message: "503 from the server", httpStatus: 503),
            nextRetryAt: "2026-01-02T03:05:05Z",
            addedAt: "2026-01-02T03:04:05Z",
            completedAt: "2026-01-02T03:06:05Z",
            headerNames: ["X-Token", "Referer"],
            hasCredentials: true,
            stalledSince: "2026-01-02T03:07:05Z",
            resumesAt: "2026-01-02T03:08:05Z",
            now: true
        )
        #expect(DownloadInfo(snapshot) == expected)
    }

    @Test func aPlainSnapshotLeavesTheOptionalFieldsOut() {
        var record = DownloadRecord(
            url: "https://cdn.example/b.mp3",
            directory: "/d",
            fileName: "b.mp3",
            addedAt: added
        )
        record.state = .paused
        record.pauseReason = "user"
        let info = DownloadInfo(DownloadSnapshot(record: record, bytesDone: 12))
        #expect(info.state == .paused && info.pauseReason == "user" && info.bytesDone == 12)
        #expect(info.lastError == nil && info.nextRetryAt == nil && info.completedAt == nil)
        #expect(info.headerNames.isEmpty && !info.hasCredentials)
        #expect(info.now == nil, "only a download queued with --now says so")
        #expect(info.stalledSince == nil && info.resumesAt == nil && info.speed == nil && info.etaSeconds == nil)
    }

    @Test func everyStoredStateHasItsWireNameBothWays() {
        for state in DownloadRecord.State.allCases {
            #expect(DownloadState(state).rawValue == state.rawValue)
            #expect(DownloadRecord.State(DownloadState(state)) == state)
        }
    }

    @Test func enqueuedDownloadsAndCountsBecomeTheirResults() {
        let entry = EnqueuedDownload(
            id: 3,
            url: "https://cdn.example/c.mp3",
            existing: true,
            file: "/d/c.mp3",
            state: .paused,
            pauseReason: "outside_window"
        )
        #expect(
            EnqueueResult([entry]).downloads == [
                EnqueueResult.Entry(
                    id: 3,
                    url: "https://cdn.example/c.mp3",
                    existing: true,
                    file: "/d/c.mp3",
                    state: .paused,
                    pauseReason: "outside_window"
                )
            ]
        )
        let windows = DownloadWindows([DownloadWindow(start: 60, end: 360)])
        let counts = QueueCounts(
            active: 1,
            queued: 2,
            paused: 3,
            failed: 4,
            completed: 5,
            rate: 1_500,
            rateLimit: 100_000,
            gate: QueueCounts.Gate(
                closedBecause: .outsideWindow,
                windows: windows,
                nextWindowChange: added,
                metered: false
            )
        )
        #expect(
            DownloadCounts(counts)
                == DownloadCounts(
                    active: 1,
                    queued: 2,
                    paused: 3,
                    failed: 4,
                    completed: 5,
                    rate: 1_500,
                    rateLimit: 100_000,
                    gate: DownloadGateInfo(
                        closedBecause: GateReason.outsideWindow.rawValue,
                        windows: [windows.windows[0].description],
                        nextWindowChange: "2026-01-02T03:04:05Z",
                        metered: false
                    )
                )
        )
    }
}
