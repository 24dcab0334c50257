import CPosix
import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// Podcast artwork in the size-bounded cache.
extension Subscriptions {
    // MARK: - Artwork

    /// Brings the podcast's artwork into the cache, then trims the cache to its size. Failures are logged only:
    /// artwork is decoration.
    func refreshArtwork(_ id: Int64) async {
        guard let podcast = podcasts[id], let source = podcast.artworkURL, HTTPURL.isValid(source) else {
            return
        }
        let cached = podcast.artworkPath.flatMap { path in
            FileManager.default.fileExists(atPath: path)
                ? ArtworkCache.Entry(path: path, etag: podcast.artworkETag, lastModified: podcast.artworkLastModified)
                : nil
        }
        let cache = artworkCache
        switch await cache.refresh(id, from: source, cached: cached) {
        case .unchanged:
            return
        case .failed(let reason):
            logger.info("artwork of \(podcast.title) not fetched: \(reason)")
        case .stored(let entry):
            // Unsubscribed meanwhile: the image has no owner.
            guard var current = podcasts[id] else {
                unlink(entry.path)
                return
            }
            current.artworkPath = entry.path
            current.artworkETag = entry.etag
            current.artworkLastModified = entry.lastModified
            try? await save(current)
            for path in cache.trim() {
                for (id, podcast) in podcasts where podcast.artworkPath == path { podcasts[id]?.artworkPath = nil }
            }
        }
    }

    var artworkCache: ArtworkCache {
        ArtworkCache(
            directory: artworkDirectory,
            limit: settings.artworkCacheBytes,
            deadline: settings.fetchDeadline,
            transfer: settings.transfer,
            fetch: limitedFetch
        )
    }
}
