import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// The human-readable pieces of podcasts and episodes that `podcasts`, `episodes`, `refresh` and `watch` share.
package enum PodcastText {
    /// `2026-11-29 13:05` in `timeZone` (``Timestamps/text(_:zone:)``).
    package static func time(_ iso8601: String, timeZone: LocalTimeZone) -> String {
        Timestamps.text(iso8601, zone: timeZone)
    }

    /// `2026-11-29` in `timeZone` (``Timestamps/day(_:zone:)``).
    package static func day(_ iso8601: String, timeZone: LocalTimeZone) -> String {
        Timestamps.day(iso8601, zone: timeZone)
    }

    /// An episode's length as every duration reads (``Formatting/duration(seconds:)``): `1h 2m`, `45m 12s`; `-` when
    /// unknown.
    package static func duration(seconds: Int?) -> String {
        guard let seconds, seconds >= 0 else { return "-" }
        return Formatting.duration(seconds: Double(seconds))
    }

    /// `5`, or `all` when every downloaded episode is kept.
    package static func keep(_ keep: Int?) -> String {
        guard let keep, keep > 0 else { return "all" }
        return String(keep)
    }

    /// `3  The Daily`: how a line names a podcast, its title's control characters shown escaped
    /// (``TerminalText/escaped(_:)``) and a long one cut (``ListSummary/title(_:columns:)``).
    package static func name(_ podcast: PodcastInfo) -> String {
        "\(podcast.id)  \(title(podcast.title))"
    }

    /// A title as a message (not a table, not `show`) quotes it: escaped, and cut to a few dozen columns.
    package static func title(_ title: String) -> String {
        ListSummary.title(TerminalText.escaped(title))
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

    /// `3, 4, 12`, or the first ten and `… and 4,990 more` (``ListSummary``).
    package static func ids(_ ids: [Int64]) -> String {
        ListSummary.ids(ids)
    }

    /// One `podcast.*` event as a line without its newline, e.g. `podcast 3  refreshed The Daily  2 new episodes`.
    ///
    /// Unknown `podcast.*` names print with their short name, so a newer daemon's events still read well.
    /// One `episode.*` event as a line without its newline, e.g.
    /// `episode 815  deleted Friday: played more than 7d ago (in the Trash)`.
    package static func episodeEventLine(_ method: String, _ event: EpisodeEventParams) -> String {
        let name = method.hasPrefix("episode.") ? String(method.dropFirst("episode.".count)) : method
        var line = "episode \(event.episode)  \(name) \(title(event.title))"
        if let reason = event.reason { line += ": \(reason)" }
        if event.trashedTo != nil { line += " (in the Trash)" }
        return TerminalText.escaped(line)
    }

    /// One `episode.marked` event as a line without its newline, e.g.
    /// `podcast 3  marked played: 120 episodes (815, 814, …, 806, … and 110 more)`; ten ids at most, as it may be
    /// thousands.
    package static func markedEventLine(_ event: EpisodesMarkedParams) -> String {
        let who = event.podcast.map { "podcast \($0)" } ?? "episodes"
        let shown = ids(event.episodes)
        let count = event.count == 1 ? "1 episode" : "\(ListSummary.grouped(event.count)) episodes"
        return TerminalText.escaped("\(who)  marked \(event.mark): \(count) (\(shown))")
    }

    package static func eventLine(_ method: String, _ event: PodcastEventParams) -> String {
        let podcast = event.podcast
        let name = title(podcast.title)
        let detail: String
        switch PodcastEvent(rawValue: method) {
        case .subscribed:
            detail = "subscribed \(name)  \(summary(podcast))"
        case .refreshed:
            if podcast.gone {
                detail = "refreshed \(name)  gone: " + (problem(podcast) ?? "")
            } else if let error = podcast.lastError {
                detail = "refreshed \(name)  failed: \(error)"
            } else {
                detail = "refreshed \(name)  " + newEpisodes(event.newEpisodes ?? 0)
            }
        case .unsubscribed:
            detail = "unsubscribed \(name)"
        case nil:
            let event = method.hasPrefix("podcast.") ? String(method.dropFirst("podcast.".count)) : method
            detail = "\(event) \(name)"
        }
        // The title, the daemon's error text (which may quote a server) and an unknown event's name are outside text.
        return "podcast \(podcast.id)  " + TerminalText.escaped(detail)
    }

    /// `no new episodes`, `1 new episode`, `2 new episodes`.
    package static func newEpisodes(_ count: Int) -> String {
        count == 0 ? "no new episodes" : Formatting.count(count, "new episode")
    }

}
