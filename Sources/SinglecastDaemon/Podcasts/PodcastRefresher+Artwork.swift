import FoundationEssentials
import SinglecastHTTP
import SinglecastStore

/// Podcast artwork: fetched into the size-bounded cache by the refresher, recorded by the catalogue.
extension PodcastRefresher {
    /// Brings the podcast's artwork into the cache, then trims the cache to its size. Failures are logged only:
    /// artwork is decoration.
    func refreshArtwork(_ id: Int64) async {
        guard let catalogue, let podcast = await catalogue.podcast(id), let source = podcast.artworkURL,
            HTTPURL.isValid(source)
        else {
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
            // `podcast` is from before the fetch: the catalogue records the image only if the podcast is still there.
            guard await catalogue.storeArtwork(entry, of: id) else { return }
            // The cache is listed only when it may be over its size: listing it after every image made subscribing to
            // 1,000 feeds stat half a million files. Counting a replaced or deleted image again only lists it sooner.
            if let held = artworkBytes, let added = ArtworkCache.size(of: entry.path),
                held + added <= settings.artworkCacheBytes
            {
                artworkBytes = held + added
                return
            }
            let (deleted, remaining) = cache.trimmed()
            artworkBytes = remaining
            await catalogue.forgetArtwork(deleted)
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
