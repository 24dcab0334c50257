import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// The human-readable pieces of podcasts and episodes that `podcasts`, `episodes`, `refresh` and `watch` share.
package enum PodcastText {
    /// `2026-11-29 13:05` in `timeZone`, or the text as sent when it is not an ISO 8601 time.
    package static func time(_ iso8601: String, timeZone: LocalTimeZone) -> String {
        guard let parts = components(iso8601, timeZone: timeZone) else { return iso8601 }
        return "\(parts.year)-\(pad(parts.month))-\(pad(parts.day)) \(pad(parts.hour)):\(pad(parts.minute))"
    }

    /// `2026-11-29` in `timeZone`, or the text as sent when it is not an ISO 8601 time.
    package static func day(_ iso8601: String, timeZone: LocalTimeZone) -> String {
        guard let parts = components(iso8601, timeZone: timeZone) else { return iso8601 }
        return "\(parts.year)-\(pad(parts.month))-\(pad(parts.day))"
    }

    /// `1:02:03`, `0:45:12`; `-` when unknown. Hours are not capped, so a 30-hour audiobook reads `30:00:00`.
    package static func duration(seconds: Int?) -> String {
        guard let seconds, seconds >= 0 else { return "-" }
        return "\(seconds / 3600):\(pad(seconds % 3600 / 60)):\(pad(seconds % 60))"
    }

    /// `5`, or `all` when every downloaded episode is kept.
    package static func keep(_ keep: Int?) -> String {
        guard let keep, keep > 0 else { return "all" }
        return String(keep)
    }

    /// `3  The Daily`: how a line names a podcast, its title's control characters shown escaped
    /// (``TerminalText/escaped(_:)``).
    package static func name(_ podcast: PodcastInfo) -> String {
        "\(podcast.id)  \(TerminalText.escaped(podcast.title))"
    }

    /// `120 episodes, auto-download latest:3, keep 5`.
    package static func summary(_ podcast: PodcastInfo) -> String {
        "\(Formatting.count(podcast.episodes, "episode")), auto-download \(podcast.autoDownload), "
            + "keep \(keep(podcast.keep))"
    }

    /// `[gone]` for a feed that answered 410, `[error]` when the last refresh failed, else `nil`.
    package static func marker(_ podcast: PodcastInfo) -> String? {
        if podcast.gone { return "[gone]" }
        if podcast.lastError != nil { return "[error]" }
        return nil
    }

    /// What the last refresh said about a podcast with a ``marker(_:)``.
    package static func problem(_ podcast: PodcastInfo) -> String? {
        if let error = podcast.lastError { return error }
        return podcast.gone ? "the feed is gone (HTTP 410); it is checked again once a day" : nil
    }

    /// `downloaded`, `downloading`, `queued`, `paused`, `failed`; `new` or `-` for an episode never queued.
    ///
    /// A played episode says so whatever its file; a pinned one is marked `pinned`; one the rules pass over says
    /// which rule (`skipped: title excludes "trailer"`).
    package static func state(_ episode: EpisodeInfo) -> String {
        var state =
            switch episode.downloadState {
            case .completed?: "downloaded"
            case .active?: "downloading"
            case .queued?: "queued"
            case .paused?: "paused"
            case .failed?: "failed"
            case .cancelled?, nil: episode.isNew ? "new" : "-"
            }
        if episode.playedAt != nil {
            state = episode.downloadState == .completed ? "played, downloaded" : "played"
        } else if let skipped = episode.skipped {
            state = "skipped: \(skipped)"
        }
        return episode.pinned == true ? state + ", pinned" : state
    }

    /// `3, 4, 12`.
    package static func ids(_ ids: [Int64]) -> String {
        ids.map(String.init).joined(separator: ", ")
    }

    /// One `podcast.*` event as a line without its newline, e.g. `podcast 3  refreshed The Daily  2 new episodes`.
    ///
    /// Unknown `podcast.*` names print with their short name, so a newer daemon's events still read well.
    /// One `episode.*` event as a line without its newline, e.g.
    /// `episode 815  deleted Friday: played more than 7d ago (in the Trash)`.
    package static func episodeEventLine(_ method: String, _ event: EpisodeEventParams) -> String {
        let name = method.hasPrefix("episode.") ? String(method.dropFirst("episode.".count)) : method
        var line = "episode \(event.episode)  \(name) \(event.title)"
        if let reason = event.reason { line += ": \(reason)" }
        if event.trashedTo != nil { line += " (in the Trash)" }
        return TerminalText.escaped(line)
    }

    /// One `episode.marked` event as a line without its newline, e.g.
    /// `podcast 3  marked played: 120 episodes (815, 814, …)`; ten ids at most, as it may be thousands.
    package static func markedEventLine(_ event: EpisodesMarkedParams) -> String {
        let who = event.podcast.map { "podcast \($0)" } ?? "episodes"
        var shown = ids(Array(event.episodes.prefix(10)))
        if event.episodes.count > 10 { shown += ", …" }
        let count = event.count == 1 ? "1 episode" : "\(event.count) episodes"
        return TerminalText.escaped("\(who)  marked \(event.mark): \(count) (\(shown))")
    }

    package static func eventLine(_ method: String, _ event: PodcastEventParams) -> String {
        let podcast = event.podcast
        let detail: String
        switch PodcastEvent(rawValue: method) {
        case .subscribed:
            detail = "subscribed \(podcast.title)  \(summary(podcast))"
        case .refreshed:
            if podcast.gone {
                detail = "refreshed \(podcast.title)  gone: " + (problem(podcast) ?? "")
            } else if let error = podcast.lastError {
                detail = "refreshed \(podcast.title)  failed: \(error)"
            } else {
                detail = "refreshed \(podcast.title)  " + newEpisodes(event.newEpisodes ?? 0)
            }
        case .unsubscribed:
            detail = "unsubscribed \(podcast.title)"
        case nil:
            let name = method.hasPrefix("podcast.") ? String(method.dropFirst("podcast.".count)) : method
            detail = "\(name) \(podcast.title)"
        }
        // The title, the daemon's error text (which may quote a server) and an unknown event's name are outside text.
        return "podcast \(podcast.id)  " + TerminalText.escaped(detail)
    }

    /// `no new episodes`, `1 new episode`, `2 new episodes`.
    package static func newEpisodes(_ count: Int) -> String {
        count == 0 ? "no new episodes" : Formatting.count(count, "new episode")
    }

    private static func components(_ iso8601: String, timeZone: LocalTimeZone) -> Timestamps.Fields? {
        guard let date = DownloadText.parseDate(iso8601) else { return nil }
        return Timestamps.fields(of: date, in: timeZone)
    }

    private static func pad(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}
