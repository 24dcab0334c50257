import CPosix
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// Putting back what singlecast moved to the Trash: `trash restore`.
extension Trash {
    /// Why a file stays in the Trash.
    package struct RestoreRefusal: Error, Hashable, Sendable, CustomStringConvertible {
        package var message: String

        package var description: String { message }
    }

    /// Moves one of singlecast's files back where it was, inside `root` (the download directory), creating its folder
    /// when it is gone; then removes its info file. Never over a file that is there now, never outside `root`, never
    /// through a link below `root`.
    ///
    /// - Returns: `nil` when it is back, else why it stays.
    package func restore(_ file: OwnFile, root: String) -> RestoreRefusal? {
        func refuse(_ message: String) -> RestoreRefusal? { RestoreRefusal(message: message) }
        let folder = DownloadDirectory.parent(of: file.original)
        guard file.original.hasPrefix("/"), DownloadDirectory.isInside(folder, root: root) else {
            return refuse("\(file.original) is outside the download directory \(root); restore it by hand")
        }
        let files = DownloadDirectory.parent(of: file.path)
        let name = DownloadDirectory.baseName(file.path)
        let source = open(files, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard source >= 0 else { return refuse("cannot open \(files): \(String(cString: strerror(errno)))") }
        defer { close(source) }
        var info = stat()
        guard fstatat(source, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return refuse("\(file.path) is no longer a regular file in the Trash")
        }
        let (target, code) = DownloadDirectory.open(folder, root: root, create: true)
        guard target >= 0 else {
            return refuse("cannot open \(folder): \(String(cString: strerror(code)))")
        }
        defer { close(target) }
        guard cposix_renameat_noreplace(source, name, target, DownloadDirectory.baseName(file.original)) == 0 else {
            let code = errno
            if code == EEXIST {
                return refuse("something is at \(file.original) now; move it away first")
            }
            return refuse("cannot move it back to \(file.original): \(String(cString: strerror(code)))")
        }
        _ = fsync(target)
        let infos = open(DownloadDirectory.parent(of: files) + "/info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if infos >= 0 {
            unlinkat(infos, name + ".trashinfo", 0)
            close(infos)
        }
        return nil
    }
}

extension Trash.OwnFile {
    /// A short name for the file that stays the same while it is in the Trash (its trash path's FNV-1a hash): what
    /// `trash restore` takes.
    package var id: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String((String(repeating: "0", count: max(0, 16 - hex.count)) + hex).prefix(8))
    }
}
