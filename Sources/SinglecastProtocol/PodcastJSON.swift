/// Podcasts written straight into bytes (``JSONByteWritable``), the same bytes `WireCoding`'s encoder writes: the
/// answer of a refresh of 1,000 feeds spent 5 % of the refresh's CPU in `JSONEncoder`, on the daemon's cooperative
/// pool (docs/ARCHITECTURE.md, Refreshing many feeds).
extension PodcastInfo: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .id: writer.member(key, id)
            case .title: writer.member(key, title)
            case .author: writer.member(key, author)
            case .feedURL: writer.member(key, feedURL)
            case .link: writer.member(key, link)
            case .description: writer.member(key, description)
            case .artworkURL: writer.member(key, artworkURL)
            case .artworkPath: writer.member(key, artworkPath)
            case .itunesID: writer.member(key, itunesID)
            case .episodes: writer.member(key, episodes)
            case .newEpisodes: writer.member(key, newEpisodes)
            // Encoded as its text (``AutoDownload/encode(to:)``).
            case .autoDownload: writer.member(key, autoDownload.description)
            case .keep: writer.member(key, keep)
            case .refreshedAt: writer.member(key, refreshedAt)
            case .succeededAt: writer.member(key, succeededAt)
            case .nextRefreshAt: writer.member(key, nextRefreshAt)
            case .lastError: writer.member(key, lastError)
            case .gone: writer.member(key, gone)
            case .hasCredentials: writer.member(key, hasCredentials)
            case .duplicateItems: writer.member(key, duplicateItems)
            case .nameTemplate: writer.member(key, nameTemplate)
            case .folder: writer.member(key, folder)
            case .refreshInterval: writer.member(key, refreshInterval)
            case .rules:
                // A few short pairs, and only for a podcast with rules of its own: the encoder sorts their keys.
                if let rules {
                    writer.key(key)
                    try writer.encode(rules)
                }
            }
        }
        writer.endObject()
    }
}

extension RefreshResult.Entry: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .podcast:
                writer.key(key)
                try podcast.write(to: &writer)
            case .outcome: writer.member(key, outcome)
            case .newEpisodes: writer.member(key, newEpisodes)
            case .queued:
                writer.key(key)
                writer.integers(queued)
            case .error: writer.member(key, error)
            }
        }
        writer.endObject()
    }
}

extension RefreshResult: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .refreshed:
                writer.key(key)
                try writer.array(refreshed)
            case .notModified:
                guard let notModified else { continue }
                writer.key(key)
                writer.integers(notModified)
            }
        }
        writer.endObject()
    }
}
