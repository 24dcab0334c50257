import Foundation
import SinglecastCLI
import SinglecastProtocol

/// Canned downloads in every state, as the daemon would report them.
enum DownloadFixtures {
    /// The clock every rendering test reads: retry times below are counted from here.
    static let now = DownloadText.parseDate("2026-11-29T12:00:00Z")!

    static func download(
        _ id: Int64,
        _ state: DownloadState,
        file: String,
        done: Int64 = 0,
        total: Int64? = nil,
        speed: Double? = nil,
        eta: Double? = nil
    ) -> DownloadInfo {
        DownloadInfo(
            id: id,
            url: "https://feeds.example.com/show/\(id).mp3",
            finalURL: nil,
            file: "/home/me/Podcasts/\(file)",
            state: state,
            pauseReason: nil,
            priority: 0,
            position: id,
            bytesDone: done,
            bytesTotal: total,
            speed: speed,
            etaSeconds: eta,
            attempts: state == .queued ? 0 : 1,
            lastError: nil,
            nextRetryAt: nil,
            addedAt: "2026-11-29T11:00:00Z",
            completedAt: nil,
            headerNames: [],
            hasCredentials: false
        )
    }

    static let active = download(
        12,
        .active,
        file: "episode-12.mp3",
        done: 12_400_000,
        total: 27_600_000,
        speed: 1_258_291.2,
        eta: 192.4
    )

    static let activeUnknownSize = download(13, .active, file: "live-stream.mp3", done: 5_000_000, speed: 524_288)

    static let retrying: DownloadInfo = {
        var download = Self.download(7, .queued, file: "episode-7.mp3", done: 3_000_000, total: 40_000_000)
        download.attempts = 2
        download.lastError = DownloadErrorInfo(code: "network", message: "Connection reset by peer")
        download.nextRetryAt = "2026-11-29T12:00:42Z"
        return download
    }()

    static let queued = download(8, .queued, file: "episode-8.mp3")

    static let diskFull: DownloadInfo = {
        var download = Self.download(9, .paused, file: "episode-9.mp3", done: 1_000_000, total: 50_000_000)
        download.pauseReason = "disk_full"
        return download
    }()

    static let paused = download(10, .paused, file: "episode-10.mp3", done: 999, total: 1_000_000_000)

    static let failed: DownloadInfo = {
        var download = Self.download(3, .failed, file: "episode-3.mp3")
        download.attempts = 1
        download.lastError = DownloadErrorInfo(code: "http_status", message: "Not Found", httpStatus: 404)
        return download
    }()

    static let completed: DownloadInfo = {
        var download = Self.download(1, .completed, file: "episode-1.mp3", done: 27_600_000, total: 27_600_000)
        download.completedAt = "2026-11-29T11:30:00Z"
        return download
    }()

    static let all = [active, activeUnknownSize, retrying, queued, diskFull, paused, failed, completed]

    /// `{"jsonrpc":"2.0","id":1,"result":…}` without the newline, for ``TestServer``.
    static func resultLine(_ result: some Encodable, id: Int64 = 1) -> String {
        let data = try! WireCoding.resultLine(id: .integer(id), result: result)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// A `download.*` notification line.
    static func eventLine(_ event: DownloadEvent, _ download: DownloadInfo) -> String {
        let data = try! WireCoding.notificationLine(
            method: event.rawValue,
            params: DownloadEventParams(download: download)
        )
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
