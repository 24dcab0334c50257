import SinglecastProtocol
import SinglecastSupport

/// `trash`, `restore` and `purge`: what singlecast put in the Trash.
extension Router {
    func trash(_ method: Method, _ request: RPCRequest) async throws -> EncodedJSON {
        let podcasts = context.podcasts
        switch method {
        case .trash:
            try expectNoParams(request)
            let files = try await podcasts.trashed()
            let useTrash = await context.queue.fileDisposal.trash != nil
            return try WireCoding.encoded(TrashResult(files, useTrash: useTrash))
        case .restore:
            let ids = try params(RestoreParams.self, request).ids
            guard !ids.isEmpty else {
                throw RPCError.invalidParams("'ids' must name at least one file", parameter: "ids")
            }
            return try WireCoding.encoded(RestoreResult(try await podcasts.restore(ids)))
        case .purge:
            let params = try request.params == nil ? PurgeParams() : params(PurgeParams.self, request)
            let olderThan = try params.olderThan.map { text throws in
                guard let duration = parseDuration(text) else {
                    throw RPCError.invalidParams(
                        "'older_than' must be a duration such as 12h, 30d or 2w; got '\(text)'",
                        parameter: "older_than"
                    )
                }
                return duration.components.seconds.saturatingMultiply(1000)
            }
            return try WireCoding.encoded(PurgeResult(await podcasts.emptyTrash(olderThan: olderThan)))
        default:
            preconditionFailure("'\(method.rawValue)' is not a Trash method")
        }
    }
}

extension TrashResult {
    init(_ files: [TrashedFile], useTrash: Bool) {
        self.init(
            files: files.map { entry in
                TrashedFileInfo(
                    id: entry.file.id,
                    file: entry.file.path,
                    original: entry.file.original,
                    size: entry.file.size,
                    trashedAt: iso8601(entry.file.trashedAt),
                    episode: entry.episode?.id ?? entry.file.episode,
                    episodeTitle: entry.episode?.title,
                    podcast: entry.episode?.podcastID,
                    podcastTitle: entry.podcastTitle
                )
            },
            totalBytes: files.reduce(0) { $0.saturatingAdd($1.file.size) },
            useTrash: useTrash
        )
    }
}

extension RestoreResult {
    init(_ outcome: TrashRestore) {
        self.init(
            restored: outcome.restored.map {
                Restored(id: $0.id, file: $0.path, episode: $0.episode, download: $0.download, pinned: $0.pinned)
            },
            refused: outcome.refused.map { Refused(id: $0.id, file: $0.path, reason: $0.reason) }
        )
    }
}

extension PurgeResult {
    init(_ outcome: TrashEmptied) {
        self.init(
            purged: outcome.purged.map(\.path),
            freedBytes: outcome.purged.reduce(0) { $0.saturatingAdd($1.size) },
            failed: outcome.failed.sorted { $0.key < $1.key }.map {
                RestoreResult.Refused(id: "", file: $0.key, reason: $0.value)
            }
        )
    }
}
