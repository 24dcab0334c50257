import SinglecastProtocol

/// The one place where the domain's refusals become JSON-RPC errors with their stable codes and reasons.
extension RPCError {
    /// Codes of feed failures (JSON-RPC's implementation-defined range).
    package static let feedUnreachableCode = -32020
    package static let feedInvalidCode = -32021

    /// The JSON-RPC error for an error thrown by a handler: itself when it is one, the mapping of a domain
    /// refusal, or `nil` for anything else (an internal error).
    init?(domain error: any Error) {
        switch error {
        case let error as RPCError: self = error
        case let error as DownloadQueueError: self.init(error)
        case let error as PodcastError: self.init(error)
        case let error as DirectoryError: self.init(error)
        case let error as SyncError: self.init(error)
        default: return nil
        }
    }

    init(_ error: DownloadQueueError) {
        switch error.code {
        case .invalid(let parameter):
            self = .invalidParams(error.message, parameter: parameter)
        case .unknownDownload(let id):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message).",
                reason: "unknown_download",
                details: ["id": String(id)]
            )
        case .notMovable(let id, let state):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message); only unfinished downloads have a place in the queue.",
                reason: "not_movable",
                details: ["id": String(id), "state": state.rawValue]
            )
        case .notSaved:
            self = .internalError(error.message)
        }
    }

    init(_ error: PodcastError) {
        switch error.code {
        case .invalid(let parameter):
            self = .invalidParams(error.message, parameter: parameter)
        case .ambiguousPodcast(let selector):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message).",
                reason: "ambiguous_podcast",
                details: ["podcast": selector]
            )
        case .unknownPodcast(let selector):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message); see singlecastctl podcasts.",
                reason: "unknown_podcast",
                details: ["podcast": selector]
            )
        case .unknownEpisode(let id):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message).",
                reason: "unknown_episode",
                details: ["id": String(id)]
            )
        case .unknownTrashedFile(let id):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message); 'singlecastctl trash' lists them.",
                reason: "unknown_trashed_file",
                details: ["id": id]
            )
        case .noEnclosure(let id):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message).",
                reason: "no_enclosure",
                details: ["id": String(id)]
            )
        case .feed(let problem, let url):
            self.init(
                code: problem == .invalid ? RPCError.feedInvalidCode : RPCError.feedUnreachableCode,
                message: error.message,
                reason: problem.rawValue,
                details: ["url": url]
            )
        case .store:
            self = .internalError(error.message)
        }
    }

    package init(_ error: DirectoryError) {
        switch error.code {
        case .invalid(let parameter):
            self = .invalidParams(error.message, parameter: parameter)
        case .termTooShort(let term, let minimum):
            self = .termTooShort(term, minimum: minimum)
        case .unknownPodcast(let id):
            self = .unknownPodcast(id)
        case .rateLimited(let seconds, let limit):
            self = .rateLimited(retryAfterSeconds: seconds, limit: limit)
        case .cancelled:
            self = .cancelled(error.message)
        case .unreachable(let transferError):
            self = .directoryUnreachable(error.message, error: transferError)
        case .httpStatus(let status, let url):
            self = .directoryHTTPError(status: status, url: url)
        case .badResponse(let url):
            self = .directoryBadResponse(error.message, url: url)
        }
    }
}
