import SinglecastProtocol

// The podcast methods' requests as the catalogue's commands: the podcast layer does not read the wire's shapes (which
// field combinations a request may have). Its answers become results in `Router+PodcastsResults.swift`.

extension EpisodeChoice {
    /// `episodes`, or `podcast` with `all`: marking a whole podcast needs `all: true`, so it is never done by accident.
    init(_ params: EpisodeMarkParams) throws(PodcastError) {
        switch (params.episodes, params.podcast) {
        case (let ids?, nil):
            self = .episodes(ids)
        case (nil, let selector?):
            guard params.all == true else {
                throw PodcastError.invalid(
                    "marking a whole podcast needs 'all': true, so that it is never done by accident",
                    parameter: "all"
                )
            }
            self = .wholePodcast(selector)
        default:
            throw PodcastError.invalid("give exactly one of 'episodes' and 'podcast'", parameter: "episodes")
        }
    }
}

extension SubscribeCommand {
    /// Exactly one of `url` and `itunes_id`; `user` and `password` together or not at all.
    init(_ params: SubscribeParams) throws(PodcastError) {
        let feed: Feed
        switch (params.url, params.itunesID) {
        case (let url?, nil): feed = .url(url)
        case (nil, let id?): feed = .itunesID(id)
        default:
            throw PodcastError.invalid("'subscribe' takes exactly one of 'url' and 'itunes_id'", parameter: "url")
        }
        let credentials: Credentials?
        switch (params.user, params.password) {
        case (let user?, let password?): credentials = Credentials(user: user, password: password)
        case (nil, nil): credentials = nil
        default: throw PodcastError.invalid("'user' and 'password' go together", parameter: "user")
        }
        self.init(
            feed: feed,
            credentials: credentials,
            autoDownload: params.autoDownload.map(EpisodePolicy.Fetch.init),
            keep: params.keep,
            rules: params.rules
        )
    }
}

extension UnsubscribeCommand {
    init(_ params: UnsubscribeParams) { self.init(podcast: params.podcast, deleteFiles: params.deleteFiles ?? false) }
}

extension PodcastPage {
    init(_ params: PodcastsParams) throws(PodcastError) { try self.init(after: params.after, limit: params.limit) }
}

extension EpisodeQuery {
    init(_ params: EpisodesParams) {
        self.init(
            podcast: params.podcast,
            onlyNew: params.new ?? false,
            unplayed: params.unplayed ?? false,
            limit: params.limit,
            brief: params.brief ?? false
        )
    }
}

extension PodcastChange {
    init(_ params: SetPodcastParams) {
        self.init(
            podcast: params.podcast,
            autoDownload: params.autoDownload.map(EpisodePolicy.Fetch.init),
            keep: params.keep,
            nameTemplate: params.nameTemplate,
            folder: params.folder,
            refreshInterval: params.refreshInterval,
            rules: params.rules,
            feedURL: params.feedURL
        )
    }

    /// `rules` tries these changes without storing them.
    init(_ params: RulesParams) {
        self.init(
            podcast: params.podcast,
            autoDownload: params.autoDownload.map(EpisodePolicy.Fetch.init),
            keep: params.keep,
            rules: params.changes
        )
    }
}

extension DownloadLatestCommand {
    init(_ params: DownloadLatestParams) {
        self.init(podcast: params.podcast, latest: params.latest, now: params.now == true)
    }
}

extension EpisodeEnqueueCommand {
    /// Episodes are named by the name template: `name` and `directory` apply to URLs only. The URLs are checked by the
    /// queue before anything is queued, so a refused request queues nothing.
    init(_ params: EnqueueParams, queue: DownloadQueue) async throws {
        if params.name != nil || params.directory != nil {
            throw PodcastError.invalid(
                "episodes are named by the name template; 'name' and 'directory' apply to URLs only",
                parameter: params.name != nil ? "name" : "directory"
            )
        }
        let urls = params.urls.isEmpty ? [] : try await DownloadRequest.requests(for: params, queue: queue)
        self.init(episodes: params.episodes ?? [], priority: params.priority, now: params.now == true, urls: urls)
    }
}

extension EpisodePolicy.Fetch {
    /// The protocol's `auto_download` value as the policy's.
    init(_ wire: AutoDownload) {
        switch wire {
        case .off: self = .off
        case .allNew: self = .allNew
        case .latest(let count): self = .latest(count)
        }
    }
}
