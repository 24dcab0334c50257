#if canImport(Glibc)
import Glibc
#endif

/// Opens a file the catalogue named for serving, and refuses it unless it is a regular file that lies inside its root
/// by its own name: no symbolic link as its last component (`O_NOFOLLOW`) or anywhere below the root, checked on the
/// descriptor actually opened.
package enum ServedFile {
    package struct Opened: Sendable {
        package var descriptor: Int32
        package var facts: FileAnswer.Facts
    }

    /// The open file, or `nil` (nothing is left open) when it may not be served.
    package static func open(_ file: ServableFile) -> Opened? {
        // Bytes, as the kernel compares names: by `Character`s a slash followed by a combining mark is no slash, and
        // by `==` a composed and a decomposed name, two files to the kernel, are equal.
        guard let relative = DownloadDirectory.relative(file.path, below: file.root), let realRoot = realPath(file.root)
        else { return nil }
        let descriptor = openWithoutFollowing(file.path)
        guard descriptor >= 0 else { return nil }
        var opened = stat()
        var named = stat()
        // The name resolves to exactly root/relative, so no link sits on the way; and the descriptor is the file that
        // name is now, so none was swapped in between.
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG,
            let real = realPath(file.path),
            DownloadDirectory.sameBytes(real, (realRoot == "/" ? "" : realRoot) + "/" + relative),
            lstat(file.path, &named) == 0, named.st_dev == opened.st_dev, named.st_ino == opened.st_ino
        else {
            close(descriptor)
            return nil
        }
        let facts = FileAnswer.Facts(
            size: UInt64(max(0, opened.st_size)),
            modified: Int64(opened.st_mtim.tv_sec),
            modifiedNanoseconds: Int64(opened.st_mtim.tv_nsec),
            device: UInt64(opened.st_dev),
            inode: UInt64(opened.st_ino)
        )
        return Opened(descriptor: descriptor, facts: facts)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// `O_NONBLOCK` so that a FIFO in the file's place cannot hang the open; it changes nothing for a regular file.
private func openWithoutFollowing(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
}
