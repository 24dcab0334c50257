import SinglecastStore

// Episode ids and download ids are both small integers, and commands take one or the other. A number that is no
// download but is an episode (or the reverse) is refused with what it is and the command that takes it; these are
// what the refusals say about it (``DownloadQueueError/unknownDownload(_:episode:)``,
// ``PodcastError/unknownEpisode(_:download:)``).

/// An episode, named as a listener knows it.
package struct EpisodeMention: Sendable, Hashable {
    package var id: Int64
    package var title: String
    package var podcastID: Int64
    package var podcast: String
    package var download: Download

    /// An episode's download as `downloads` shows it.
    package enum Download: Sendable, Hashable {
        case listed(Int64)
        /// Its download was cleared off the list; the file stays the episode's.
        case unlisted
        case none
    }

    package init(_ episode: EpisodeRecord, podcast: String, download: Download) {
        id = episode.id
        title = episode.title
        podcastID = episode.podcastID
        self.podcast = podcast
        self.download = download
    }

    /// `"Title" of "Podcast"`.
    package var name: String { "\"\(title)\" of \"\(podcast)\"" }
}

/// A download, named as a listener knows it.
package struct DownloadMention: Sendable, Hashable {
    package var id: Int64
    /// Its file's name.
    package var file: String
    package var state: DownloadRecord.State
    /// The episode it was made for, if any.
    package var episode: EpisodeMention?

    package init(_ download: DownloadSnapshot, episode: EpisodeMention?) {
        id = download.id
        file = download.record.fileName
        state = download.state
        self.episode = episode
    }

    /// The command for this download in its state, as a clause: `'singlecastctl resume 31' resumes it`.
    var command: String {
        switch state {
        case .paused: "'singlecastctl resume \(id)' resumes it"
        case .failed: "'singlecastctl retry \(id)' retries it"
        case .queued, .active, .completed, .cancelled: "'singlecastctl show \(id)' shows it"
        }
    }
}
