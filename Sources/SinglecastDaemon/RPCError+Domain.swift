import SinglecastProtocol

/// The one place where the download queue's refusals become JSON-RPC errors with their stable reasons.
extension RPCError {
    init(_ error: DownloadQueueError) {
        switch error.code {
        case .invalid(let parameter):
            self = .invalidParams(error.message, parameter: parameter)
        case .unknownDownload(let id):
            self.init(
                code: RPCError.invalidParamsCode,
                message: "Invalid params: \(error.message); 'singlecastctl downloads' lists them.",
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
}
