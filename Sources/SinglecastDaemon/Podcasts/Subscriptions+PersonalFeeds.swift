import SinglecastStore

#if canImport(Glibc)
import Glibc
#endif

/// A podcast as its personal feed shows it.
package struct PersonalFeedPodcast: Sendable, Hashable {
    package var id: Int64
    package var title: String
    package var author: String?
    package var description: String
    package var link: String?
    package var language: String?
    /// Unix milliseconds.
    package var subscribedAt: Int64
    /// The artwork cache holds its image.
    package var hasArtwork: Bool
}

/// A downloaded episode as a personal feed lists it: what the original feed said, and the file singlecast saved.
package struct PersonalFeedEpisode: Sendable, Hashable {
    package var id: Int64
    package var podcastID: Int64
    package var title: String
    package var description: String
    /// The original guid, else the identity singlecast keeps the episode by.
    package var guid: String
    package var link: String?
    /// Unix milliseconds.
    package var publishedAt: Int64?
    package var durationSeconds: Int?
    package var season: Int?
    package var episodeNumber: Int?
    package var episodeType: String?
    package var file: ServableFile
    /// The file's size now.
    package var size: Int64
    /// Its chapters and transcripts saved beside it.
    package var sidecars: [PersonalFeedSidecar] = []
}

/// A chapters or transcript file saved beside an episode, as its personal feed links to it.
package struct PersonalFeedSidecar: Sendable, Hashable {
    package var kind: SavedSidecar.Kind
    package var language: String?
    /// The type the feed's `podcast:chapters` or `podcast:transcript` names.
    package var mimeType: String
    package var rel: String?
    package var file: ServableFile
}

/// A file the web side may serve: one singlecast saved and still records, and the directory it must lie inside.
package struct ServableFile: Sendable, Hashable {
    package var path: String
    /// The directory the file must resolve into (`download_dir`, or the artwork cache).
    package var root: String
    /// The media type the feed announced for it, if any: outside text, checked before it becomes a header.
    package var announcedType: String?

    /// The last path component: the name a URL must end with.
    package var name: String { DownloadDirectory.baseName(path) }
}

/// What a personal feed lists: its podcasts, and their downloaded episodes newest first.
package struct PersonalFeed: Sendable, Hashable {
    package var podcasts: [PersonalFeedPodcast]
    package var episodes: [PersonalFeedEpisode]
}

/// The reads the personal feeds and the media they point at are made of. Nothing here is stored: the feeds are
/// views of the catalogue and the queue, so a download completed or a file deleted shows at the next fetch.
extension Subscriptions {
    /// Every subscription as its feed shows it, by id.
    package func personalFeedPodcasts() -> [PersonalFeedPodcast] {
        podcasts.values.filter { !leaving.contains($0.id) }.sorted { $0.id < $1.id }.map(Self.personalFeedPodcast)
    }

