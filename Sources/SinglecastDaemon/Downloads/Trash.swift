import CPosix
import SinglecastSupport

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

    /// Moves the file at `path` (absolute) into the trash.
    ///
    /// - Returns: Where the file now is.
    @discardableResult
    package func trash(_ path: String, now: Int64) throws(Failure) -> String {
        func fail(_ what: String, _ code: Int32 = errno) -> Failure {
            Failure(path: path, message: "\(what): \(String(cString: strerror(code)))")
        }
        var file = stat()
        guard lstat(path, &file) == 0 else { throw fail("cannot read it") }
        let (directory, infoPath) = try self.directory(for: path, device: file.st_dev)
        let name = Self.baseName(path)
        // The info file is created first and exclusively: it claims the name, as the specification asks, so two
        // trashers never pick the same one.
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? name : Self.numbered(name, attempt)
            let info = "\(directory)/info/\(candidate).trashinfo"
            let descriptor = open(info, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw fail("cannot write \(info)")
            }
            let text = "[Trash Info]\nPath=\(Self.percentEncoded(infoPath))\nDeletionDate=\(Self.localDate(now))\n"
            let written = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let writeError = errno
            close(descriptor)
            guard written == text.utf8.count else {
                unlink(info)
                throw fail("cannot write \(info)", writeError)
            }
            let target = "\(directory)/files/\(candidate)"
            guard rename(path, target) == 0 else {
                let renameError = errno
                unlink(info)
                throw fail("cannot move it to \(target)", renameError)
            }
            return target
        }
        throw Failure(path: path, message: "a thousand files of that name are in the Trash already")
    }

    /// The trash directory for a file on `device`, and the path its info file records (absolute for the home
    /// trash, relative to the top directory for a file system's own).
    private func directory(for path: String, device: dev_t) throws(Failure) -> (String, String) {
        // The home trash is made when it is missing, with $XDG_DATA_HOME itself if need be.
        Self.makeParents(of: home)
        if try Self.ensureDirectories(home, path: path), Self.device(of: home) == device {
            return (home, path)
        }
        let top = Self.topDirectory(of: path, device: device)
        let uid = getuid()
        let relative = String(path.dropFirst(top == "/" ? 1 : top.count + 1))
        let shared = (top == "/" ? "" : top) + "/.Trash"
        var sharedInfo = stat()
        // The specification's checks for an administrator's `.Trash`: a directory, not a link, sticky.
        if lstat(shared, &sharedInfo) == 0, sharedInfo.st_mode & S_IFMT == S_IFDIR, sharedInfo.st_mode & S_ISVTX != 0,
            try Self.ensureDirectories("\(shared)/\(uid)", path: path)
        {
            return ("\(shared)/\(uid)", relative)
        }
        let own = (top == "/" ? "" : top) + "/.Trash-\(uid)"
        guard try Self.ensureDirectories(own, path: path) else {
            throw Failure(path: path, message: "no Trash on its file system can be used (\(own))")
        }
        return (own, relative)
    }

    /// Makes `trash`, `trash/files` and `trash/info` (mode 0700) as needed; `false` when `trash` is unusable.
    private static func ensureDirectories(_ trash: String, path: String) throws(Failure) -> Bool {
        for directory in [trash, trash + "/files", trash + "/info"] {
            if mkdir(directory, 0o700) != 0, errno != EEXIST {
                if directory == trash { return false }
                throw Failure(path: path, message: "cannot create \(directory): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return false }
        }
        return true
    }

    private static func makeParents(of directory: String) {
        var partial = ""
        for part in parent(of: directory).split(separator: "/") {
            partial += "/" + part
            mkdir(partial, 0o700)
        }
    }

    private static func device(of path: String) -> dev_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_dev : nil
    }

    /// The highest directory above `path` still on `device`: where its file system is mounted.
    private static func topDirectory(of path: String, device: dev_t) -> String {
        var top = parent(of: path)
        while top != "/" {
            let above = parent(of: top)
            guard self.device(of: above) == device else { break }
            top = above
        }
        return top
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    private static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
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
