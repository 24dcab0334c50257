import Foundation
import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport

/// Canned podcasts and episodes as the daemon would report them.
enum PodcastFixtures {
    static let utc = LocalTimeZone.utc

    static func podcast(
        _ id: Int64,
        _ title: String,
        episodes: Int = 0,
        new: Int = 0,
        auto: AutoDownload = .off,
        keep: Int? = nil,
        refreshedAt: String? = "2026-11-29T11:58:30Z"
    ) -> PodcastInfo {
        PodcastInfo(
            id: id,
            title: title,
            author: "Ada",
            feedURL: "https://feeds.example.com/\(id).xml",
            link: nil,
            description: "",
            artworkURL: nil,
            artworkPath: nil,
            itunesID: nil,
            episodes: episodes,
            newEpisodes: new,
            autoDownload: auto,
            keep: keep,
            refreshedAt: refreshedAt,
            succeededAt: refreshedAt,
            nextRefreshAt: nil,
            lastError: nil,
            gone: false,
            hasCredentials: false
        )
    }

    static let daily = podcast(3, "The Daily", episodes: 120, new: 2, auto: .latest(3), keep: 5)

    static let gone: PodcastInfo = {
        var podcast = Self.podcast(4, "Old Show", episodes: 87, refreshedAt: "2026-11-28T06:00:00Z")
        podcast.gone = true
        podcast.lastError = "the feed is gone (HTTP 410); it is checked again once a day"
        return podcast
    }()

    static let failing: PodcastInfo = {
        var podcast = Self.podcast(5, "Flaky Feed", episodes: 1, new: 1, auto: .allNew, refreshedAt: nil)
        podcast.lastError = "the server answered HTTP 500 for https://feeds.example.com/5.xml"
        return podcast
    }()

    static func episode(
        _ id: Int64,
        _ title: String,
        published: String? = "2026-11-28T23:30:00Z",
        duration: Int? = 3723,
        new: Bool = false,
        state: DownloadState? = nil
    ) -> EpisodeInfo {
        EpisodeInfo(
            id: id,
            podcastID: 3,
            title: title,
            description: "",
            guid: nil,
            link: nil,
            published: published,
            durationSeconds: duration,
            enclosureURL: "https://cdn.example.com/\(id).mp3",
            enclosureType: "audio/mpeg",
            enclosureLength: nil,
            season: nil,
            episode: nil,
            chaptersURL: nil,
            transcriptURL: nil,
            isNew: new,
            downloadID: state == nil ? nil : id + 1000,
            downloadState: state,
            file: nil
        )
    }

    static let episodes = [
        episode(815, "Friday", new: true),
        episode(814, "Thursday", published: "2026-11-27T12:00:00+01:00", duration: 2712, state: .queued),
        episode(813, "Wednesday", published: nil, duration: nil, state: .active),
        episode(812, "Tuesday", duration: 59, state: .completed),
        episode(811, "Monday", published: "someday", duration: 108_000, state: .failed),
        episode(810, "Sunday", state: .paused),
        episode(809, "Saturday"),
    ]

    /// A `podcast.*` notification line.
    static func eventLine(_ event: PodcastEvent, _ podcast: PodcastInfo, newEpisodes: Int? = nil) -> String {
        let data = try! WireCoding.notificationLine(
            method: event.rawValue,
            params: PodcastEventParams(podcast: podcast, newEpisodes: newEpisodes)
        )
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
