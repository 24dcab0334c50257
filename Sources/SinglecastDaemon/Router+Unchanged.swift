import SinglecastProtocol

/// What `pause`, `resume` and `retry` left as it was, and why.
extension Router {
    /// The downloads among those `params` names that `changed` leaves out, each with why (none for `--all`, which
    /// names only the downloads it applies to).
    func unchanged(
        _ command: DownloadQueueStateMachine.SelectionCommand,
        _ params: SelectionParams,
        changed: [Int64]
    ) async -> [ChangedResult.Unchanged]? {
        let left = (params.ids ?? []).filter { !changed.contains($0) }
        guard !left.isEmpty else { return nil }
        let infos = await context.queue.infos(left)
        return left.compactMap { id in
            infos[id].map { info in
                ChangedResult.Unchanged(
                    id: id,
                    state: info.state.rawValue,
                    reason: DownloadQueueStateMachine.whyUnchanged(command, id: id, state: info.state)
                )
            }
        }
    }
}
