import SinglecastStore

/// Why the download queue refused a command. The control server maps it to a JSON-RPC error in one place.
package struct DownloadQueueError: Error, Equatable, Sendable {
    package enum Code: Equatable, Sendable {
        /// A parameter is wrong; `parameter` names it.
        case invalid(parameter: String)
        case unknownDownload(Int64)
        /// Only unfinished downloads have a place in the queue.
        case notMovable(Int64, DownloadRecord.State)
        /// The store could not save the change.
        case notSaved
    }

    package var code: Code
    /// What is wrong, as a clause that the protocol layer frames ("'ids' must name at least one download").
    package var message: String

    static func invalid(_ message: String, parameter: String) -> Self {
        Self(code: .invalid(parameter: parameter), message: message)
    }

    /// - Parameter episode: The episode with that number, if any: the listener may have meant it.
    static func unknownDownload(_ id: Int64, episode: EpisodeMention? = nil) -> Self {
        guard let episode else {
            return Self(
                code: .unknownDownload(id),
                message: "there is no download \(id); 'singlecastctl downloads' lists them"
            )
        }
        let download =
            switch episode.download {
            case .listed(let download): "its download is \(download)"
            case .unlisted: "downloaded; 'singlecastctl show-episode \(episode.id)' shows it"
            case .none: "not downloaded; 'singlecastctl enqueue \(episode.id)' downloads it"
            }
        return Self(
            code: .unknownDownload(id),
            message: "there is no download \(id); episode \(id) is \(episode.name) (\(download))"
        )
    }

    static func notMovable(_ id: Int64, _ state: DownloadRecord.State) -> Self {
        Self(code: .notMovable(id, state), message: "download \(id) is \(state.rawValue)")
    }

    static func notSaved(_ error: any Error) -> Self {
        Self(code: .notSaved, message: "the queue could not be saved: \(error)")
    }
}
