import SinglecastProtocol

/// The queue's events as the protocol's: the queue hands over its announcement and the download, and each event's
/// params are built here and nowhere else.
extension EventBus {
    /// Whether anyone receives this download event: building one stats the partial file.
    func isWanted(_ announcement: DownloadQueueStateMachine.Announcement) -> Bool {
        isWanted(.downloads, event: DownloadEvent(announcement).rawValue)
    }

    /// `download.added`, `download.progress`, … for one download. Its `DownloadInfo` is built, and written, by the
    /// first watcher to take the event, off the queue's actor.
    func downloadChanged(_ announcement: DownloadQueueStateMachine.Announcement, _ download: DownloadSnapshot) {
        publish(.downloads, method: DownloadEvent(announcement).rawValue) {
            DownloadEventParams(download: DownloadInfo(download))
        }
    }
}

extension DownloadEvent {
    /// The wire name of each of the machine's announcements.
    init(_ announcement: DownloadQueueStateMachine.Announcement) {
        switch announcement {
        case .added: self = .added
        case .started: self = .started
        case .progress: self = .progress
        case .paused: self = .paused
        case .resumed: self = .resumed
        case .retrying: self = .retrying
        case .completed: self = .completed
        case .failed: self = .failed
        case .removed: self = .removed
        }
    }
}
