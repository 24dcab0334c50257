/// Why the podcast layer refused a command. The control server maps it to a JSON-RPC error in one place
/// (`RPCError+Domain.swift`).
package struct PodcastError: Error, Equatable, Sendable, CustomStringConvertible {
    package enum Code: Equatable, Sendable {
        /// A parameter is wrong; `parameter` names it.
        case invalid(parameter: String)
        /// A title prefix that names more than one podcast.
        case ambiguousPodcast(String)
        case unknownPodcast(String)
        case unknownEpisode(Int64)
        /// No file singlecast put in the Trash has this id.
        case unknownTrashedFile(String)
        /// The episode has no enclosure that can be downloaded.
        case noEnclosure(Int64)
        /// The feed could not be fetched or read (`url` without credentials).
        case feed(FeedProblem, url: String)
        /// The store could not read or save.
        case store
    }

    package var code: Code
    /// What is wrong: a clause for the protocol layer to frame, except for ``Code/feed(_:url:)``, whose message is a
    /// whole sentence.
    package var message: String

    package var description: String { message }

    static func invalid(_ message: String, parameter: String) -> Self {
        Self(code: .invalid(parameter: parameter), message: message)
    }

    static func store(_ message: String) -> Self { Self(code: .store, message: message) }

    static func unknownTrashedFile(_ id: String) -> Self {
        Self(code: .unknownTrashedFile(id), message: "nothing singlecast put in the Trash has the id '\(id)'")
    }

    /// - Parameter download: The download with that number, if any: the listener may have meant it.
    static func unknownEpisode(_ id: Int64, download: DownloadMention? = nil) -> Self {
        guard let download else {
            return Self(
                code: .unknownEpisode(id),
                message: "there is no episode \(id); 'singlecastctl episodes PODCAST' lists them"
            )
        }
        let what = download.episode.map { "the download of episode \($0.id), \($0.name)" } ?? "\"\(download.file)\""
        return Self(
            code: .unknownEpisode(id),
            message: "there is no episode \(id); download \(id) is \(what), \(download.state.rawValue) "
                + "(\(download.command))"
        )
    }
}
