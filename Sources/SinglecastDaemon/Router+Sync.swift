import SinglecastProtocol

/// `sync`: the sync service's answers in the protocol's terms.
extension Router {
    func sync(_ request: RPCRequest) async throws -> SyncResult {
        let params = try request.params == nil ? SyncParams() : self.params(SyncParams.self, request)
        guard let sync = context.sync else {
            throw RPCError(SyncError(.disabled, "sync is off: no sync_server is set in the configuration"))
        }
        if params.status == true {
            return SyncResult(report: nil, status: SyncStatusInfo(await sync.status()))
        }
        switch await sync.syncNow() {
        case .success(let report):
            return SyncResult(report: SyncReportInfo(report), status: SyncStatusInfo(await sync.status()))
        case .failure(let error):
            throw RPCError(error)
        }
    }
}

extension RPCError {
    /// Code of every sync failure; `data.reason` tells which.
    package static let syncFailedCode = -32030

    init(_ error: SyncError) {
        self.init(code: RPCError.syncFailedCode, message: error.message, reason: error.code.rawValue)
    }
}
