import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// What singlecast itself moved to the Trash, so that `max_storage` can count it and empty the oldest of it.
///
/// singlecast's info files carry ``Trash/marker``; only those, for files that came from inside the download
/// directory, are ever read as ours or removed. Anything else in the Trash (the listener's own deletions, other
/// programs') is never counted or touched.
extension Trash {
    /// A file singlecast moved into a trash directory, still there.
    package struct OwnFile: Sendable, Hashable {
        /// `TRASH/files/NAME`.
        package var path: String
        package var size: Int64
        /// When its info file was written (milliseconds since 1970).
        package var trashedAt: Int64
        /// Where it was before (absolute), from its info file's `Path`.
        package var original: String
        /// The episode whose file it was; `nil` for a file trashed before singlecast recorded it.
        package var episode: Int64?

        package init(path: String, size: Int64, trashedAt: Int64, original: String = "", episode: Int64? = nil) {
            self.path = path
            self.size = size
            self.trashedAt = trashedAt
            self.original = original
            self.episode = episode
        }
    }

    /// singlecast's files in the trash directories that take files from `directory`: the home trash, and the trashes
    /// at the top of `directory`'s file system. A trash directory that is not the user's own, or that others may
    /// write, is passed over, as ``usable(_:)`` refuses it for trashing.
    package func ownFiles(from directory: String) -> [OwnFile] {
        var found: [OwnFile] = []
        var device = stat()
        guard stat(directory, &device) == 0 else { return [] }
        // The file system's top as seen from a file directly inside `directory`.
        let top = Self.topDirectory(of: directory + "/-", device: device.st_dev)
        let prefix = top == "/" ? "" : top
        let candidates = [(home, ""), ("\(prefix)/.Trash/\(getuid())", top), ("\(prefix)/.Trash-\(getuid())", top)]
        for (trash, relativeTo) in candidates where Self.isOwnedTrash(trash) {
            found += Self.ownFiles(in: trash, relativeTo: relativeTo, from: directory)
        }
        return found
    }

    /// Empties one of singlecast's files from the Trash for good: the file, then its info file, so a crash between
    /// the two leaves an info file with nothing to restore (which trash readers skip), never a file no one can see.
    ///
    /// - Returns: `nil` when it is gone, else why it stays.
    package func purge(_ file: OwnFile) -> String? {
        let files = DownloadDirectory.parent(of: file.path)
        let name = DownloadDirectory.baseName(file.path)
        let trash = DownloadDirectory.parent(of: files)
        let filesDescriptor = open(files, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard filesDescriptor >= 0 else { return "cannot open \(files): \(String(cString: strerror(errno)))" }
        defer { close(filesDescriptor) }
        var info = stat()
        if fstatat(filesDescriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else { return "it is no longer a regular file" }
            guard unlinkat(filesDescriptor, name, 0) == 0 else {
                return "cannot delete it: \(String(cString: strerror(errno)))"
            }
        }
        let infos = open(trash + "/info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard infos >= 0 else { return nil }
        defer { close(infos) }
        unlinkat(infos, name + ".trashinfo", 0)
        return nil
    }

    /// Whether `trash`, its `files` and its `info` exist as directories of the user's own that nobody else may
    /// write; nothing is created.
    private static func isOwnedTrash(_ trash: String) -> Bool {
        [trash, trash + "/files", trash + "/info"].allSatisfy { directory in
            var info = stat()
            return lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
                && info.st_mode & (S_IWGRP | S_IWOTH) == 0
        }
    }

    private static func ownFiles(in trash: String, relativeTo top: String, from directory: String) -> [OwnFile] {
        let infos = open(trash + "/info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard infos >= 0 else { return [] }
        defer { close(infos) }
        let files = open(trash + "/files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard files >= 0 else { return [] }
        defer { close(files) }
        let listing = dup(infos)
        guard listing >= 0, let stream = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return []
        }
        defer { closedir(stream) }
        var found: [OwnFile] = []
        while let entry = readdir(stream) {
            let infoName = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard infoName.hasSuffix(".trashinfo"), let text = readInfo(infoName, in: infos),
                let original = ownOriginal(info: text, top: top),
                DownloadDirectory.isInside(DownloadDirectory.parent(of: original), root: directory)
            else { continue }
            let name = String(infoName.dropLast(".trashinfo".count))
            var file = stat()
            var written = stat()
            guard fstatat(files, name, &file, AT_SYMLINK_NOFOLLOW) == 0, file.st_mode & S_IFMT == S_IFREG,
                fstatat(infos, infoName, &written, AT_SYMLINK_NOFOLLOW) == 0
            else { continue }
            found.append(
                OwnFile(
                    path: "\(trash)/files/\(name)",
                    size: Int64(file.st_size),
                    trashedAt: Int64(written.st_mtim.tv_sec).saturatingMultiply(1000)
                        .saturatingAdd(Int64(written.st_mtim.tv_nsec / 1_000_000)),
                    original: original,
                    episode: ownEpisode(info: text)
                )
            )
        }
        return found
    }

    /// Where the file an info file describes came from, when singlecast wrote the info file; `nil` for another
    /// trasher's, or one whose `Path` cannot be read. A relative `Path` is relative to `top`, the file system's top
    /// (the specification's rule for a file system's own trash).
    static func ownOriginal(info text: String, top: String) -> String? {
        let lines = text.split(separator: "\n")
        guard lines.contains(where: { $0 == marker }),
            let recorded = lines.first(where: { $0.hasPrefix("Path=") })?.dropFirst("Path=".count),
            let decoded = percentDecoded(String(recorded)), !decoded.isEmpty
        else { return nil }
        let original = decoded.hasPrefix("/") ? decoded : (top == "/" ? "" : top) + "/" + decoded
        // `..` would let an info file name a file outside the directory it claims to be inside.
        guard !DownloadDirectory.components(original).contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        return original
    }

    /// The episode singlecast recorded in its info file, if any.
    static func ownEpisode(info text: String) -> Int64? {
        text.split(separator: "\n").first { $0.hasPrefix(episodeKey) }
            .flatMap { OutsideNumber.decimal($0.dropFirst(episodeKey.count)) }
            .flatMap { $0 > 0 ? $0 : nil }
    }

    private static func readInfo(_ name: String, in infos: Int32) -> String? {
        let descriptor = openat(infos, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }

    /// Reads back ``percentEncoded(_:)``; `nil` for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        func hexValue(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case .some(let byte) where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte): byte - UInt8(ascii: "0")
            case .some(let byte) where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte):
                byte - UInt8(ascii: "A") + 10
            case .some(let byte) where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte):
                byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = hexValue(iterator.next()), let low = hexValue(iterator.next()) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
