import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// How the queue deletes a completed download's file: to the Trash or away, and only the file it wrote.
///
/// A rule deletes files without anyone looking, so before anything goes the file must still be what the queue
/// left: a regular file (not a link someone put there), inside the download directory, of the size it was
/// downloaded with. A file the user replaced or moved in is left alone, and that is logged.
package struct FileDisposal: Sendable, Hashable {
    /// `nil` deletes files outright (`use_trash = false`).
    package var trash: Trash?

    package init(trash: Trash?) { self.trash = trash }

    /// A file that went, and where to when it went to the Trash.
    package struct Disposed: Sendable, Hashable {
        package var path: String
        package var trashedTo: String?
    }

    /// Why a file was left where it is.
    package struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        package var path: String
        package var reason: String
        /// Nothing is at the path any more: there is nothing left to track either.
        package var gone = false

        package var description: String { "left \(path) in place: \(reason)" }
    }

    /// Deletes `path`, which the queue wrote inside `directory` with `size` bytes.
    ///
    /// - Returns: What became of it; a Trash that cannot take the file is logged by the caller and the file
    ///   deleted, since the rule that asked for the deletion still stands (a storage budget must be kept).
    package func dispose(
        _ path: String,
        size: Int64,
        inside directory: String,
        now: Int64
    ) -> Result<(Disposed, trashFailure: Trash.Failure?), Refusal> {
        func refuse(_ reason: String) -> Result<(Disposed, trashFailure: Trash.Failure?), Refusal> {
            .failure(Refusal(path: path, reason: reason))
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            var refusal = Refusal(path: path, reason: "it is gone (\(String(cString: strerror(code))))")
            refusal.gone = code == ENOENT
            return .failure(refusal)
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return refuse("it is no longer a regular file") }
        guard Int64(info.st_size) == size else {
            return refuse("it has \(info.st_size) bytes, not the \(size) downloaded: it was changed or replaced")
        }
        guard let root = Self.resolved(directory), let parent = Self.resolved(Self.parent(of: path)),
            parent == root || parent.hasPrefix(root == "/" ? "/" : root + "/")
        else { return refuse("it is not inside the download directory \(directory)") }
        var failure: Trash.Failure?
        if let trash {
            do {
                return .success((Disposed(path: path, trashedTo: try trash.trash(path, now: now)), nil))
            } catch {
                failure = error
            }
        }
        guard unlink(path) == 0 else { return refuse("it cannot be deleted (\(String(cString: strerror(errno))))") }
        return .success((Disposed(path: path, trashedTo: nil), failure))
    }

    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
