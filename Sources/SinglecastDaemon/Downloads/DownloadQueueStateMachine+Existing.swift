import SinglecastStore

/// What an enqueue makes of a URL that has a download already.
extension DownloadQueueStateMachine {
    /// A URL asked for again.
    package struct Repeat: Equatable, Sendable {
        /// The URL as stored (credentials moved out).
        package var url: String
        /// The directory, when the request named one (`--to`); `nil` means "wherever".
        package var directory: String?
        /// The file name (sanitized), when the request named one (`--name`).
        package var name: String?

        package init(url: String, directory: String?, name: String?) {
            self.url = url
            self.directory = directory
            self.name = name
        }
    }

    /// The download that answers a URL asked for again, if it is one already done.
    ///
    /// A completed download whose file is still there is the answer (`existing`): fetching a finished file again
    /// into `name (2).mp3` is never what a listener meant. A directory or name other than its own asks for another
    /// copy, which is then a new download. An unfinished download of the URL is found by the store, in the enqueue's
    /// own transaction; here it is only checked that the request does not ask for another place for it: nothing
    /// would move it, so the request is refused rather than answered with a download somewhere else.
    ///
    /// - Parameter fileExists: Whether a completed download's file is still on disk.
    package func existing(
        for wanted: Repeat,
        fileExists: (DownloadRecord) -> Bool
    ) throws(DownloadQueueError) -> DownloadRecord? {
        let same = records.downloads(of: wanted.url).filter { $0.listed && $0.state != .cancelled }
        let elsewhere = { (record: DownloadRecord) in
            (wanted.directory.map { $0 != record.directory } ?? false)
                || (wanted.name.map { $0 != record.fileName } ?? false)
        }
        if let unfinished = same.first(where: { $0.state != .completed }), elsewhere(unfinished) {
            let parameter = wanted.name.map { $0 != unfinished.fileName } == true ? "name" : "directory"
            throw .invalid(
                "'\(wanted.url)' is already download \(unfinished.id) (\(unfinished.state.rawValue), "
                    + "saving to '\(unfinished.path)'); cancel it first to save it elsewhere",
                parameter: parameter
            )
        }
        return same.filter { $0.state == .completed && !elsewhere($0) && fileExists($0) }.max { $0.id < $1.id }
    }
}
