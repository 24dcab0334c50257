import CPosix
import FoundationEssentials
import SinglecastFeeds
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// Settings of the podcast side that a reload may change.
package struct PodcastSettings: Sendable, Hashable {
    /// Time between refreshes of one podcast; each is jittered by ±10 % so many feeds do not refresh at once.
    package var refreshInterval: Duration = .seconds(3600)
    package var naming = EpisodeNaming()
    /// The largest feed document accepted.
    package var maxFeedBytes: Int64 = 100 << 20
    /// The memory feed documents and their parses may hold at once (`feed_memory_budget`).
    package var feedMemoryBudget: Int64 = 256 << 20
    /// The artwork cache's size; the least recently refreshed images go first.
    package var artworkCacheBytes: Int64 = 100 << 20
    /// The configured episode rules, which a podcast's own override rule by rule.
    package var rules = EpisodeRules()
    /// The budget for every downloaded file (`max_storage`), in bytes.
    package var maxStorage: Int64?
    package var transfer = TransferOptions()
    /// How long one feed or artwork fetch may take in all, however steadily its server trickles bytes.
    package var fetchDeadline: Duration = .seconds(120)
    /// Feed and artwork fetches running at once, in all and to one host (`refresh_concurrent`, `refresh_per_host`).
    package var fetchConcurrency = 16
    package var fetchesPerHost = 4

    package init() {}
}

