// Episode lists read and written without JSONDecoder and JSONEncoder: a podcast can have 100,000 episodes, and
// their generic paths took seconds for that on each side. The fields are the ones `CodingKeys` names, and each
// `switch` over the keys is exhaustive, so a new field cannot be forgotten here.

extension EpisodeInfo: JSONByteReadable, JSONByteWritable {
    private static let keys = JSONKeyTable<CodingKeys>()
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package init(reading reader: inout JSONByteReader) throws {
        var id: Int64?
        var podcastID: Int64?
        var title: String?
        var description: String?
        var isNew: Bool?
        var episode = EpisodeInfo(
            id: 0,
            podcastID: 0,
            title: "",
            description: "",
            guid: nil,
            link: nil,
            published: nil,
            durationSeconds: nil,
            enclosureURL: nil,
            enclosureType: nil,
            enclosureLength: nil,
            season: nil,
            episode: nil,
            chaptersURL: nil,
            transcriptURL: nil,
            isNew: false,
            downloadID: nil,
            downloadState: nil,
            file: nil
        )
        var next = 0
        try reader.readObject { reader, name in
            guard let key = Self.keys.key(name, next: &next) else { return try reader.skipValue() }
            switch key {
            case .id: id = try reader.readInt64()
            case .podcastID: podcastID = try reader.readInt64()
            case .title: title = try reader.readString()
            case .description: description = try reader.readString()
            case .guid: episode.guid = try reader.readOptionalString()
            case .link: episode.link = try reader.readOptionalString()
            case .published: episode.published = try reader.readOptionalString()
            case .durationSeconds: episode.durationSeconds = try reader.readOptionalInt()
            case .enclosureURL: episode.enclosureURL = try reader.readOptionalString()
            case .enclosureType: episode.enclosureType = try reader.readOptionalString()
            case .enclosureLength: episode.enclosureLength = try reader.readOptionalInt64()
            case .season: episode.season = try reader.readOptionalInt()
            case .episode: episode.episode = try reader.readOptionalInt()
            case .chaptersURL: episode.chaptersURL = try reader.readOptionalString()
            case .transcriptURL: episode.transcriptURL = try reader.readOptionalString()
            case .isNew: isNew = try reader.readBool()
            case .downloadID: episode.downloadID = try reader.readOptionalInt64()
            case .downloadState:
                episode.downloadState = try reader.readOptional { reader in
                    let name = try reader.readString()
                    guard let state = DownloadState(rawValue: name) else {
                        throw reader.error("an unknown download state '\(name)'")
                    }
                    return state
                }
            case .file: episode.file = try reader.readOptionalString()
            case .episodeType: episode.episodeType = try reader.readOptionalString()
            case .playedAt: episode.playedAt = try reader.readOptionalString()
            case .pinned: episode.pinned = try reader.readOptional { try $0.readBool() }
            case .skipped: episode.skipped = try reader.readOptionalString()
            case .sidecars: episode.sidecars = try reader.readOptional { try $0.decode([EpisodeSidecarInfo].self) }
            }
        }
        func missing(_ key: CodingKeys) -> JSONByteError {
            reader.error("an episode without '\(key.stringValue)'")
        }
        guard let id else { throw missing(.id) }
        guard let podcastID else { throw missing(.podcastID) }
        guard let title else { throw missing(.title) }
        guard let description else { throw missing(.description) }
        guard let isNew else { throw missing(.isNew) }
        episode.id = id
        episode.podcastID = podcastID
        episode.title = title
        episode.description = description
        episode.isNew = isNew
        self = episode
    }

    package func write(to writer: inout JSONByteWriter) {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .id: writer.member(key, id)
            case .podcastID: writer.member(key, podcastID)
            case .title: writer.member(key, title)
            case .description: writer.member(key, description)
            case .guid: writer.member(key, guid)
            case .link: writer.member(key, link)
            case .published: writer.member(key, published)
            case .durationSeconds: writer.member(key, durationSeconds)
            case .enclosureURL: writer.member(key, enclosureURL)
            case .enclosureType: writer.member(key, enclosureType)
            case .enclosureLength: writer.member(key, enclosureLength)
            case .season: writer.member(key, season)
            case .episode: writer.member(key, episode)
            case .chaptersURL: writer.member(key, chaptersURL)
            case .transcriptURL: writer.member(key, transcriptURL)
            case .isNew: writer.member(key, isNew)
            case .downloadID: writer.member(key, downloadID)
            case .downloadState: writer.member(key, downloadState?.rawValue)
            case .file: writer.member(key, file)
            case .episodeType: writer.member(key, episodeType)
            case .playedAt: writer.member(key, playedAt)
            case .pinned: if let pinned { writer.member(key, pinned) }
            case .skipped: writer.member(key, skipped)
            case .sidecars:
                // Small plain values: the encoder cannot fail on them, and only `episode` carries them.
                if let sidecars, (try? WireCoding.encoder().encode(sidecars)) != nil {
                    writer.key(key)
                    try? writer.encode(sidecars)
                }
            }
        }
        writer.endObject()
    }
}

extension EpisodesResult: JSONByteReadable, JSONByteWritable {
    private static let keys = JSONKeyTable<CodingKeys>()
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package init(reading reader: inout JSONByteReader) throws {
        var podcast: PodcastInfo?
        var episodes: [EpisodeInfo]?
        var next = 0
        try reader.readObject { reader, name in
            switch Self.keys.key(name, next: &next) {
            case .podcast?: podcast = try reader.decode(PodcastInfo.self)
            case .episodes?: episodes = try reader.readArray(of: EpisodeInfo.self)
            case nil: try reader.skipValue()
            }
        }
        guard let podcast, let episodes else { throw reader.error("an episode list without its podcast or episodes") }
        self.init(podcast: podcast, episodes: episodes)
    }

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            writer.key(key)
            switch key {
            case .podcast: try writer.encode(podcast)
            case .episodes: try writer.array(episodes)
            }
        }
        writer.endObject()
    }
}

extension InboxResult: JSONByteReadable, JSONByteWritable {
    private static let keys = JSONKeyTable<CodingKeys>()
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package init(reading reader: inout JSONByteReader) throws {
        var episodes: [EpisodeInfo]?
        var podcasts: [PodcastInfo]?
        var next = 0
        try reader.readObject { reader, name in
            switch Self.keys.key(name, next: &next) {
            case .episodes?: episodes = try reader.readArray(of: EpisodeInfo.self)
            case .podcasts?: podcasts = try reader.decode([PodcastInfo].self)
            case nil: try reader.skipValue()
            }
        }
        guard let episodes, let podcasts else { throw reader.error("an inbox without its episodes or podcasts") }
        self.init(episodes: episodes, podcasts: podcasts)
    }

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            writer.key(key)
            switch key {
            case .episodes: try writer.array(episodes)
            case .podcasts: try writer.encode(podcasts)
            }
        }
        writer.endObject()
    }
}
