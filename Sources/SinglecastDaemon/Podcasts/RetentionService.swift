import FoundationEssentials
import SinglecastStore
import SinglecastSupport

/// Retention: runs ``Retention/plan(files:rules:maxStorage:otherUsage:now:)`` over every downloaded file and deletes
/// what it lets go of, when something may have changed (a completion, a mark, new rules) and when its next deletion
/// falls due; nothing polls.
///
/// It owns when retention runs (``wanted()``, its own sleeping timer) and the deletion itself, which the store checks
/// against the plan and carries out in one transaction (``Store/retireEpisodeFiles(_:at:reason:dispose:)``). The
/// podcasts' rules are not its: the catalogue hands them in (``Policies``).
actor RetentionService {
    /// What retention needs of the podcasts: their retention rules and, for the log, their titles.
    struct Policies: Sendable {
        var rules: [Int64: Retention.Rules]
        var titles: [Int64: String]
    }

    private let store: Store
    private let queue: DownloadQueue
    private let events: EventBus
    private let logger: Logger
    private let downloadDirectory: String
    private let now: @Sendable () -> Int64
    /// `max_storage`, in bytes.
    private var maxStorage: Int64?
    /// Retention should run at the loop's next turn; and when a rule next lets go of a file.
    private var due = true
    private var nextAt: Int64?
    private var wake = WakeSchedule()
    /// Why the last try could not delete an episode's file (the Trash could not take it, the file was changed), by
    /// episode id: `rules` shows it next to the deletion.
    private(set) var refusals: [Int64: String] = [:]
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation

    init(
        store: Store,
        queue: DownloadQueue,
        events: EventBus,
        logger: Logger,
        downloadDirectory: String,
        maxStorage: Int64?,
        now: @escaping @Sendable () -> Int64
    ) {
        self.store = store
        self.queue = queue
        self.events = events
        self.logger = logger
        self.downloadDirectory = downloadDirectory
        self.maxStorage = maxStorage
        self.now = now
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a run at the loop's next turn: something may have put a file over a rule.
    func wanted() {
        due = true
        wakeup.yield()
    }

    /// A new `max_storage`; a run follows when it changed.
    func update(maxStorage: Int64?) {
        guard maxStorage != self.maxStorage else { return }
        self.maxStorage = maxStorage
        wanted()
    }

    /// Runs whenever asked and whenever the next deletion falls due, until cancelled. Completed downloads ask.
    ///
    /// - Parameter policies: The podcasts' rules as they are at each run.
    func run(policies: @escaping @Sendable () async -> Policies) async {
        wakeup.yield()
        await withDiscardingTaskGroup { group in
            // A completed download may put the files over max_storage.
            group.addTask { for await _ in self.queue.completions { await self.wanted() } }
            for await _ in wakeups {
                if Task.isCancelled { break }
                if due || (nextAt ?? .max) <= now() {
                    due = false
                    nextAt = await apply(await policies())
                }
                // Only a deletion due later needs a timer, as the refresher's.
                guard let wakeAt = RefreshSchedule.wake(now: now(), due: nextAt) else { continue }
                if wake.request(wakeAt) { group.addTask { await self.sleepUntil(wakeAt) } }
            }
            group.cancelAll()
        }
    }

    private func sleepUntil(_ at: Int64) async {
        try? await Task.sleep(for: .milliseconds(max(0, at - now())))
        wake.woke(at)
        wakeup.yield()
    }

    /// Runs now, for a command whose answer should show its effect (`set` with new rules or `keep`).
    func runNow(_ policies: Policies) async {
        due = false
        nextAt = await apply(policies)
        wakeup.yield()
    }

    /// Deletes what the rules say should go, across every podcast, and returns when the next deletion falls due.
    private func apply(_ policies: Policies) async -> Int64? {
        // Without a rule or a budget nothing can go: every completed download asks for a run, and reading them all
        // for each was a tenth of the daemon's time on 1,000 small downloads (bench/downloads).
        guard maxStorage != nil || policies.rules.values.contains(where: { $0 != Retention.Rules() }) else {
            return nil
        }
        let evaluation: Evaluation
        do {
            evaluation = try await evaluate(rules: policies.rules)
        } catch {
            logger.error("cannot evaluate the retention rules: \(error)")
            return nil
        }
        let (plan, files) = (evaluation.plan, evaluation.files)
        logger.debug(
            "retention: \(ListSummary.count(files.count, "file")) of \(ListSummary.count(policies.rules.count, "podcast")) evaluated in "
                + "\(RuleTiming.milliseconds(evaluation.planning)) ms "
                + "(store \(RuleTiming.milliseconds(evaluation.reading)) ms), \(ListSummary.count(plan.deletions.count, "deletion"))"
        )
        await carryOut(evaluation, titles: policies.titles)
        return plan.nextDue
    }

    /// Deletes the files a retention plan lets go of.
    ///
    /// The plan may be stale by now: a pin, an unplayed mark or a `redownload` may have been answered while it was
    /// made. The store checks each file against what the plan saw and deletes it in the same transaction, with no
    /// await between (``Store/retireEpisodeFiles(_:at:reason:dispose:)``); a file whose episode changed stays, and
    /// retention plans again at its next turn.
    func carryOut(_ evaluation: Evaluation, titles: [Int64: String]) async {
        let (plan, files) = (evaluation.plan, evaluation.files)
        guard !plan.deletions.isEmpty || !plan.purges.isEmpty else { return }
        let configured = await queue.fileDisposal
        if let trash = configured.trash {
            for file in plan.purges {
                if let problem = trash.purge(file) {
                    logger.warning("could not empty \(file.path) from the Trash (over max_storage): \(problem)")
                } else {
                    logger.notice("emptied \(file.path) from the Trash: over max_storage")
                }
            }
        }
        let (directory, clock, logger) = (downloadDirectory, now, logger)
        let byReason = Dictionary(grouping: plan.deletions, by: \.reason)
        for (reason, deletions) in byReason.sorted(by: { $0.key.description < $1.key.description }) {
            // A file moved to the Trash still takes its room: what goes for the budget is deleted for good.
            let disposal: FileDisposal
            if case .overBudget = reason { disposal = FileDisposal(trash: nil) } else { disposal = configured }
            let chosen = deletions.compactMap { files[$0.file.episodeID] }
            let downloads = Dictionary(chosen.map { ($0.download.id, $0.download) }) { first, _ in first }
            let episodeOf = Dictionary(chosen.map { ($0.download.id, $0.record.id) }) { first, _ in first }
            let retired: Store.Retired<Disposals>
            do {
                retired = try await store.retireEpisodeFiles(
                    chosen.map { Store.PlannedRelease($0.record, download: $0.download.id) },
                    at: clock(),
                    reason: reason.description
                ) { owned in
                    var disposals = Disposals()
                    for id in owned {
                        guard let download = downloads[id] else { continue }
                        switch disposal.dispose(
                            download.file,
                            size: download.bytesDone,
                            inside: directory,
                            now: clock(),
                            episode: episodeOf[id]
                        )
                        {
                        case .success(let disposed):
                            if let trashedTo = disposed.trashedTo { disposals.trashed[disposed.path] = trashedTo }
                        case .failure(let refusal) where refusal.gone:
                            logger.notice("download \(id): \(refusal); forgetting it")
                        case .failure(let refusal):
                            // The file stays, and so does its download: it is still tracked, never announced deleted.
                            logger.warning("could not delete \(download.file) (\(reason)): \(refusal.reason)")
                            disposals.refused[id] = refusal.reason
                        }
                    }
                    return (disposals, Set(disposals.refused.keys))
                }
            } catch {
                logger.error("cannot delete \(ListSummary.count(chosen.count, "episode file")) (\(reason)): \(error)")
                continue
            }
            // The queue forgets the rows the store deleted (their files are gone already).
            do {
                _ = try await queue.discard(retired.downloads, deleteFiles: false, reason: reason.description)
            } catch {
                let which = retired.downloads.count == 1 ? "download" : "downloads"
                logger.error("cannot forget deleted \(which) \(ListSummary.ids(retired.downloads)): \(error)")
            }
            // Their chapters and transcripts go the same way.
            await SidecarService.dispose(
                ofDownloads: retired.downloads,
                store: store,
                disposal: disposal,
                root: directory,
                logger: logger,
                now: clock()
            )
            let released = Set(retired.episodes)
            for (record, download) in chosen {
                refusals[record.id] = released.contains(record.id) ? nil : retired.disposed.refused[download.id]
            }
            // Changed episodes are planned again; a refused file is tried again when something changes.
            if retired.episodes.count + retired.disposed.refused.count < chosen.count { wanted() }
            for (record, download) in chosen where released.contains(record.id) {
                let trashed = retired.disposed.trashed[download.file]
                logger.notice(
                    "deleted \(download.file) of \(titles[record.podcastID] ?? "?") episode \(record.id): "
                        + "\(reason)\(trashed.map { " (to the Trash: \($0))" } ?? "")"
                )
                events.episodeFileDeleted(
                    record,
                    file: download.file,
                    trashedTo: trashed,
                    reason: reason.description,
                    at: clock()
                )
            }
        }
    }

    /// What the disposal of one retention run did: where each file went in the Trash, by its old path, and the
    /// downloads whose files it refused to delete, with why.
    struct Disposals: Sendable {
        var trashed: [String: String] = [:]
        var refused: [Int64: String] = [:]
    }

    /// What retention would delete now, the files it looked at, and what the look took.
    struct Evaluation: Sendable {
        var plan: Retention.Plan
        var files: [Int64: (record: EpisodeRecord, download: DownloadSnapshot)]
        /// Reading the downloaded episodes from the store and the completed downloads from the queue.
        var reading: Duration
        /// Matching them up and ``Retention/plan(files:rules:maxStorage:otherUsage:now:)``.
        var planning: Duration
    }

    /// What retention would delete now with `rules` for each podcast.
    func evaluate(rules: [Int64: Retention.Rules]) async throws -> Evaluation {
        let started = ContinuousClock.now
        let episodes = try await store.downloadedEpisodes()
        let downloads = await queue.completedDownloads()
        let trash = maxStorage == nil ? nil : await queue.fileDisposal.trash
        let trashed = trash?.ownFiles(from: downloadDirectory) ?? []
        let read = ContinuousClock.now
        var files: [Int64: (record: EpisodeRecord, download: DownloadSnapshot)] = [:]
        var linked: Set<Int64> = []
        var retained: [Retention.File] = []
        // A file deleted by hand takes no room: neither its episode's nor a forgotten row's counts toward
        // max_storage, or real episodes would go to meet a budget the disk already meets. Nor does one saved
        // outside the download directory (`enqueue --to`): the budget is the download directory's.
        let completed = downloads.filter {
            DownloadDirectory.isInside(DownloadDirectory.parent(of: $0.value.file), root: downloadDirectory)
                && FileManager.default.fileExists(atPath: $0.value.file)
        }
        for episode in episodes {
            guard let id = episode.downloadID, let download = completed[id] else { continue }
            linked.insert(id)
            files[episode.id] = (episode, download)
            retained.append(
                Retention.File(
                    episodeID: episode.id,
                    podcastID: episode.podcastID,
                    downloadID: id,
                    date: episode.publishedAt ?? episode.firstSeenAt,
                    playedAt: episode.playedAt,
                    pinned: episode.pinned,
                    size: download.bytesDone,
                    requested: episode.requested
                )
            )
        }
        let other = completed.filter { !linked.contains($0.key) }.values.reduce(0) { $0 + $1.bytesDone }
        let plan = Retention.plan(
            files: retained,
            rules: rules,
            maxStorage: maxStorage,
            otherUsage: other,
            trashed: trashed,
            now: now()
        )
        return Evaluation(plan: plan, files: files, reading: read - started, planning: .now - read)
    }
}
