import CPosix

#if canImport(Glibc)
import Glibc
#endif

/// Files in a download directory, reached through a descriptor of their directory and never through a link.
///
/// A download directory may be shared, and a feed names the folders below it: someone who can write there could
/// plant a symbolic link as `<name>.part`, or as a folder, pointing anywhere the daemon's user may write. So every
/// operation opens the file's directory first — `download_dir` itself as configured, then each folder below it
/// with `O_NOFOLLOW`, refusing a link and `..` — and then opens, stats, renames or removes the last name relative
/// to that descriptor, again without following a link. A check and the act it allows then look at the same
/// directory. A directory the user named outside `download_dir` (`enqueue --dir`) is opened as given: only its
/// last name is guarded.
package enum DownloadDirectory {
    /// The descriptor (`O_RDONLY | O_DIRECTORY`) of `directory`, every folder below `root` opened without following
    /// a link; with `create`, missing folders below `root` are made (mode 0777 less the umask), and a missing
    /// directory elsewhere with its parents.
    ///
    /// - Returns: The descriptor, which the caller closes, or -1 and the `errno` (`ELOOP` or `ENOTDIR` for a link).
    package static func open(_ directory: String, root: String, create: Bool = false) -> (fd: Int32, errno: Int32) {
        let (top, below) = split(directory, root: root)
        guard !below.contains("..") else { return (-1, EINVAL) }
        var fd = Glibc.open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0, create, errno == ENOENT {
            makeParents(top)
            fd = Glibc.open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard fd >= 0 else { return (-1, errno) }
        for name in below {
            var next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0, create, errno == ENOENT, mkdirat(fd, name, 0o777) == 0 || errno == EEXIST {
                next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let code = errno
            close(fd)
            guard next >= 0 else { return (-1, code) }
            fd = next
        }
        return (fd, 0)
    }

    /// Opens (creating if missing) the file at `path` for reading and writing; a link there is refused (`ELOOP`).
    ///
    /// - Returns: The descriptor, or -1 and the `errno`.
    package static func openFile(_ path: String, root: String) -> (fd: Int32, errno: Int32) {
        within(path, root: root) { directory, name in
            let fd = openat(directory, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o666)
            return fd >= 0 ? (fd, 0) : (-1, errno)
        } ?? (-1, errno)
    }

    /// Renames `from` to `to` (both in one directory) unless something is at `to`.
    ///
    /// - Returns: 0, or the `errno` (`EEXIST` when `to` is taken).
    package static func renameNoReplace(_ from: String, to: String, root: String) -> Int32 {
        guard parent(of: from) == parent(of: to) else { return EXDEV }
        return within(from, root: root) { directory, name in
            cposix_renameat_noreplace(directory, name, directory, baseName(to)) == 0 ? 0 : errno
        } ?? errno
    }

    /// Removes the file (or link: never what it points at) at `path`.
    ///
    /// - Returns: 0, or the `errno`.
    @discardableResult
    package static func remove(_ path: String, root: String) -> Int32 {
        within(path, root: root) { directory, name in unlinkat(directory, name, 0) == 0 ? 0 : errno } ?? errno
    }

    /// Removes each of `folders` below `root` that is empty, then its parents that are left empty, up to (never
    /// including) `root`. Each is removed relative to its opened parent (`unlinkat` with `AT_REMOVEDIR`), so a link
    /// is never followed nor removed, and a folder with anything in it stays.
    package static func removeEmptyFolders(_ folders: some Sequence<String>, root: String) {
        func below(_ folder: String) -> Bool { isInside(folder, root: root) && trimmed(folder) != trimmed(root) }
        var pending = Set(folders.map(trimmed).filter(below))
        // The deepest first, so a folder whose only content was an empty folder goes too.
        while let folder = pending.max(by: { $0.count < $1.count }) {
            pending.remove(folder)
            let removed = within(folder, root: root) { parent, name in unlinkat(parent, name, AT_REMOVEDIR) == 0 }
            if removed == true, below(parent(of: folder)) { pending.insert(parent(of: folder)) }
        }
    }

    /// The status of the file at `path` itself (a link is not followed), or `nil` with `errno` set.
    package static func status(_ path: String, root: String) -> stat? {
        within(path, root: root) { directory, name in
            var info = stat()
            return fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
        } ?? nil
    }

    /// Runs `body` with the descriptor of the directory of `path` and the last name; `nil` with `errno` set when the
    /// directory cannot be opened.
    package static func within<Result>(
        _ path: String,
        root: String,
        _ body: (_ directory: Int32, _ name: String) -> Result
    ) -> Result? {
        let name = baseName(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            errno = EINVAL
            return nil
        }
        let (fd, code) = open(parent(of: path), root: root)
        guard fd >= 0 else {
            errno = code
            return nil
        }
        defer {
            let saved = errno
            close(fd)
            errno = saved
        }
        return body(fd, name)
    }

    /// Whether `path` is `root` or below it, by its bytes as the kernel reads them (links are the business of
    /// ``open(_:root:create:)``). Not by `Character`: a slash followed by a combining mark is one, and a folder whose
    /// name begins with such a mark would not be below its own parent.
    package static func isInside(_ path: String, root: String) -> Bool {
        let (path, root) = (trimmed(path), trimmed(root))
        return sameBytes(path, root) || hasBytePrefix(path, root == "/" ? "/" : root + "/")
    }

    /// `root` and the folders below it that make `directory`; `directory` and none when it is not below `root`.
    private static func split(_ directory: String, root: String) -> (top: String, below: [String]) {
        let directory = trimmed(directory)
        let root = trimmed(root)
        guard isInside(directory, root: root) else { return (directory, []) }
        let rest = bytes(of: directory, from: root == "/" ? 1 : root.utf8.count)
        return (root, components(rest).map(String.init).filter { $0 != "." })
    }

    /// `path` without trailing slashes, `/` itself aside. Looked at as bytes: counting `Character`s for each of the
    /// few calls per file operation was 2 % of a small download's instructions.
    private static func trimmed(_ path: String) -> String {
        var copy = path
        let end = copy.withUTF8 { bytes in
            var end = bytes.count
            while end > 1, bytes[end - 1] == slash { end -= 1 }
            return end
        }
        return end == path.utf8.count ? path : bytes(of: path, upTo: end)
    }

    /// Makes `directory` and its missing parents; the directory the user configured or named, so links are followed.
    private static func makeParents(_ directory: String) {
        var partial = ""
        for part in components(directory) {
            partial += "/" + part
            mkdir(partial, 0o777)
        }
    }

    /// What precedes the last slash of `path` (`/` for a name at the top). Cut at the byte, as for
    /// ``isInside(_:root:)``.
    static func parent(of path: String) -> String {
        guard let last = lastSlash(path), last != 0 else { return "/" }
        return bytes(of: path, upTo: last)
    }

    /// What follows the last slash of `path`, or all of it.
    static func baseName(_ path: String) -> String {
        lastSlash(path).map { bytes(of: path, from: $0 + 1) } ?? path
    }

    /// What follows `directory` and a slash in `path`, cut at the byte; `nil` when `path` is not below `directory`.
    /// Not by dropping `Character`s: a slash followed by a combining mark is one, and the name would lose its mark.
    package static func relative(_ path: String, below directory: String) -> String? {
        let directory = trimmed(directory)
        let prefix = directory == "/" ? "/" : directory + "/"
        guard path.utf8.count > prefix.utf8.count, hasBytePrefix(path, prefix) else { return nil }
        return bytes(of: path, from: prefix.utf8.count)
    }

    /// The names between the slashes of `path`, empty ones left out: the kernel's components, cut at the byte.
    static func components(_ path: String) -> [Substring] {
        path.utf8.split(separator: slash).map { Substring($0) }
    }

    private static let slash = UInt8(ascii: "/")

    // Bytes through `withUTF8`: `String.UTF8View`'s generic algorithms (`starts(with:)`, `lastIndex(of:)`) step
    // through an iterator at about 20 instructions a byte, 2 % of a small download's work over the paths each file
    // operation looks at.

    /// Whether the bytes of `text` begin with those of `prefix`.
    private static func hasBytePrefix(_ text: String, _ prefix: String) -> Bool {
        var (text, prefix) = (text, prefix)
        return text.withUTF8 { text in
            prefix.withUTF8 { prefix in
                text.count >= prefix.count
                    && (prefix.isEmpty || memcmp(text.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
            }
        }
    }

    /// Whether `a` and `b` are the same bytes, as the kernel compares names (`==` also equates a composed and a
    /// decomposed name, two files to the kernel).
    package static func sameBytes(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && hasBytePrefix(a, b)
    }

    /// The byte offset of the last slash in `path`.
    private static func lastSlash(_ path: String) -> Int? {
        var path = path
        return path.withUTF8 { $0.lastIndex(of: slash) }
    }

    /// The bytes of `path` before `end`, which falls between two characters' encodings (at a slash, say).
    private static func bytes(of path: String, upTo end: Int) -> String {
        var path = path
        return path.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[..<end]), as: UTF8.self) }
    }

    /// The bytes of `path` from `start`, which falls between two characters' encodings (after a slash, say).
    private static func bytes(of path: String, from start: Int) -> String {
        var path = path
        return path.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[start...]), as: UTF8.self) }
    }
}
