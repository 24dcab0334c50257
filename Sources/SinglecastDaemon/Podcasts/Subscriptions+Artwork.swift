import SinglecastStore

#if canImport(Glibc)
import Glibc
#endif

/// Podcast artwork as the catalogue records it; ``PodcastRefresher`` fetches it into the cache.
extension Subscriptions {
    /// Records a fetched image as the podcast's; `false`, and the image deleted, when the podcast was unsubscribed
    /// (or is being) while it was fetched: it has no owner.
    func storeArtwork(_ entry: ArtworkCache.Entry, of id: Int64) async -> Bool {
        guard var current = podcasts[id], !leaving.contains(id) else {
            unlink(entry.path)
            return false
        }
        current.artworkPath = entry.path
        current.artworkETag = entry.etag
        current.artworkLastModified = entry.lastModified
        // A cache's bookkeeping: a power cut that rolls it back has the image fetched again.
        try? await save(current, durability: .processCrash)
        return true
    }

    /// The cache deleted these images to keep to its size.
    func forgetArtwork(_ paths: [String]) {
        for path in paths {
            for (id, podcast) in podcasts where podcast.artworkPath == path { podcasts[id]?.artworkPath = nil }
        }
    }
}