    /// One podcast's feed, or every podcast's (`nil`); `nil` when the podcast is unknown.
    package func personalFeed(of podcast: Int64?) async throws -> PersonalFeed? {
        let shown: [PersonalFeedPodcast]
        if let podcast {
            guard let record = podcasts[podcast], !leaving.contains(podcast) else { return nil }
            shown = [Self.personalFeedPodcast(record)]
        } else {
            shown = personalFeedPodcasts()
        }
        let ids = Set(shown.map(\.id))
        let linked: [EpisodeRecord]
        do {
            linked = try await store.downloadedEpisodes().filter { ids.contains($0.podcastID) }
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let files = await servableFiles(of: linked)
        // The show notes are read only for the episodes listed: they can be kilobytes each.
        let records: [EpisodeRecord]
        do {
            records = files.isEmpty ? [] : try await store.episodes(ids: Array(files.keys), fields: .all)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let sidecars = await servableSidecars(of: Array(files.keys))
        var episodes: [(record: EpisodeRecord, episode: PersonalFeedEpisode)] = []
        for record in records {
            // The file as it is now: one deleted behind singlecast's back is not offered.
            guard let file = files[record.id], let size = Self.regularFileSize(file.path) else { continue }
            var episode = Self.personalFeedEpisode(record, file: file, size: size)
            episode.sidecars = sidecars[record.id] ?? []
            episodes.append((record, episode))
        }
        episodes.sort { lhs, rhs in
            let (left, right) = (lhs.record, rhs.record)
            if left.publishedAt != right.publishedAt { return (left.publishedAt ?? .min) > (right.publishedAt ?? .min) }
            return (left.podcastID, left.feedOrder, left.id) < (right.podcastID, right.feedOrder, right.id)
        }
        return PersonalFeed(podcasts: shown, episodes: episodes.map(\.episode))
    }

    /// The file at `/media/<episode>/<name>`: the episode's downloaded file, or a chapters or transcript file saved
    /// beside it, when `name` is its name; `nil` for anything else.
    package func servableFile(episode: Int64, named name: String) async -> ServableFile? {
        guard let record = try? await store.episodes(ids: [episode], fields: .withoutDescription).first,
            let file = await servableFiles(of: [record])[episode]
        else { return nil }
        if file.name == name { return file }
        return await servableSidecars(of: [episode])[episode]?.first { $0.file.name == name }?.file
    }

    /// A podcast's image in the artwork cache.
    package func servableArtwork(podcast: Int64) -> ServableFile? {
        guard let record = podcasts[podcast], !leaving.contains(podcast), let path = record.artworkPath else {
            return nil
        }
        return ServableFile(path: path, root: artworkDirectory, announcedType: nil)
    }

    /// The one rule of what the web side may serve of an episode: the file of its completed download, for an
    /// episode of a podcast still subscribed that has not let go of it.
    private func servableFiles(of records: [EpisodeRecord]) async -> [Int64: ServableFile] {
        let kept = records.filter {
            $0.downloadID != nil && $0.fileDeletedAt == nil && podcasts[$0.podcastID] != nil
                && !leaving.contains($0.podcastID)
        }
        let downloads = await queue.infos(kept.compactMap(\.downloadID))
        var files: [Int64: ServableFile] = [:]
        for record in kept {
            guard let id = record.downloadID, let download = downloads[id], download.state == .completed else {
                continue
            }
            files[record.id] = ServableFile(
                path: download.file,
                root: downloadDirectory,
                announcedType: record.enclosureType
            )
        }
        return files
    }

    /// The chapters and transcripts saved beside episodes whose own file may be served, and still there.
    private func servableSidecars(of episodes: [Int64]) async -> [Int64: [PersonalFeedSidecar]] {
        guard !episodes.isEmpty, let saved = try? await savedSidecars(episodeIDs: episodes) else { return [:] }
        return saved.mapValues { sidecars in
            sidecars.compactMap { sidecar in
                guard Self.regularFileSize(sidecar.path) != nil else { return nil }
                return PersonalFeedSidecar(
                    kind: sidecar.kind,
                    language: sidecar.language,
                    mimeType: sidecar.mimeType,
                    rel: sidecar.rel,
                    file: ServableFile(path: sidecar.path, root: downloadDirectory, announcedType: nil)
                )
            }
        }
    }

    private static func personalFeedPodcast(_ record: PodcastRecord) -> PersonalFeedPodcast {
        PersonalFeedPodcast(
            id: record.id,
            title: record.title,
            author: record.author,
            description: record.description,
            link: record.link,
            language: record.language,
            subscribedAt: record.subscribedAt,
            hasArtwork: record.artworkPath != nil
        )
    }

    private static func personalFeedEpisode(
        _ record: EpisodeRecord,
        file: ServableFile,
        size: Int64
    )
        -> PersonalFeedEpisode
    {
        PersonalFeedEpisode(
            id: record.id,
            podcastID: record.podcastID,
            title: record.title,
            description: record.description,
            guid: record.guid ?? record.identity,
            link: record.link,
            publishedAt: record.publishedAt,
            durationSeconds: record.durationSeconds,
            season: record.season,
            episodeNumber: record.episodeNumber,
            episodeType: record.episodeType,
            file: file,
            size: size
        )
    }

    /// The size of a regular file (not through a symbolic link); `nil` for anything else or nothing.
    private static func regularFileSize(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}
