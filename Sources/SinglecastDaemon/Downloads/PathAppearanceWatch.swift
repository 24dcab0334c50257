import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Waits for a file to appear without polling: inotify on the nearest directory of its path that exists.
///
/// The metered-network watch uses it for the system bus socket, so that a daemon on a machine without a system bus
/// (a container, a server without D-Bus) never wakes for it, and connects the moment the bus starts. One watch
/// lives for one wait: arm it *before* looking for the file, so that a file appearing in between is not missed.
final class PathAppearanceWatch {
    struct Problem: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Where to watch for `path`: its nearest existing ancestor directory, and the name below it on the way to
    /// `path` (the file itself, or a directory still missing). `nil` for a relative path or when nothing exists.
    struct Target: Equatable {
        var directory: String
        var name: String
    }

    static func target(for path: String, isDirectory: (String) -> Bool) -> Target? {
        guard path.hasPrefix("/") else { return nil }
        var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !components.isEmpty else { return nil }
        var name = components.removeLast()
        while true {
            let directory = "/" + components.joined(separator: "/")
            if isDirectory(directory) { return Target(directory: directory, name: name) }
            guard let parent = components.popLast() else { return nil }
            name = parent
        }
    }

    /// Whether a batch of inotify events (the bytes one `read` returned) mentions `name` being created or moved
    /// in, or says the watched directory itself went (then the caller looks again, one level up).
    static func mentions(_ name: String, in events: UnsafeRawBufferPointer) -> Bool {
        let headerSize = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + headerSize <= events.count {
            let mask = events.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(events.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard length <= events.count - nameStart else { return true }  // cannot be: look again rather than miss it
            if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW) != 0 { return true }
            let bytes = UnsafeRawBufferPointer(rebasing: events[nameStart..<nameStart + length])
            if String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) == name { return true }
            offset = nameStart + length
        }
        return false
    }

    let path: String
    let target: Target
    private let fd: Int32
    private let reactor: Reactor
    private var closed = false

    init(path: String, reactor: Reactor) throws(Problem) {
        guard
            let target = Self.target(
                for: path,
                isDirectory: { directory in
                    var status = stat()
                    return stat(directory, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
                }
            )
        else { throw Problem(message: "no directory on the way to \(path) exists") }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Problem(message: "inotify_init1 failed: \(String(cString: strerror(errno)))") }
        let events = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        guard inotify_add_watch(fd, target.directory, events) >= 0 else {
            let problem = Problem(message: "cannot watch \(target.directory): \(String(cString: strerror(errno)))")
            Glibc.close(fd)
            throw problem
        }
        self.path = path
        self.target = target
        self.fd = fd
        self.reactor = reactor
    }

    deinit { close() }

    /// Whether `path` exists now.
    var appeared: Bool { access(path, F_OK) == 0 }

    /// Returns once something on the way to `path` changed: the awaited name appeared in the watched directory,
    /// or that directory went away. Make a new watch and look again after it.
    func changed() async throws {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            try await reactor.wait(for: .readable, on: fd)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN { break }
                    throw Problem(message: "reading inotify events failed: \(String(cString: strerror(errno)))")
                }
                let mentioned = buffer.withUnsafeBytes {
                    Self.mentions(target.name, in: UnsafeRawBufferPointer(rebasing: $0[..<count]))
                }
                if mentioned { return }
            }
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        reactor.deregister(fd)
        Glibc.close(fd)
    }
}

@available(*, unavailable)
extension PathAppearanceWatch: Sendable {}