/// Subscriptions, their feeds and episodes, and the auto-download policy that feeds the download queue.
///
/// The podcasts live in memory and in the store; every change is committed before it is answered or announced.
/// A refresh never loses what the last good one stored: a failure is recorded next to the old episodes.
/// ``PodcastRefresher`` fetches the feeds and hands them here to be stored; ``RetentionService`` deletes files.
package actor Subscriptions {
    let store: Store
    /// The wall clock in Unix milliseconds; injected so the schedule and the rules can be tested with a moved clock.
    let now: @Sendable () -> Int64
    /// A number from 0 to 1 for the refresh schedule's jitter (``RefreshSchedule``); injected with the clock.
    let jitter: @Sendable () -> Double
    let queue: DownloadQueue
    let events: EventBus
    let logger: Logger
    let downloadDirectory: String
    let artworkDirectory: String
    /// Finds a podcast's feed URL by its iTunes id (the directory's `lookup`).
    let lookup: @Sendable (Int64) async throws -> String
    private(set) var settings: PodcastSettings

    /// Every subscription; read by the actor's extensions in other files.
    var podcasts: [Int64: PodcastRecord] = [:]
    /// Episode totals by podcast as the last count found them (a scan of every episode, tens of milliseconds with
    /// 100,000), or `nil` once a write may have changed them.
    var episodeCounts: [Int64: EpisodeCounts]?
    /// Raised before and after every write to the episodes, so that a count that ran alongside one is not kept.
    var episodeWrites = 0
    /// Podcasts being unsubscribed: no refresh of them starts, and what an enqueue links to them meanwhile goes.
    var leaving: Set<Int64> = []
    /// Podcasts a refresh found unchanged, not yet saved (``saveUnchanged(_:)``), and whether a refresh saves them.
    var unchangedToSave: Set<Int64> = []
    var savingUnchanged = false
    /// Each podcast's folder name as compared, and the folder or title it was made from (``ownFolder(for:)``).
    private var folderKeys: [Int64: (source: String, key: String)] = [:]
    /// Fetches the feeds and artwork, when they fall due and when asked; a service of its own.
    nonisolated let refresher: PodcastRefresher
    /// Deletes what the retention rules let go of; this catalogue hands it the podcasts' rules.
    let retention: RetentionService
    /// Saves chapters and transcripts beside completed episodes' files; a service of its own.
    nonisolated let sidecars: SidecarService

    package init(
        store: Store,
        engine: any SmallBodyFetching,
        queue: DownloadQueue,
        events: EventBus,
        logger: Logger,
        settings: PodcastSettings,
        downloadDirectory: String,
        artworkDirectory: String,
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        lookup: @escaping @Sendable (Int64) async throws -> String
    ) {
        self.now = now
        self.jitter = jitter
        self.store = store
        self.queue = queue
        self.events = events
        self.logger = logger
        self.settings = settings
        self.downloadDirectory = downloadDirectory
        self.artworkDirectory = artworkDirectory
        self.lookup = lookup
        self.retention = RetentionService(
            store: store,
            queue: queue,
            events: events,
            logger: logger,
            downloadDirectory: downloadDirectory,
            maxStorage: settings.maxStorage,
            now: now
        )
        let refresher = PodcastRefresher(
            engine: engine,
            store: store,
            logger: logger,
            settings: settings,
            artworkDirectory: artworkDirectory,
            now: now,
            jitter: jitter
        )
        self.refresher = refresher
        self.sidecars = SidecarService(
            store: store,
            logger: logger,
            downloadDirectory: downloadDirectory,
            queue: queue,
            refresher: refresher,
            now: now
        )
    }

    /// Start-up, before READY: loads the subscriptions.
    package func load() async throws {
        for podcast in try await store.podcasts() { podcasts[podcast.id] = podcast }
        await refresher.attach(self)
    }

    /// How many podcasts there are, how many fail or are gone, and when the next refresh falls due.
    package func overview() -> PodcastOverview {
        PodcastOverview(
            subscribed: podcasts.count,
            failing: podcasts.values.filter { !$0.gone && $0.lastError != nil }.count,
            gone: podcasts.values.filter(\.gone).count,
            nextRefreshAt: nextRefreshDue()
        )
    }

    package func update(_ newSettings: PodcastSettings) async {
        // Reloaded rules or a new budget may let go of files now.
        let rulesChanged = newSettings.rules != settings.rules
        settings = newSettings
        await retention.update(maxStorage: newSettings.maxStorage)
        if rulesChanged { await retention.wanted() }
        await refresher.update(newSettings)
    }

    /// Asks retention to run at its next turn.
    func retentionWanted() async { await retention.wanted() }

    /// Every podcast's retention rules and title, as retention reads them at each run.
    func retentionPolicies() -> RetentionService.Policies {
        RetentionService.Policies(
            rules: podcasts.mapValues { policy(for: $0).retention },
            titles: podcasts.mapValues(\.title)
        )
    }

    // MARK: - Commands

    package func subscribe(_ command: SubscribeCommand) async throws -> SubscribeOutcome {
        try await subscribe(command, durability: .powerLoss, counted: true)
    }

    /// - Parameters:
    ///   - durability: How the new subscription is committed: ``Durability/processCrash`` only for a caller that
    ///     syncs before it answers (``importOPML(_:)``).
    ///   - counted: Whether the answer carries a new podcast's episode counts. An import answers with names only, and
    ///     counting each new podcast was one more trip to the store's thread per feed; a watcher of the `subscribed`
    ///     event gets them either way.
    func subscribe(_ command: SubscribeCommand, durability: Durability, counted: Bool) async throws -> SubscribeOutcome
    {
        do {
            let result = try await subscribeAndStore(command, durability: durability, counted: counted)
            await refresher.trimHeapAfterBigFeeds()
            return result
        } catch {
            await refresher.trimHeapAfterBigFeeds()
            throw error
        }
    }

    private func subscribeAndStore(
        _ params: SubscribeCommand,
        durability: Durability,
        counted: Bool
    ) async throws -> SubscribeOutcome {
        // The options as `set` checks them, on a podcast of no settings yet: refused before anything is fetched.
        let options = PodcastChange(
            podcast: "",
            autoDownload: params.autoDownload,
            keep: params.keep,
            rules: params.rules
        )
        let configured = try changed(PodcastRecord(feedURL: "", subscribedAt: 0), by: options)
        var text: String
        var itunesID: Int64?
        switch params.feed {
        case .itunesID(let id):
            itunesID = id
            text = try await lookup(id)
        case .url(let given):
            text = given
        }
        var (url, user, password) = try Self.feedURL(text)
        if let credentials = params.credentials {
            user = credentials.user
            password = credentials.password
        }
        text = url
        if let existing = podcasts.values.first(where: { $0.feedURL == text }) {
            // Subscribing again applies the options as `set` would, and a new policy queues what it asks for now.
            var podcast = try changed(existing, by: options)
            if let user { (podcast.authUser, podcast.authPassword) = (user, password) }
            try await save(podcast)
            var queued: [Int64] = []
            if params.autoDownload != nil || params.rules != nil {
                queued = try await applyPolicy(podcast.id, inserted: [], initial: params.autoDownload != nil)
            }
            if params.rules != nil || params.keep != nil { await applyRetentionNow() }
            return SubscribeOutcome(
                podcast: try await summary(podcasts[podcast.id] ?? podcast),
                existing: true,
                queued: queued
            )
        }

        var podcast = PodcastRecord(feedURL: url, subscribedAt: now())
        podcast.itunesID = itunesID
        podcast.authUser = user
        podcast.authPassword = password
        podcast.autoDownload = (params.autoDownload ?? .off).stored
        podcast.keep = configured.keep
        podcast.rules = configured.rules
        // Fetched and parsed before anything is stored: a wrong URL leaves no subscription behind.
        var fetched = await refresher.fetch(podcast)
        var discovery: FeedDiscovery?
        if case .page(let feeds) = fetched {
            (fetched, discovery) = try await followDiscovered(feeds, page: url, podcast: &podcast)
        }
        guard case .updated(let feed, let response, let movedTo) = fetched else {
            throw Self.feedError(fetched, url: podcast.feedURL)
        }
        // Where a permanent redirect chain ended is the URL subscribed to (and known, if another has it).
        // Credentials a redirect wrote into it are not the user's to keep: HTTPURL moves them out, as on a refresh.
        if let movedTo { podcast.feedURL = (try? HTTPURL(movedTo))?.string ?? podcast.feedURL }
        let inserted: (podcast: PodcastRecord, existing: Bool)
        do {
            inserted = try await store.insertPodcast(podcast, durability: durability)
        } catch {
            throw PodcastError.store("the subscription could not be saved: \(error)")
        }
        podcast = inserted.podcast
        if inserted.existing {
            podcasts[podcast.id] = podcast
            return SubscribeOutcome(
                podcast: try await summary(podcast),
                existing: true,
                queued: [],
                discovery: discovery
            )
        }
        let now = self.now()
        let change = FeedUpdate.apply(
            FeedFetcher.Fetched.updated(feed, response, movedTo: nil).update,
            to: podcast,
            now: now,
            nextRefreshAt: schedule.nextRefresh(of: podcast, after: now, jitter: jitter()),
            urlTaken: { url in podcasts.values.contains { $0.feedURL == url } }
        )
        for line in change.log { logger.log(line.level, line.message) }
        var subscribed = change.podcast
        // Chosen once and stored, so it stays when either podcast's title changes.
        subscribed.folder = ownFolder(for: subscribed)
        podcasts[podcast.id] = subscribed
        // The back catalogue is not "new": only episodes that appear after subscribing are.
        let episodes = try await storeFeed(podcast.id, feed, markNew: false, durability: durability)
        let queued = try await applyPolicy(podcast.id, inserted: episodes, initial: true)
        let current = podcasts[podcast.id] ?? podcast
        logger.notice("subscribed to \(current.title) (\(redactedURL(current.feedURL)))")
        let result =
            counted || events.isWatched(.podcasts) ? try await summary(current) : summary(current, counts: nil)
        events.podcastSubscribed(result)
        await refresher.subscribed(podcast.id, documentBytes: feed.documentSize)
        return SubscribeOutcome(podcast: result, existing: false, queued: queued, discovery: discovery)
    }

    package func unsubscribe(_ params: UnsubscribeCommand) async throws -> UnsubscribeOutcome {
        let podcast = try resolve(params.podcast)
        guard leaving.insert(podcast.id).inserted else {
            throw PodcastError(
                code: .unknownPodcast(params.podcast),
                message: "'\(params.podcast)' is being unsubscribed already"
            )
        }
        defer { leaving.remove(podcast.id) }
        // A refresh of it ends first, so what it queued is among the episodes read below; none starts meanwhile.
        await refresher.stopAndWait(podcast.id)
        // `podcast` is still current: a refresh puts its record in `podcasts` before its first await, and stores
        // nothing (artwork included) for a podcast that is leaving.
        let result = try await summary(podcast)
        let episodes = try await episodeRecords(of: podcast.id)
        // A download another podcast's episode shares (one enclosure URL in two feeds) is that podcast's too.
        let downloads = try await ownDownloads(episodes.compactMap(\.downloadID), leaving: episodes.map(\.id))
        let before = await queue.infos(downloads)
        let unfinished = before.values.filter { $0.state != .completed }.map(\.id).sorted()
        let discarded = try await queue.discard(
            downloads,
            deleteFiles: params.deleteFiles,
            reason: "unsubscribed"
        )
        let deleted = discarded.deleted
        if params.deleteFiles {
            // Chapters and transcripts go with their episodes' files; without delete_files both stay.
            await disposeSidecars(ofDownloads: downloads.filter { discarded.refused[$0] == nil })
            // The podcast's folders, left empty once its files went; anything else in them keeps them.
            DownloadDirectory.removeEmptyFolders(
                before.values.map { DownloadDirectory.parent(of: $0.file) },
                root: downloadDirectory
            )
        }
        episodesWritten()
        defer { episodesWritten() }
        do {
            try await store.deletePodcast(podcast.id)
        } catch {
            throw PodcastError.store("the subscription could not be removed: \(error)")
        }
        // Read again: the artwork may have been fetched since `podcast` was. No refresh of it runs now: the one
        // running was awaited above, and one asked for since found it leaving.
        let artwork = podcasts[podcast.id]?.artworkPath ?? podcast.artworkPath
        podcasts[podcast.id] = nil
        folderKeys[podcast.id] = nil
        if let path = artwork { unlink(path) }
        logger.notice("unsubscribed from \(podcast.title)")
        events.podcastUnsubscribed(result)
        return UnsubscribeOutcome(podcast: result, cancelledDownloads: unfinished, deletedFiles: deleted.map(\.path))
    }

    /// `podcasts`: every subscription, by id, or one page of them.
    ///
    /// A page's ids come from the store's primary key (a range of it, one more than asked, to know whether more
    /// follow), so its cost does not grow with the number of podcasts; the records themselves are the catalogue's.
    package func list(_ page: PodcastPage) async throws -> PodcastListing {
        guard !page.isWhole else {
            let counts = try await counts()
            let all = podcasts.values.sorted { $0.id < $1.id }.map { summary($0, counts: counts[$0.id]) }
            return PodcastListing(podcasts: all, next: nil)
        }
        let ids: [Int64]
        do {
            ids = try await store.podcastIDs(after: page.after, limit: page.limit.map { $0 == .max ? $0 : $0 + 1 })
        } catch {
            throw PodcastError.store("cannot list the podcasts: \(error)")
        }
        let shown = page.limit.map { Array(ids.prefix($0)) } ?? ids
        let counts = try await counts(ofPage: shown)
        // One unsubscribed while the store answered is left out; the cursor still moves past it.
        let listed = shown.compactMap { id in podcasts[id].map { summary($0, counts: counts[id]) } }
        return PodcastListing(podcasts: listed, next: shown.count < ids.count ? shown.last : nil)
    }

    package func episodes(_ params: EpisodeQuery) async throws -> EpisodeListing {
        let podcast = try resolve(params.podcast)
        try ListingLimit.check(params.limit)
        let brief = params.brief
        let records: [EpisodeRecord]
        do {
            records = try await store.episodes(
                of: podcast.id,
                onlyNew: params.onlyNew,
                unplayed: params.unplayed,
                limit: params.limit,
                fields: brief ? .listing : .all
            )
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
        let downloads = await queue.infos(records.compactMap(\.downloadID))
        // `podcast` as resolved before the reads: a `set` meanwhile shows from the next listing on.
        let policy = policy(for: podcast)
        let now = self.now()
        // Why the rules pass over an episode, for one they would otherwise have a say on.
        var skipped: [String?] = []
        if policy.fetch != .off {
            let started = ContinuousClock.now
            var texts = EpisodePolicy.SkipTexts()
            skipped = records.map { record in
                guard record.downloadID == nil else { return nil }
                return policy.skip(EpisodePolicy.Candidate(record), now: now).map { texts.text($0) }
            }
            let evaluated = ContinuousClock.now - started
            logger.debug(
                "episodes: rules over \(records.count) episodes of podcast \(podcast.id) evaluated in "
                    + "\(RuleTiming.milliseconds(evaluated)) ms (\(skipped.count(where: { $0 != nil })) skipped)"
            )
        }
        return EpisodeListing(
            podcast: try await summary(podcast),
            episodes: records.indices.map { index in
                var record = records[index]
                // Read for the rules, not shown in a list.
                if brief { record.enclosureURL = nil }
                return ListedEpisode(
                    record: record,
                    download: record.downloadID.flatMap { downloads[$0] },
                    skipped: skipped.isEmpty ? nil : skipped[index]
                )
            }
        )
    }

    package func set(_ params: PodcastChange) async throws -> PodcastSummary {
        var podcast = try resolve(params.podcast)
        guard
            params.autoDownload != nil || params.keep != nil || params.nameTemplate != nil || params.folder != nil
                || params.refreshInterval != nil || params.rules != nil || params.feedURL != nil
        else {
            throw PodcastError.invalid(
                "'set' needs at least one of 'auto_download', 'keep', 'name_template', 'folder', 'refresh_interval', "
                    + "'rules' and 'feed_url'",
                parameter: "auto_download"
            )
        }
        let interval = podcast.refreshInterval
        podcast = try changed(podcast, by: params)
        if let text = params.feedURL { podcast = try moved(podcast, to: text) }
        if podcast.refreshInterval != interval || params.refreshInterval != nil {
            // The next refresh follows the new interval, not the old one.
            podcast.nextRefreshAt = schedule.rescheduled(podcast, now: now(), jitter: jitter())
            refresher.wake()
        }
        try await save(podcast)
        _ = try await applyPolicy(podcast.id, inserted: [], initial: params.autoDownload != nil)
        if params.rules != nil || params.keep != nil { await applyRetentionNow() }
        return try await summary(podcasts[podcast.id] ?? podcast)
    }

    /// `podcast` at a new feed URL the listener gave: a feed like any other again (not gone, no error, no
    /// validators of the old URL's), fetched at once. Refused when another subscription has that URL, as `subscribe`
    /// would answer with it.
    func moved(_ podcast: PodcastRecord, to text: String) throws -> PodcastRecord {
        var podcast = podcast
        let (url, user, password): (String, String?, String?)
        do {
            (url, user, password) = try Self.feedURL(text)
        } catch let error as PodcastError {
            throw PodcastError.invalid(error.message, parameter: "feed_url")
        }
        if let other = podcasts.values.first(where: { $0.id != podcast.id && $0.feedURL == url }) {
            throw PodcastError.invalid(
                "'\(redactedURL(url))' is subscribed already, as podcast \(other.id) '\(other.title)'",
                parameter: "feed_url"
            )
        }
        if url != podcast.feedURL {
            logger.notice("feed of \(podcast.title) set to \(redactedURL(url)) (was \(redactedURL(podcast.feedURL)))")
        }
        podcast.feedURL = url
        if let user { (podcast.authUser, podcast.authPassword) = (user, password) }
        podcast.gone = false
        podcast.lastError = nil
        (podcast.etag, podcast.lastModified) = (nil, nil)
        podcast.nextRefreshAt = now()
        refresher.wake()
        return podcast
    }

    /// `podcast` with `params`' changes, each checked; nothing is stored. `set` stores the result, `rules` shows
    /// what it would do.
    func changed(_ podcast: PodcastRecord, by params: PodcastChange) throws -> PodcastRecord {
        var podcast = podcast
        if let template = params.nameTemplate {
            if !template.isEmpty, let problem = EpisodeNaming.problem(in: template) {
                throw PodcastError.invalid(
                    "'name_template' '\(template)' is not usable: \(problem)",
                    parameter: "name_template"
                )
            }
            podcast.nameTemplate = template.isEmpty ? nil : template
        }
        if let folder = params.folder {
            // One folder name, sanitized like every part of a file name: it cannot leave the download directory.
            let sanitized = FileNaming.sanitize(folder)
            guard folder.isEmpty || (sanitized == folder && !folder.contains("/")) else {
                throw PodcastError.invalid(
                    "'folder' must be one plain folder name (no '/', no leading dot, no control characters); "
                        + "'\(sanitized)' would do",
                    parameter: "folder"
                )
            }
            podcast.folder = folder.isEmpty ? nil : folder
        }
        if let seconds = params.refreshInterval {
            guard seconds == 0 || (60...7 * 86_400).contains(seconds) else {
                throw PodcastError.invalid(
                    "'refresh_interval' must be from 60 seconds to 7 days (604800), or 0 for the configured one; "
                        + "got \(seconds)",
                    parameter: "refresh_interval"
                )
            }
            podcast.refreshInterval = seconds == 0 ? nil : Int64(seconds) * 1000
        }
        if let auto = params.autoDownload { podcast.autoDownload = auto.stored }
        if let keep = params.keep {
            try Self.checkPolicy(EpisodePolicy(fetch: .off, keep: keep))
            podcast.keep = keep > 0 ? keep : nil
        }
        if let changes = params.rules {
            var own = EpisodeRules(stored: podcast.rules)
            for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
                guard let key = EpisodeRules.Key(rawValue: name) else {
                    let known = EpisodeRules.Key.allCases.map(\.rawValue).joined(separator: ", ")
                    throw PodcastError.invalid("there is no rule '\(name)'; the rules are \(known)", parameter: "rules")
                }
                do {
                    try own.set(key, to: value)
                } catch {
                    throw PodcastError.invalid(error.message, parameter: "rules")
                }
            }
            podcast.rules = own.stored
        }
        try Self.checkPolicy(policy(for: podcast))
        return podcast
    }

    package func downloadLatest(_ params: DownloadLatestCommand) async throws -> [EnqueuedDownload] {
        let podcast = try resolve(params.podcast)
        guard params.latest >= 1 else {
            throw PodcastError.invalid("'latest' must be at least 1", parameter: "latest")
        }
        // episode_types says what counts as an episode of this podcast at all: with `full`, a trailer is not one of
        // its newest episodes (the README's first flow fetched the trailer here). The other rules choose among
        // episodes, and a request by count is not theirs to narrow.
        let latest: [EpisodeRecord]
        if let types = policy(for: podcast).rules.episodeTypes {
            let admitted = Set(types.map(\.rawValue))
            latest = Array(
                try await episodeRecords(of: podcast.id).lazy.filter { admitted.contains($0.episodeType ?? "full") }
                    .prefix(params.latest)
            )
        } else {
            latest = try await store.episodes(of: podcast.id, limit: params.latest)
        }
        return try await enqueueEpisodes(latest.map(\.id), priority: nil, requested: true, now: params.now)
    }

    /// `enqueue` with episode ids (and possibly URLs too, which go to the queue as they are).
    package func enqueue(_ params: EpisodeEnqueueCommand) async throws -> [EnqueuedDownload] {
        // Every URL and every episode is checked before anything is queued, and all of them go in one transaction:
        // a refused request queues nothing.
        try await enqueueEpisodes(
            params.episodes,
            priority: params.priority,
            requested: true,
            now: params.now,
            with: params.urls
        )
    }

    // MARK: - Helpers

    /// The podcast `selector` names: its id, else the one whose title it equals or is part of (``TitleMatch``).
    func resolve(_ selector: String) throws -> PodcastRecord {
        let trimmed = selector.trimmingWhitespace()
        if let id = Int64(trimmed), let podcast = podcasts[id] { return podcast }
        let name = TitleMatch.folded(trimmed)
        if !name.isEmpty {
            let all = podcasts.values.sorted { $0.id < $1.id }.map { (podcast: $0, title: TitleMatch.folded($0.title)) }
            let equal = all.filter { $0.title == name }.map(\.podcast)
            if equal.count == 1 { return equal[0] }
            if equal.count > 1 {
                throw PodcastError(
                    code: .ambiguousPodcast(selector),
                    message:
                        "'\(selector)' names \(equal.count) podcasts with that title: \(Self.list(equal)); give the id"
                )
            }
            let matches = all.filter { $0.title.contains(name) }.map(\.podcast)
            if matches.count == 1 { return matches[0] }
            if matches.count > 1 {
                throw PodcastError(
                    code: .ambiguousPodcast(selector),
                    message: "'\(selector)' matches \(matches.count) podcasts: \(Self.list(matches)); "
                        + "give more of the title or the id"
                )
            }
        }
        throw PodcastError(code: .unknownPodcast(selector), message: "no podcast matches '\(selector)'")
    }

    /// `1 'The Daily', 3 'the daily'`, summarised past a few (``ListSummary``).
    private static func list(_ podcasts: [PodcastRecord]) -> String {
        ListSummary.list(podcasts.lazy.map { "\($0.id) '\(ListSummary.title($0.title))'" })
    }

    /// What `{podcast}` stands for in a podcast's file names: its `folder`, else its title.
    static func folderName(of podcast: PodcastRecord) -> String {
        FileNaming.sanitize(podcast.folder ?? (podcast.title.isEmpty ? "podcast \(podcast.id)" : podcast.title))
    }

    /// `podcast`'s folder: its own, or `Title (2)`, `Title (3)`… when another podcast's files go to the folder its
    /// title names (compared without case, as a case-blind disk would), so the two never share one.
    func ownFolder(for podcast: PodcastRecord) -> String? {
        let others = podcasts.values.filter { $0.id != podcast.id }
        let name = Self.folderName(of: podcast)
        let key = name.lowercased()
        guard others.contains(where: { folderKey(of: $0) == key }) else { return podcast.folder }
        let taken = Set(others.map { folderKey(of: $0) })
        var number = 2
        while taken.contains("\(name) (\(number))".lowercased()) { number += 1 }
        return "\(name) (\(number))"
    }

    /// `podcast`'s folder name as ``ownFolder(for:)`` compares it, kept while what it is made from stays: making every
    /// podcast's again for each new subscription was a tenth of an OPML import's CPU, on this actor.
    private func folderKey(of podcast: PodcastRecord) -> String {
        let source = podcast.folder ?? podcast.title
        if let kept = folderKeys[podcast.id], kept.source == source { return kept.key }
        let key = Self.folderName(of: podcast).lowercased()
        folderKeys[podcast.id] = (source, key)
        return key
    }

    func save(_ podcast: PodcastRecord, durability: Durability = .powerLoss) async throws {
        podcasts[podcast.id] = podcast
        do {
            try await store.savePodcast(podcast, durability: durability)
        } catch {
            throw PodcastError.store("the podcast could not be saved: \(error)")
        }
    }

    /// Makes the commits that skipped their fsync durable, before a client is told of them.
    func syncCommitted() async throws {
        do {
            try await store.syncCommitted()
        } catch {
            throw PodcastError.store("the changes could not be synced to disk: \(error)")
        }
    }

    func episodeRecords(of id: Int64) async throws -> [EpisodeRecord] {
        do {
            return try await store.episodes(of: id)
        } catch {
            throw PodcastError.store("cannot read the episodes: \(error)")
        }
    }

    func counts() async throws -> [Int64: EpisodeCounts] {
        if let episodeCounts { return episodeCounts }
        let writes = episodeWrites
        do {
            let counts = try await store.episodeCounts()
            // Kept only when no write began or ended meanwhile; otherwise the next caller counts again.
            if writes == episodeWrites { episodeCounts = counts }
            return counts
        } catch {
            throw PodcastError.store("cannot count the episodes: \(error)")
        }
    }

    /// The counts of a page of podcasts (`ids` ascending): the cached ones while they hold, else only the page's, read
    /// from the index by a range of podcast ids. Counting every podcast again (as the first listing after any refresh
    /// must) would cost a page of 50 as much as the whole listing.
    func counts(ofPage ids: [Int64]) async throws -> [Int64: EpisodeCounts] {
        if let episodeCounts { return episodeCounts }
        guard let first = ids.first, let last = ids.last else { return [:] }
        do {
            return try await store.episodeCounts(podcastIDs: first...last)
        } catch {
            throw PodcastError.store("cannot count the episodes: \(error)")
        }
    }

    /// One podcast's counts: the cached ones while they hold, else that podcast's alone. Every stored refresh forgets
    /// the cache, and counting every podcast again for the answer of each refresh or subscription that followed made
    /// subscribing to 1,000 feeds, or refreshing them, quadratic in the episodes stored.
    func counts(of id: Int64) async throws -> EpisodeCounts? {
        if let episodeCounts { return episodeCounts[id] }
        do {
            return try await store.episodeCounts(of: id)
        } catch {
            throw PodcastError.store("cannot count the episodes: \(error)")
        }
    }

    /// Forgets the episode counts; called around every write to the episodes.
    func episodesWritten() {
        episodeWrites += 1
        episodeCounts = nil
    }

    /// When podcasts refresh, with the current settings.
    var schedule: RefreshSchedule { RefreshSchedule(interval: settings.refreshInterval) }

    /// Validates a feed URL and moves credentials written into it (`https://user:pass@host/…`) out of it.
    package static func feedURL(_ text: String) throws -> (url: String, user: String?, password: String?) {
        do {
            let url = try HTTPURL(text)
            return (url.string, url.user, url.password)
        } catch .unparsable {
            throw PodcastError.invalid("'\(HTTPURL.shown(text))' is not a valid URL", parameter: "url")
        } catch {
            throw PodcastError.invalid(
                "'\(HTTPURL.shown(text))' is not an http or https feed URL",
                parameter: "url"
            )
        }
    }

    static func noEnclosure(_ episode: EpisodeRecord) -> PodcastError {
        let what =
            episode.enclosureURL.map { "its enclosure '\($0)' is not an http or https URL" } ?? "it has no enclosure"
        return PodcastError(
            code: .noEnclosure(episode.id),
            message: "episode \(episode.id) ('\(episode.title)') has nothing to download: \(what)"
        )
    }

    /// A policy's problems as refusals of the command that set it.
    static func checkPolicy(_ policy: EpisodePolicy) throws {
        do {
            try policy.validate()
        } catch .rules(let problem) {
            throw PodcastError.invalid(problem.message, parameter: "rules")
        } catch .negativeKeep {
            throw PodcastError.invalid("'keep' must be 0 (all) or more", parameter: "keep")
        } catch .keepBelowLatest(let keep, let count) {
            throw PodcastError.invalid(
                "'keep' (\(keep)) must be at least the \(count) of 'latest:\(count)', or the newest would be "
                    + "deleted and downloaded again",
                parameter: "keep"
            )
        }
    }

    static func feedError(_ fetched: FeedFetcher.Fetched, url: String) -> PodcastError {
        let shown = redactedURL(url)
        switch fetched {
        case .failed(let problem, let text):
            let message = text.hasSuffix(".") ? String(text.dropLast()) : text
            return PodcastError(
                code: .feed(problem, url: shown),
                message: problem == .invalid
                    ? "The feed at \(shown) cannot be read: \(message)."
                    : "The feed at \(shown) cannot be fetched: \(message)."
            )
        case .gone:
            return PodcastError(
                code: .feed(.unreachable, url: shown),
                message: "The feed at \(shown) is gone (HTTP 410)."
            )
        case .page(let feeds):
            return PodcastError(
                code: .feed(.invalid, url: shown),
                message: "The URL \(shown) answers a web page, not a feed; it names \(feeds.joined(separator: ", "))."
            )
        case .notModified, .updated:
            return PodcastError(
                code: .feed(.unreachable, url: shown),
                message: "The feed at \(shown) answered 304 Not Modified to an unconditional request."
            )
        }
    }

    /// Whether an enclosure can be downloaded: an http or https URL with a host. A feed may name anything
    /// (`file:///etc/passwd`, `javascript:`); such an episode is skipped by the auto-download policies, so it cannot
    /// hold up the others.
    static func isDownloadable(_ enclosure: String?) -> Bool { HTTPURL.isValid(enclosure) }

}
