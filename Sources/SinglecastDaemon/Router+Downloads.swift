import SinglecastProtocol
import SinglecastStore

// The queue methods' requests as the queue's commands: the queue does not read the wire's shapes (which field
// combinations a request may have). Its answers become results in `Router+DownloadsResults.swift`.

extension DownloadRequest {
    /// The downloads `enqueue` params ask for, one per URL, every one checked by the queue; nothing is queued yet.
    static func requests(for params: EnqueueParams, queue: DownloadQueue) async throws(DownloadQueueError) -> [Self] {
        guard !params.urls.isEmpty else { throw .invalid("'urls' must hold at least one URL", parameter: "urls") }
        if params.name != nil && params.urls.count != 1 {
            throw .invalid("'name' can only be given with exactly one URL", parameter: "name")
        }
        if (params.user == nil) != (params.password == nil) {
            throw .invalid("'user' and 'password' go together", parameter: "user")
        }
        let requests = params.urls.map { url in
            DownloadRequest(
                url: url,
                directory: params.directory ?? queue.defaultDirectory,
                name: params.name,
                headers: params.headers ?? [],
                user: params.user,
                password: params.password,
                priority: params.priority ?? 0,
                now: params.now == true,
                directoryChosen: params.directory != nil
            )
        }
        try await queue.check(requests)
        return requests
    }
}

extension DownloadQueueStateMachine.Selection {
    /// `ids`, or `all`: never both, never neither.
    init(_ params: SelectionParams) throws(DownloadQueueError) {
        if params.all == true {
            guard params.ids?.isEmpty ?? true else {
                throw .invalid("give either 'ids' or 'all', not both", parameter: "ids")
            }
            self = .all
            return
        }
        guard let ids = params.ids, !ids.isEmpty else {
            throw .invalid("'ids' must name at least one download", parameter: "ids")
        }
        self = .ids(ids)
    }

    /// What `cancel` takes: ids only, so that nobody cancels the whole queue by accident.
    static func cancelling(_ params: SelectionParams) throws(DownloadQueueError) -> [Int64] {
        guard params.all != true else { throw .invalid("'cancel' takes ids, not 'all'", parameter: "all") }
        guard case .ids(let ids) = try Self(params) else { preconditionFailure("'all' was refused") }
        return ids
    }
}

extension DownloadQueueStateMachine.Placement {
    /// Exactly one of `top`, `bottom` and `before`.
    init(_ params: MoveParams) throws(DownloadQueueError) {
        switch (params.top == true, params.bottom == true, params.before) {
        case (true, false, nil): self = .top
        case (false, true, nil): self = .bottom
        case (false, false, let before?): self = .before(before)
        default: throw .invalid("'move' takes exactly one of 'top', 'bottom' or 'before'", parameter: "top")
        }
    }
}

extension Set<DownloadRecord.State> {
    /// The finished states `clear` takes off the list: `completed`, `failed` or both.
    init(_ params: ClearParams) throws(DownloadQueueError) {
        self.init()
        if params.completed == true { insert(.completed) }
        if params.failed == true { insert(.failed) }
        guard !isEmpty else { throw .invalid("'clear' needs 'completed', 'failed' or both", parameter: "completed") }
    }
}

extension DownloadListQuery {
    init(_ params: DownloadsParams) throws(PodcastError) {
        try self.init(state: params.state.map(DownloadRecord.State.init), podcast: params.podcast, limit: params.limit)
    }
}

extension DownloadRecord.State {
    /// The state `downloads` filters by.
    init(_ state: DownloadState) {
        switch state {
        case .queued: self = .queued
        case .active: self = .active
        case .paused: self = .paused
        case .failed: self = .failed
        case .completed: self = .completed
        case .cancelled: self = .cancelled
        }
    }
}
