import CPosix
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The freedesktop.org Trash (the XDG trash specification 1.0): a file moved here can be restored from any file
/// manager, which reads where it came from in `info/NAME.trashinfo`.
///
/// A file goes to the home trash (`$XDG_DATA_HOME/Trash`) when it is on the same file system; otherwise to the
/// trash at the top of its own file system (`$topdir/.Trash/$uid` when an administrator made `.Trash` for
/// everyone, else `$topdir/.Trash-$uid`), since a trash on another file system would mean copying it.
package struct Trash: Sendable, Hashable {
    /// `$XDG_DATA_HOME/Trash`.
    package var home: String

    package init(home: String) { self.home = home }

    /// The home trash of an environment: `$XDG_DATA_HOME/Trash`, else `~/.local/share/Trash`.
    package init(environment: [String: String], home: String) {
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        self.init(home: dataHome + "/Trash")
    }

    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        package var path: String
        package var message: String

        package var description: String { "cannot move \(path) to the Trash: \(message)" }
    }

    /// The key singlecast adds to its info files: the specification has readers ignore other keys, and it tells
    /// singlecast's own info files from those of a trasher that is between its info file and its move.
    static let marker = "X-Singlecast-Trashed=true"
    /// The key naming the episode whose file it was, so that `trash restore` can make it downloaded again.
    static let episodeKey = "X-Singlecast-Episode="

    /// Moves the file at `path` (absolute) into the trash; its directory is opened as given.
    ///
    /// - Returns: Where the file now is.
    @discardableResult
    package func trash(_ path: String, now: Int64, episode: Int64? = nil) throws(Failure) -> String {
        let source = open(DownloadDirectory.parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard source >= 0 else {
            throw Failure(path: path, message: "cannot open its directory: \(String(cString: strerror(errno)))")
        }
        defer { close(source) }
        return try trash(DownloadDirectory.baseName(path), in: source, path: path, now: now, episode: episode)
    }

    /// Moves `name` in the directory `source` (a descriptor), whose absolute path is `path`, into the trash; a link
    /// there moves as the link.
    ///
    /// - Returns: Where the file now is.
    package func trash(
        _ name: String,
        in source: Int32,
        path: String,
        now: Int64,
        episode: Int64? = nil
    ) throws(Failure) -> String {
        func fail(_ what: String, _ code: Int32 = errno) -> Failure {
            Failure(path: path, message: "\(what): \(String(cString: strerror(code)))")
        }
        var file = stat()
        guard fstatat(source, name, &file, AT_SYMLINK_NOFOLLOW) == 0 else { throw fail("cannot read it") }
        let (directory, infoPath) = try self.directory(for: path, device: file.st_dev)
        let files = open(directory + "/files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard files >= 0 else { throw fail("cannot open \(directory)/files") }
        defer { close(files) }
        let infos = open(directory + "/info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard infos >= 0 else { throw fail("cannot open \(directory)/info") }
        defer { close(infos) }
        Self.sweepOrphans(directory, files: files, infos: infos)
        let base = DownloadDirectory.baseName(path)
        // The info file is created first and exclusively: it claims the name, as the specification asks, so two
        // trashers never pick the same one. The move never replaces a file: one in `files` without an info file
        // (another program's, or left by a crash) keeps the name taken.
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? base : Self.numbered(base, attempt)
            let info = candidate + ".trashinfo"
            let descriptor = openat(infos, info, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw fail("cannot write \(directory)/info/\(info)")
            }
            let text =
                "[Trash Info]\nPath=\(Self.percentEncoded(infoPath))\nDeletionDate=\(Self.localDate(now))\n\(Self.marker)\n"
                + (episode.map { "\(Self.episodeKey)\($0)\n" } ?? "")
            let written = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            // The info file reaches the disk before the move: a crash never leaves a file in the Trash that no file
            // manager can restore.
            var writeError: Int32 = 0
            if written != text.utf8.count {
                writeError = written < 0 ? errno : EIO
            } else if fsync(descriptor) != 0 {
                writeError = errno
            }
            close(descriptor)
            guard writeError == 0 else {
                unlinkat(infos, info, 0)
                throw fail("cannot write \(directory)/info/\(info)", writeError)
            }
            _ = fsync(infos)
            if cposix_renameat_noreplace(source, name, files, candidate) != 0 {
                let renameError = errno
                unlinkat(infos, info, 0)
                if renameError == EEXIST { continue }
                throw fail("cannot move it to \(directory)/files/\(candidate)", renameError)
            }
            _ = fsync(files)
            _ = fsync(source)
            return "\(directory)/files/\(candidate)"
        }
        throw Failure(path: path, message: "a thousand files of that name are in the Trash already")
    }

    /// Trash directories already swept in this process: an orphan comes only from a process that died between its
    /// info file and its move.
    private static let swept = Mutex<Set<String>>([])

    /// Removes singlecast's info files whose file never reached `files/` (the daemon died between the two), once per
    /// trash directory and process; another trasher's info files are left alone.
    static func sweepOrphans(_ directory: String, files: Int32, infos: Int32) {
        guard swept.withLock({ $0.insert(directory).inserted }) else { return }
        let listing = dup(infos)
        guard listing >= 0, let stream = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return
        }
        defer { closedir(stream) }
        var orphans: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".trashinfo") else { continue }
            var info = stat()
            guard fstatat(files, String(name.dropLast(".trashinfo".count)), &info, AT_SYMLINK_NOFOLLOW) != 0,
                errno == ENOENT
            else { continue }
            orphans.append(name)
        }
        for name in orphans where isOurs(name, in: infos) { unlinkat(infos, name, 0) }
    }

    private static func isOurs(_ infoName: String, in infos: Int32) -> Bool {
        let fd = openat(infos, infoName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").contains { $0 == marker }
    }

    /// The trash directory for a file on `device`, and the path its info file records (absolute for the home
    /// trash, relative to the top directory for a file system's own).
    private func directory(for path: String, device: dev_t) throws(Failure) -> (String, String) {
        // The home trash is made when it is missing, with $XDG_DATA_HOME itself if need be. A file on its file system
        // goes there or nowhere: the specification has a file system's own trash only for other file systems.
        Self.makeParents(of: home)
        if Self.device(of: Self.existingAncestor(of: home)) == device {
            if let problem = Self.usable(home) {
                throw Failure(path: path, message: "the home trash \(home) cannot be used: \(problem)")
            }
            return (home, path)
        }
        let top = Self.topDirectory(of: path, device: device)
        let uid = getuid()
        let relative = DownloadDirectory.relative(path, below: top) ?? path
        let shared = (top == "/" ? "" : top) + "/.Trash"
        var sharedInfo = stat()
        // The specification's checks for an administrator's `.Trash`: a directory, not a link, sticky.
        if lstat(shared, &sharedInfo) == 0, sharedInfo.st_mode & S_IFMT == S_IFDIR, sharedInfo.st_mode & S_ISVTX != 0,
            Self.usable("\(shared)/\(uid)") == nil
        {
            return ("\(shared)/\(uid)", relative)
        }
        let own = (top == "/" ? "" : top) + "/.Trash-\(uid)"
        if let problem = Self.usable(own) {
            throw Failure(path: path, message: "no Trash on its file system can be used (\(own): \(problem))")
        }
        return (own, relative)
    }

    /// Makes `trash`, `trash/files` and `trash/info` (mode 0700) as needed, and checks them as gio does: each a
    /// directory, not a link, the user's own, and writable by nobody else (anyone who could write there could swap
    /// a trashed file or plant a link). `$topdir/.Trash/$uid` must be so too, whatever its sticky parent.
    ///
    /// - Returns: `nil` when the trash can be used, else why not.
    static func usable(_ trash: String) -> String? {
        for directory in [trash, trash + "/files", trash + "/info"] {
            if mkdir(directory, 0o700) != 0, errno != EEXIST {
                return "cannot create \(directory): \(String(cString: strerror(errno)))"
            }
            var info = stat()
            guard lstat(directory, &info) == 0 else {
                return "cannot read \(directory): \(String(cString: strerror(errno)))"
            }
            guard info.st_mode & S_IFMT == S_IFDIR else { return "\(directory) is not a directory" }
            guard info.st_uid == getuid() else {
                return "\(directory) belongs to user \(info.st_uid), not to \(getuid())"
            }
            guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else { return "\(directory) is writable by others" }
        }
        return nil
    }

    /// `path` itself when it exists, else its nearest existing parent.
    private static func existingAncestor(of path: String) -> String {
        var path = path
        while path != "/", device(of: path) == nil { path = DownloadDirectory.parent(of: path) }
        return path
    }

    private static func makeParents(of directory: String) {
        var partial = ""
        for part in DownloadDirectory.components(DownloadDirectory.parent(of: directory)) {
            partial += "/" + part
            mkdir(partial, 0o700)
        }
    }

    private static func device(of path: String) -> dev_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_dev : nil
    }

    /// The highest directory above `path` still on `device`: where its file system is mounted.
    static func topDirectory(of path: String, device: dev_t) -> String {
        var top = DownloadDirectory.parent(of: path)
        while top != "/" {
            let above = DownloadDirectory.parent(of: top)
            guard self.device(of: above) == device else { break }
            top = above
        }
        return top
    }

    /// `talk.mp3` → `talk.2.mp3`; the extension stays last, so the restored name still opens with its player.
    private static func numbered(_ name: String, _ number: Int) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "\(name).\(number)" }
        return "\(name[..<dot]).\(number)\(name[dot...])"
    }

    /// The `Path` key's value: the path as a URL path, every byte but unreserved characters and `/` escaped.
    static func percentEncoded(_ path: String) -> String {
        var encoded = ""
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%"
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return encoded
    }

    /// `DeletionDate`: local time, `YYYY-MM-DDThh:mm:ss`, as the specification asks.
    static func localDate(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
