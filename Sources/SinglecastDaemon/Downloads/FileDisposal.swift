import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// How the queue deletes a completed download's file: to the Trash or away, and only the file it wrote.
///
/// A rule deletes files without anyone looking, so before anything goes the file must still be what the queue
/// left: a regular file (not a link someone put there), inside the download directory and reached without following
/// a link, of the size it was downloaded with. A file the user replaced or moved in is left alone, and that is
/// logged. With `use_trash`, a file the Trash cannot take stays too: the listener asked not to lose it for good.
package struct FileDisposal: Sendable, Hashable {
    /// `nil` deletes files outright (`use_trash = false`).
    package var trash: Trash?

    package init(trash: Trash?) { self.trash = trash }

    /// A file that went, and where to when it went to the Trash.
    package struct Disposed: Sendable, Hashable {
        package var path: String
        package var trashedTo: String?

        package init(path: String, trashedTo: String?) {
            self.path = path
            self.trashedTo = trashedTo
        }
    }

    /// Why a file was left where it is.
    package struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        /// Whether the download still stands for the file.
        package enum Kind: Sendable, Hashable {
            /// Nothing is at the path any more: there is nothing left to track either, and the download is forgotten.
            case gone
            /// The file is no longer what the queue wrote (changed, outside, behind a link): it is left alone, and its
            /// download stays, so the file is still tracked and nothing says it was deleted.
            case notTheQueuesFile
            /// The file is the queue's, but the Trash asked for cannot take it: it stays, and so does its download.
            case trashUnavailable
        }

        package var path: String
        package var reason: String
        package var kind: Kind
        /// Nothing is at the path any more.
        package var gone: Bool { kind == .gone }

        package var description: String { "left \(path) in place: \(reason)" }
    }

    /// Deletes `path`, which the queue wrote inside `directory` with `size` bytes.
    ///
    /// The file's directory is opened through ``DownloadDirectory`` (no link below `directory` followed), and the
    /// checks and the deletion act on that descriptor, so what was checked is what goes.
    ///
    /// - Returns: What became of it, or why it stays. With a Trash, a file the Trash cannot take stays where it is
    ///   (`trashUnavailable`): a listener who asked for the Trash never loses a file for good.
    /// - Parameter episode: The episode whose file it is, recorded in the Trash so that `trash restore` finds it.
    package func dispose(
        _ path: String,
        size: Int64,
        inside directory: String,
        now: Int64,
        episode: Int64? = nil
    ) -> Result<Disposed, Refusal> {
        func refuse(_ reason: String, _ kind: Refusal.Kind = .notTheQueuesFile) -> Result<Disposed, Refusal> {
            .failure(Refusal(path: path, reason: reason, kind: kind))
        }
        guard DownloadDirectory.isInside(DownloadDirectory.parent(of: path), root: directory) else {
            return refuse("it is not inside the download directory \(directory)")
        }
        let outcome = DownloadDirectory.within(path, root: directory) { folder, name in
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                let code = errno
                return refuse(
                    "it is gone (\(String(cString: strerror(code))))",
                    code == ENOENT ? .gone : .notTheQueuesFile
                )
            }
            guard info.st_mode & S_IFMT == S_IFREG else { return refuse("it is no longer a regular file") }
            guard Int64(info.st_size) == size else {
                return refuse("it has \(info.st_size) bytes, not the \(size) downloaded: it was changed or replaced")
            }
            if let trash {
                do throws(Trash.Failure) {
                    return .success(
                        Disposed(
                            path: path,
                            trashedTo: try trash.trash(name, in: folder, path: path, now: now, episode: episode)
                        )
                    )
                } catch {
                    return refuse("\(error.message); use_trash is on, so it is not deleted", .trashUnavailable)
                }
            }
            guard unlinkat(folder, name, 0) == 0 else {
                return refuse("it cannot be deleted (\(String(cString: strerror(errno))))")
            }
            return .success(Disposed(path: path, trashedTo: nil))
        }
        guard let outcome else {
            switch errno {
            case ENOENT: return refuse("it is gone (\(String(cString: strerror(errno))))", .gone)
            case EINVAL, ELOOP, ENOTDIR:
                return refuse("it is not inside the download directory \(directory) (a folder on its way is a link)")
            default: return refuse("its folder cannot be opened (\(String(cString: strerror(errno))))")
            }
        }
        return outcome
    }
}
