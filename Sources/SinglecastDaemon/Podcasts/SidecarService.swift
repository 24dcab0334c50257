import FoundationEssentials
import SinglecastHTTP
import SinglecastStore
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// Saves chapters and transcripts beside episodes' files once the files are complete, and removes them with the files.
///
/// Not through the download queue: a sidecar is at most ``SidecarPlan/maxBytes`` and fetched whole into memory (the
/// refresher's bounded, per-host-limited fetch, as artwork is), so resuming a `.part` buys nothing; and as a download it
/// would be listed, run `on_complete`, be announced, and meet the media check, none of which fits a text file. What
/// the queue gives downloads that matters here the store gives: every sidecar is a row (`sidecars`), taken up when the
/// episode's download completes, retried with a backoff across restarts, refused for good when too big.
actor SidecarService {
    private let store: Store
    private let logger: Logger
    private let now: @Sendable () -> Int64
    private let downloadDirectory: String
    /// Signals completed downloads; its `fileDisposal` deletes what was left behind at start-up.
    private let queue: DownloadQueue
    /// Whose fetch (limits shared with feeds and artwork) and settings a turn uses, read afresh each turn.
    private let refresher: PodcastRefresher
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    private var wake = WakeSchedule()

    init(
        store: Store,
        logger: Logger,
        downloadDirectory: String,
        queue: DownloadQueue,
        refresher: PodcastRefresher,
        now: @escaping @Sendable () -> Int64
    ) {
        self.store = store
        self.logger = logger
        self.downloadDirectory = downloadDirectory
        self.queue = queue
        self.refresher = refresher
        self.now = now
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// How long a turn asked for by a completed download waits for the completions that follow it.
    static let completionsSettle = Duration.milliseconds(200)

    /// Asks for a turn: a download completed, or a refresh may have offered new files.
    nonisolated func wanted() { wakeup.yield() }

    /// Ends the run loop after the turn under way.
    nonisolated func shutdown() { wakeup.finish() }

    /// Takes up offers and fetches what is due whenever asked (completed downloads ask) and when a retry falls due.
    func run() async {
        await disposeLeftBehind()
        wakeup.yield()
        await withDiscardingTaskGroup { group in
            group.addTask { [queue] in
                for await _ in queue.sidecarCompletions {
                    // A burst of completions (a thousand small files end within a second) asks for one turn, not
                    // one per committed batch: each turn is two trips to the store's thread.
                    try? await Task.sleep(for: Self.completionsSettle)
                    self.wanted()
                }
            }
            for await _ in wakeups {
                if Task.isCancelled { break }
                let nextAt = await turn()
                // Only a retry due later needs a timer, as the refresher's.
                guard let wakeAt = RefreshSchedule.wake(now: now(), due: nextAt) else { continue }
                if wake.request(wakeAt) { group.addTask { await self.sleepUntil(wakeAt) } }
            }
            group.cancelAll()
        }
    }

    /// Sidecars of downloads that are gone, left by a stop between an episode's file going and its sidecars.
    private func disposeLeftBehind() async {
        do {
            let gone = try await store.sidecarDownloadsGone()
            guard !gone.isEmpty else { return }
            logger.notice(
                "removing the chapters and transcripts of \(gone.count) episode file(s) deleted before a stop"
            )
            await Self.dispose(
                ofDownloads: gone,
                store: store,
                disposal: await queue.fileDisposal,
                root: downloadDirectory,
                logger: logger,
                now: now()
            )
        } catch {
            logger.error("cannot look for chapters and transcripts left behind: \(error)")
        }
    }

    private func sleepUntil(_ at: Int64) async {
        try? await Task.sleep(for: .milliseconds(max(0, at - now())))
        wake.woke(at)
        wakeup.yield()
    }

    /// One turn: new offers become rows, due rows are fetched. Returns when the next retry falls due.
    func turn() async -> Int64? {
        do {
            try await store.takeUpSidecarOffers()
            // Each row once per turn: one whose outcome could not be recorded stays due, and is tried at the next
            // turn (a minute away at most) rather than over and over now.
            var tried: Set<Int64> = []
            while true {
                let (rows, nextAt) = try await store.dueSidecars(now: now())
                let due = rows.filter { tried.insert($0.id).inserted }
                guard !due.isEmpty else { return due.count < rows.count ? now() + 60_000 : nextAt }
                let fetch = Fetching(
                    fetch: await refresher.limitedFetch,
                    deadline: await refresher.settings.fetchDeadline,
                    transfer: await refresher.settings.transfer
                )
                await withTaskGroup(of: Void.self) { group in
                    for record in due { group.addTask { await self.save(record, with: fetch) } }
                }
                if Task.isCancelled { return nil }
            }
        } catch {
            logger.error("chapters and transcripts: \(error)")
            return nil
        }
    }

    /// The refresher's fetch and settings as a turn found them.
    private struct Fetching: Sendable {
        var fetch: @Sendable (FetchRequest) async throws(TransferError) -> FetchResult
        var deadline: Duration
        var transfer: TransferOptions
    }

    /// Fetches one sidecar and writes it beside its episode's file; records the outcome.
    private func save(_ record: SidecarRecord, with fetching: Fetching) async {
        let (fetch, deadline, transfer) = (fetching.fetch, fetching.deadline, fetching.transfer)
        guard let episodeFile = record.episodeFile else { return }
        let path = SidecarPlan.path(of: record.offer, beside: episodeFile)
        let what = "\(record.offer.kind.rawValue) of episode \(record.episodeID) (\(redactedURL(record.offer.url)))"
        // A private feed's credentials go to the feed's host only, as with its episodes' files.
        let sameHost = record.feedURL.map { HTTPURL.sameHost(record.offer.url, $0) } ?? false
        let request = FetchRequest(
            url: record.offer.url,
            basicAuthUser: sameHost ? record.authUser : nil,
            basicAuthPassword: sameHost ? record.authPassword : nil,
            maxBytes: SidecarPlan.maxBytes,
            options: transfer
        )
        let failure: (message: String, final: Bool)
        switch await fetchWithin(deadline, fetch, request) {
        case .success(let result)? where (200...299).contains(result.response.status):
            if let problem = Self.write(result.body, to: path, root: downloadDirectory) {
                failure = (problem, false)
            } else {
                do {
                    if try await store.recordSidecar(
                        record.id,
                        state: .saved,
                        path: path,
                        bytes: Int64(result.body.count)
                    ) {
                        logger.info("saved \(path) (\(what))")
                    } else {
                        unlink(path)  // its episode's file went meanwhile
                    }
                } catch {
                    unlink(path)
                    logger.error("cannot record \(path): \(error)")
                }
                return
            }
        case .success(let result)?:
            failure = (
                "HTTP \(result.response.status)",
                (400...499).contains(result.response.status)
                    && ![408, 429].contains(result.response.status)
            )
        case .failure(let error)? where error.code == .tooLarge:
            failure = (
                "it is larger than the \(SidecarPlan.maxBytes >> 20) MiB a chapters or transcript file may have", true
            )
        case .failure(let error)?:
            failure = (error.message, !error.code.isRetryable)
        case nil:
            failure = ("not fetched within \(deadline.components.seconds) s", false)
        }
        let retryAt = failure.final ? nil : SidecarPlan.retryAt(afterAttempt: record.attempts + 1, now: now())
        do {
            try await store.recordSidecar(
                record.id,
                state: retryAt == nil ? .refused : .wanted,
                retryAt: retryAt,
                error: failure.message
            )
        } catch {
            logger.error("cannot record the failure of the \(what): \(error)")
        }
        if retryAt == nil {
            logger.warning("not saving the \(what): \(failure.message)")
        } else {
            logger.info("the \(what) failed (\(failure.message)); trying again later")
        }
    }

    /// Writes `body` at `path` through a temporary file and a rename. A file already there is not replaced, unless it
    /// holds these very bytes (this daemon wrote it and stopped before recording it). Only inside the download
    /// directory, no link on the way followed.
    static func write(_ body: Data, to path: String, root: String) -> String? {
        let outcome = DownloadDirectory.within(path, root: root) { folder, name -> String? in
            if faccessat(folder, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 {
                return holds(body, folder, name) ? nil : "another file is at \(path)"
            }
            let temporary = ".\(name).sidecar"
            let fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard fd >= 0 else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
            let written = body.withUnsafeBytes { bytes in
                var done = 0
                while done < bytes.count {
                    let count = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                    if count < 0 { return false }
                    done += count
                }
                return true
            }
            let synced = written && fsync(fd) == 0
            close(fd)
            guard synced, renameat(folder, temporary, folder, name) == 0 else {
                let problem = String(cString: strerror(errno))
                unlinkat(folder, temporary, 0)
                return "cannot write \(path): \(problem)"
            }
            return nil
        }
        guard let outcome else {
            return "cannot write \(path): its folder cannot be opened (\(String(cString: strerror(errno))))"
        }
        return outcome
    }

    /// Whether the regular file `name` in `folder` holds exactly `body`.
    private static func holds(_ body: Data, _ folder: Int32, _ name: String) -> Bool {
        let fd = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) == body.count else {
            return false
        }
        var bytes = [UInt8](repeating: 0, count: body.count)
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return read == body.count && bytes.elementsEqual(body)
    }

    /// Removes the sidecars tied to these downloads, whose episode files went: saved files go as `disposal` says
    /// (checked to be what was saved), and every row is forgotten.
    static func dispose(
        ofDownloads downloads: [Int64],
        store: Store,
        disposal: FileDisposal,
        root: String,
        logger: Logger,
        now: Int64
    ) async {
        guard !downloads.isEmpty else { return }
        do {
            let records = try await store.sidecars(ofDownloads: downloads)
            for record in records where record.state == .saved {
                guard let path = record.path, let bytes = record.bytes else { continue }
                switch disposal.dispose(path, size: bytes, inside: root, now: now) {
                case .success(let disposed):
                    logger.info("deleted \(path)\(disposed.trashedTo.map { " (to the Trash: \($0))" } ?? "")")
                case .failure(let refusal) where refusal.gone:
                    continue
                case .failure(let refusal):
                    logger.warning("could not delete \(path) with its episode's file: \(refusal.reason)")
                }
            }
            try await store.forgetSidecars(records.map(\.id))
        } catch {
            logger.error("cannot remove the chapters and transcripts of \(downloads.count) download(s): \(error)")
        }
    }
}
