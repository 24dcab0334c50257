import FoundationEssentials
import SinglecastProtocol

/// Turns `download.*` events into what `watch` prints; pure, so tests feed it events and times.
///
/// On a terminal, every active download has one line in a live area at the bottom that is redrawn in place
/// (cursor up over the area, each line cleared and rewritten); other events print a line above the area, once.
/// Elsewhere (a file, a pipe) each event prints one plain line, except progress, which prints at most once per
/// ``plainProgressInterval`` per download so a log stays readable.
///
/// The daemon sends no progress while no bytes arrive, so a download whose last event is older than
/// ``quietLimit`` shows as stalled: ``tick(now:)``, called while waiting for events, redraws its live line (on a
/// terminal) or prints `stalled` once (elsewhere).
package struct ProgressRenderer: Sendable {
    package enum Mode: Hashable, Sendable {
        case terminal
        case plain
    }

    package var mode: Mode
    /// The terminal's width; live lines are cut to fit, since a wrapped line would break the redraw.
    package var columns: Int?
    /// The active downloads shown in the live area, in the order they became active.
    package private(set) var live: [DownloadInfo] = []
    /// Lines of the live area on screen now; the cursor is at the start of the line below them.
    private var drawnLines = 0
    /// The live lines on screen now, to redraw only when one changes.
    private var drawnLive: [String] = []
    /// When each download's last progress line was printed in plain mode.
    private var lastProgressLine: [Int64: Date] = [:]
    /// When the last event about each live download arrived.
    private var lastEvent: [Int64: Date] = [:]
    /// Live downloads whose stall plain mode has printed.
    private var reportedStalls: Set<Int64> = []
    /// The latest time an event or tick brought, for redraws that come with none.
    private var latest = Date.distantPast

    package static let plainProgressInterval: TimeInterval = 5
    /// How long an active download may go without events before it shows as stalled.
    package static let quietLimit: TimeInterval = 5
    static let barWidth = 20

    package init(mode: Mode, columns: Int? = nil) {
        self.mode = mode
        self.columns = columns
    }

    /// The text to write for one `download.*` event.
    ///
    /// - Parameters:
    ///   - method: the event's method, e.g. `download.progress`; unknown `download.*` names print a plain line.
    ///   - download: the download as the event reports it.
    ///   - now: the current time, for throttling and retry delays.
    package mutating func event(_ method: String, _ download: DownloadInfo, now: Date) -> String {
        let kind = DownloadEvent(rawValue: method)
        latest = max(latest, now)
        reportedStalls.remove(download.id)
        if download.state == .active {
            lastEvent[download.id] = now
            if let index = live.firstIndex(where: { $0.id == download.id }) {
                live[index] = download
            } else {
                live.append(download)
            }
        } else {
            live.removeAll { $0.id == download.id }
            lastEvent[download.id] = nil
        }
        switch mode {
        case .plain:
            if download.state != .active { lastProgressLine[download.id] = nil }
            if kind == .progress {
                if let last = lastProgressLine[download.id], now.timeIntervalSince(last) < Self.plainProgressInterval {
                    return ""
                }
                lastProgressLine[download.id] = now
            }
            return Self.line(method, download, now: now) + "\n"
        case .terminal:
            let above = kind == .progress || kind == .started ? [] : [Self.line(method, download, now: now)]
            return redraw(above: above)
        }
    }

    /// The text to write for a line that is not about a download (it ends with a newline), e.g. a daemon event.
    package mutating func message(_ line: String) -> String {
        switch mode {
        case .plain: return line
        case .terminal:
            return redraw(
                above: line.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            )
        }
    }

    /// What to write while no event arrives: live lines that now read stalled (or count their stall up) on a
    /// terminal, one `stalled` line per newly quiet download elsewhere; usually nothing.
    package mutating func tick(now: Date) -> String {
        latest = max(latest, now)
        switch mode {
        case .terminal:
            return liveLines() == drawnLive ? "" : redraw(above: [])
        case .plain:
            var text = ""
            for download in live where isQuiet(download) && !reportedStalls.contains(download.id) {
                reportedStalls.insert(download.id)
                text += "\(download.id)  stalled \(DownloadText.name(download))\n"
            }
            return text
        }
    }

    private func isQuiet(_ download: DownloadInfo) -> Bool {
        guard let last = lastEvent[download.id] else { return false }
        return latest.timeIntervalSince(last) > Self.quietLimit
    }

    private func liveLines() -> [String] {
        live.map { fit(Self.liveLine($0, now: latest, quiet: isQuiet($0))) }
    }

    private mutating func redraw(above: [String]) -> String {
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
        for line in above { text += "\u{1B}[2K" + line + "\n" }
        let lines = liveLines()
        for line in lines { text += "\u{1B}[2K" + line + "\n" }
        // Clear what is left of a live area that shrank.
        if drawnLines > above.count + lines.count { text += "\u{1B}[J" }
        drawnLines = lines.count
        drawnLive = lines
        return text
    }

    /// Cuts a live line to one column less than the terminal, so it can never wrap.
    private func fit(_ line: String) -> String {
        guard let columns, columns > 1, line.count >= columns else { return line }
        return String(line.prefix(columns - 1))
    }

    /// `12  [#########-----------] 45%  12.4 MB / 27.6 MB  1.2 MB/s  ETA 3m 12s  ep.mp3`, or with `stalled 30s`
    /// (`stalled` when `quiet` or without `stalled_since`) in place of speed and ETA.
    ///
    /// - Parameters:
    ///   - now: the time to count a stall from.
    ///   - quiet: no event about the download arrived for longer than ``quietLimit``.
    package static func liveLine(_ download: DownloadInfo, now: Date, quiet: Bool = false) -> String {
        var fields: [String] = []
        if let percent = DownloadText.percent(download) {
            let filled = min(barWidth, percent * barWidth / 100)
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
            fields.append("[\(bar)] \(percent)%")
            fields.append(DownloadText.size(download))
        } else {
            fields.append(Formatting.byteCount(download.bytesDone))
        }
        if let stall = DownloadText.stall(download, now: now) ?? (quiet ? "stalled" : nil) {
            fields.append(stall)
        } else {
            if let speed = DownloadText.speed(download, now: now) { fields.append(speed) }
            if let eta = DownloadText.eta(download, now: now) { fields.append("ETA \(eta)") }
        }
        fields.append(DownloadText.name(download))
        return "\(download.id)  " + fields.joined(separator: "  ")
    }

    /// One event as a line without its newline: `12  progress 45%  1.2 MB/s`, `12  completed /music/ep.mp3  27.6 MB`.
    package static func line(_ method: String, _ download: DownloadInfo, now: Date) -> String {
        let name = DownloadText.name(download)
        let detail: String
        switch DownloadEvent(rawValue: method) {
        case .added:
            detail = "added \(name)  \(download.url)"
        case .started:
            detail = "started \(name)" + (download.bytesTotal.map { "  \(Formatting.byteCount($0))" } ?? "")
        case .progress:
            detail =
                "progress "
                + ([DownloadText.progress(download)] + [DownloadText.speed(download, now: now)].compactMap { $0 })
                .joined(separator: "  ")
        case .paused:
            detail = "paused \(name)" + (download.pauseReason.map { " (\(DownloadText.humanize($0)))" } ?? "")
        case .resumed:
            detail = "resumed \(name)"
        case .retrying:
            var text = "retrying \(name)  attempt \(download.attempts)"
            if let error = download.lastError { text += " failed: \(DownloadText.error(error))" }
            if let next = download.nextRetryAt { text += "; next try \(DownloadText.retryTime(next, now: now))" }
            detail = text
        case .completed:
            detail = "completed \(download.file)  \(Formatting.byteCount(download.bytesTotal ?? download.bytesDone))"
        case .failed:
            detail = "failed \(name)" + (download.lastError.map { "  \(DownloadText.error($0))" } ?? "")
        case .removed:
            detail = "removed \(name)"
        case nil:
            let event = method.hasPrefix("download.") ? String(method.dropFirst("download.".count)) : method
            detail = "\(event) \(name)  \(download.state.rawValue)"
        }
        return "\(download.id)  \(detail)"
    }
}
