import SinglecastStore

/// Why a queue command leaves a download as it is, in the words the listener reads, with what to use instead.
extension DownloadQueueStateMachine {
    /// The commands that may leave a download they name unchanged.
    package enum SelectionCommand: Sendable, Hashable {
        case pause, resume, retry
    }

    /// Why `command` left download `id`, now in `state`, as it was.
    package static func whyUnchanged(_ command: SelectionCommand, id: Int64, state: DownloadRecord.State) -> String {
        let download = "download \(id)"
        switch (command, state) {
        case (_, .active): return "\(download) is running already"
        case (.pause, .paused): return "\(download) is paused already; use resume"
        case (.retry, .paused): return "\(download) is paused; use resume"
        case (.pause, .completed): return "\(download) is completed; nothing to pause"
        case (_, .completed): return "\(download) is completed; use redownload"
        case (.pause, .failed): return "\(download) failed; use retry or cancel"
        case (_, .failed): return "\(download) failed; use retry"
        case (_, .queued): return "\(download) is queued already"
        case (.resume, .paused): return "\(download) is paused still"
        case (_, .cancelled): return "\(download) is being cancelled"
        }
    }
}
