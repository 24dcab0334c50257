import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// The human-readable pieces of a ``DownloadInfo`` that `downloads`, `show` and `watch` share.
package enum DownloadText {
    /// `queued`, `queued (waiting for a slot on cdn.example.com)` while every slot of its host is taken,
    /// `queued (retry in 42s)`, `queued (waiting for a slot)` once that time has passed (the queue starts
    /// a due retry at once unless every slot, or its host's, is taken), `paused (disk full)`, `paused (waiting for window 01:00)`,
    /// `paused (metered network)`, `failed (HTTP 404)`.
    package static func state(_ download: DownloadInfo, now: Date, zone: LocalTimeZone = .system) -> String {
        switch download.state {
        case .queued:
            // The daemon names the host only while every one of its per-host slots is taken.
            if let host = download.waitingForHost { return "queued (waiting for a slot on \(host))" }
            guard let nextRetryAt = download.nextRetryAt else { return "queued" }
            if isDue(nextRetryAt, now: now) { return "queued (waiting for a slot)" }
            return "queued (retry \(retryTime(nextRetryAt, now: now)))"
        case .paused:
            guard let reason = download.pauseReason else { return "paused" }
            if reason == "outside_window", let opens = download.resumesAt.flatMap(parseDate) {
                return "paused (waiting for window \(clock(opens, zone: zone)))"
            }
            return "paused (\(reason == "metered" ? "metered network" : humanize(reason)))"
        case .failed:
            guard let error = download.lastError else { return "failed" }
            return "failed (\(error.httpStatus.map { "HTTP \($0)" } ?? humanize(error.code)))"
        case .active, .completed, .cancelled:
            return download.state.rawValue
        }
    }

    /// Whether a retry's time has passed.
    package static func isDue(_ iso8601: String, now: Date) -> Bool {
        parseDate(iso8601).map { $0.timeIntervalSince(now) < 1 } ?? false
    }

    /// `in 42s`, `now` once the time has passed, or `at <time>` when the time cannot be read.
    package static func retryTime(_ iso8601: String, now: Date) -> String {
        guard let date = parseDate(iso8601) else { return "at \(iso8601)" }
        let seconds = date.timeIntervalSince(now)
        return seconds < 1 ? "now" : "in \(Formatting.duration(seconds: seconds))"
    }

    /// `45%` when the size is known, else the bytes so far (`12.4 MB`), or `-` before the first byte.
    package static func progress(_ download: DownloadInfo) -> String {
        if download.state == .completed { return "100%" }
        guard let percent = percent(download) else {
            return download.bytesDone > 0 ? Formatting.byteCount(download.bytesDone) : "-"
        }
        return "\(percent)%"
    }

    /// Whole percent done, rounded down so `100%` means finished; `nil` while the size is unknown.
    package static func percent(_ download: DownloadInfo) -> Int? {
        guard let total = download.bytesTotal else { return nil }
        guard total > 0 else { return 100 }
        let done = min(max(download.bytesDone, 0), total)
        return Int(Double(done) * 100 / Double(total))
    }

    /// `12.4 MB / 27.6 MB`, `12.4 MB / ?` while the size is unknown (`-` before the first byte), just the size
    /// once completed.
    package static func size(_ download: DownloadInfo) -> String {
        if download.state == .completed { return Formatting.byteCount(download.bytesTotal ?? download.bytesDone) }
        let done = Formatting.byteCount(download.bytesDone)
        guard let total = download.bytesTotal else { return download.bytesDone > 0 ? "\(done) / ?" : "-" }
        return "\(done) / \(Formatting.byteCount(total))"
    }

    /// `stalled 30s` while an active download receives no bytes, counted from the daemon's `stalled_since`;
    /// `stalled` when the daemon does not say since when but the speed has fallen below
    /// ``Formatting/minimumRate``; `nil` otherwise.
    package static func stall(_ download: DownloadInfo, now: Date) -> String? {
        guard download.state == .active else { return nil }
        if let stalledSince = download.stalledSince {
            guard let since = parseDate(stalledSince) else { return "stalled" }
            return "stalled " + Formatting.duration(seconds: now.timeIntervalSince(since))
        }
        if let speed = download.speed, !(speed >= Formatting.minimumRate) { return "stalled" }
        return nil
    }

    /// `1.2 MB/s` while active with a measured speed, the ``stall(_:now:)`` text in its place while stalled.
    package static func speed(_ download: DownloadInfo, now: Date) -> String? {
        if let stall = stall(download, now: now) { return stall }
        guard download.state == .active, let speed = download.speed else { return nil }
        return Formatting.rate(speed)
    }

    /// `3m 12s` while active with a known size and speed, `<1s` for the last moment (never `0s` before the end);
    /// `nil` while stalled, as the daemon's estimate then only says "never".
    package static func eta(_ download: DownloadInfo, now: Date) -> String? {
        guard download.state == .active, stall(download, now: now) == nil,
            let eta = download.etaSeconds, eta.isFinite, eta >= 0
        else { return nil }
        return eta < 1 ? "<1s" : Formatting.duration(seconds: eta)
    }

    /// The file's base name, `ep.mp3` for `/music/ep.mp3`.
    package static func name(_ download: DownloadInfo) -> String {
        let name = download.file.split(separator: "/").last.map(String.init) ?? download.file
        return name.isEmpty ? download.file : name
    }

    /// `Not Found (http_status, HTTP 404)`.
    package static func error(_ error: DownloadErrorInfo) -> String {
        let status = error.httpStatus.map { ", HTTP \($0)" } ?? ""
        return "\(error.message) (\(error.code)\(status))"
    }

    /// `disk_full` → `disk full`.
    package static func humanize(_ code: String) -> String {
        code.replacingEvery("_", with: " ")
    }

    /// What a download the gate paused waits for (`waiting for the download window`), or `nil` for other reasons.
    package static func gateWait(_ reason: String) -> String? {
        switch reason {
        case "outside_window": "waiting for the download window"
        case "metered": "waiting: the network is metered"
        default: nil
        }
    }

    /// `01:00`: the local wall-clock time of `date`.
    package static func clock(_ date: Date, zone: LocalTimeZone = .system) -> String {
        Timestamps.clock(date, zone: zone)
    }

    /// Reads the daemon's ISO 8601 UTC times, with or without fractional seconds.
    package static func parseDate(_ text: String) -> Date? {
        Timestamps.parse(text)
    }
}
