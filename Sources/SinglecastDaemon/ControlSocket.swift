import CSystemd
import FoundationEssentials

#if canImport(Glibc)
import Glibc
import SinglecastSupport
#endif

/// Why the control socket could not be set up; the message says what to do about it.
package struct ControlSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// The listening control socket: created by the daemon, or passed in by systemd socket activation.
package struct ControlSocket: Sendable {
    package var fd: Int32
    package var path: String
    /// Passed in by systemd: it owns the file, so the daemon never removes it.
    package var activated: Bool
    /// Device and inode of the socket file the daemon created, so shutdown removes only its own file.
    private var identity: (dev: UInt64, ino: UInt64)?

    /// Adopts the socket systemd passed (`sd_listen_fds(3)`), or returns `nil` when none was passed.
    ///
    /// - Parameter http: receives the sockets named `http` (`FileDescriptorName=http`), which are the HTTP
    ///   listener's; the control socket is the one other socket.
    package static func fromSystemd(http: inout [Int32]) throws(ControlSocketError) -> ControlSocket? {
        // unset_environment = 1: children (e.g. hooks) must not believe the descriptors are theirs.
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        if count < 0 {
            throw ControlSocketError(message: "sd_listen_fds failed: \(String(cString: strerror(-count)))")
        }
        var control: [Int32] = []
        for index in 0..<Int(count) {
            let fd = SD_LISTEN_FDS_START + Int32(index)
            let name = names?[index].map { String(cString: $0) }
            if name == "http" {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                http.append(fd)
            } else {
                control.append(fd)
            }
        }
        if let names {
            for index in 0..<Int(count) { free(names[index]) }
            free(names)
        }
        guard !control.isEmpty else { return nil }
        guard control.count == 1 else {
            throw ControlSocketError(
                message:
                    "systemd passed \(control.count) control sockets; singlecastd expects exactly one (ListenStream= in singlecastd.socket, and any HTTP one named with FileDescriptorName=http)"
            )
        }
        let fd = control[0]
        guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw ControlSocketError(
                message: "the socket systemd passed is not a listening Unix stream socket; check singlecastd.socket"
            )
        }
        do {
            try SocketIO.setNonBlocking(fd)
        } catch {
            throw ControlSocketError(message: "cannot use the socket passed by systemd: \(error)")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return ControlSocket(fd: fd, path: boundPath(of: fd) ?? "(socket passed by systemd)", activated: true)
    }

    /// Creates the socket at `path` with mode 0600 in a directory only this user can enter.
    ///
    /// - Parameters:
    ///   - privateDirectory: the directory is the daemon's own (the default location): it is created with mode
    ///     0700 and its mode is corrected if it is wider. A directory the user chose is only checked: it must
    ///     belong to this user and must not be writable by others, but its mode is left alone.
    /// - Throws: ``ControlSocketError`` when the directory is unsafe, another daemon listens at `path`, or
    ///   `path` is something other than a socket.
    package static func bind(
        path: String,
        privateDirectory: Bool,
        backlog: Int32 = 128,
        logger: Logger
    ) throws(ControlSocketError) -> ControlSocket {
        guard var address = unixSocketAddress(path) else {
            throw ControlSocketError(
                message:
                    "socket path '\(path)' is longer than the 107 bytes a Unix socket address allows; choose a shorter socket_path"
            )
        }
        let directory = parentDirectory(of: path)
        try prepareDirectory(directory, isPrivate: privateDirectory, logger: logger)
        try removeStaleSocket(at: path, logger: logger)

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ControlSocketError(message: "cannot create a Unix socket: \(SocketError("socket"))")
        }
        // The umask makes bind create the file as 0600 at once, leaving no window where others could connect.
        let previousMask = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindErrno = errno
        umask(previousMask)
        guard bound == 0 else {
            close(fd)
            throw ControlSocketError(message: "cannot bind '\(path)': \(SocketError("bind", errno: bindErrno))")
        }
        guard chmod(path, 0o600) == 0, listen(fd, backlog) == 0 else {
            let error = SocketError("listen")
            close(fd)
            unlink(path)
            throw ControlSocketError(message: "cannot listen on '\(path)': \(error)")
        }
        var info = stat()
        var socket = ControlSocket(fd: fd, path: path, activated: false)
        if lstat(path, &info) == 0 { socket.identity = (UInt64(info.st_dev), UInt64(info.st_ino)) }
        return socket
    }

    /// Closes the listener and, when the daemon created the file and it is still the same file, removes it.
    package func closeAndRemove() {
        close(fd)
        guard !activated, let identity else { return }
        var info = stat()
        if lstat(path, &info) == 0, UInt64(info.st_dev) == identity.dev, UInt64(info.st_ino) == identity.ino {
            unlink(path)
        }
    }

    private static func prepareDirectory(
        _ directory: String,
        isPrivate: Bool,
        logger: Logger
    ) throws(ControlSocketError) {
        var info = stat()
        if lstat(directory, &info) != 0 {
            guard errno == ENOENT else {
                throw ControlSocketError(message: "cannot inspect '\(directory)': \(String(cString: strerror(errno)))")
            }
            do {
                try FileManager.default.createDirectory(
                    atPath: parentDirectory(of: directory),
                    withIntermediateDirectories: true
                )
            } catch {
                throw ControlSocketError(message: "cannot create '\(directory)': \(describeFileError(error))")
            }
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST, lstat(directory, &info) == 0 else {
                throw ControlSocketError(message: "cannot create '\(directory)': \(String(cString: strerror(errno)))")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw ControlSocketError(
                message:
                    "'\(directory)' is not a directory (a symbolic link is refused too); remove it or choose another socket_path"
            )
        }
        guard info.st_uid == geteuid() else {
            throw ControlSocketError(
                message:
                    "'\(directory)' belongs to uid \(info.st_uid), not to uid \(geteuid()) that runs singlecastd; refusing to listen there. Remove it or choose another socket_path"
            )
        }
        let permissions = info.st_mode & 0o777
        if isPrivate, permissions != 0o700 {
            guard chmod(directory, 0o700) == 0 else {
                throw ControlSocketError(
                    message: "cannot restrict '\(directory)' to mode 0700: \(String(cString: strerror(errno)))"
                )
            }
            logger.warning("socket directory \(directory) had mode \(String(permissions, radix: 8)); changed to 700")
        } else if !isPrivate, permissions & 0o022 != 0 {
            throw ControlSocketError(
                message:
                    "'\(directory)' is writable by other users (mode \(String(permissions, radix: 8))), so another user could replace the socket; choose a private directory for socket_path"
            )
        }
    }

    /// A socket file left by a crashed daemon is removed; one that still answers belongs to a live daemon.
    private static func removeStaleSocket(at path: String, logger: Logger) throws(ControlSocketError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ControlSocketError(
                message:
                    "'\(path)' exists and is not a socket; singlecastd will not remove it. Move it away or choose another socket_path"
            )
        }
        if probeConnect(path) {
            throw ControlSocketError(
                message:
                    "another singlecastd is already listening on '\(path)'; stop it first ('singlecastctl status' shows its pid) or choose another socket_path"
            )
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ControlSocketError(
                message: "cannot remove stale socket '\(path)': \(String(cString: strerror(errno)))"
            )
        }
        logger.info("removed stale socket \(path) left by an earlier run")
    }

    /// `true` when something accepts connections at `path`.
    private static func probeConnect(_ path: String) -> Bool {
        guard var address = unixSocketAddress(path) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    private static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}
