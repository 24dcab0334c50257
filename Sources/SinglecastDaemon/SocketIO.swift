import CPosix
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A socket-level failure with the system's explanation.
package struct SocketError: Error, Hashable, Sendable, CustomStringConvertible {
    package var call: String
    package var code: Int32

    package var description: String { "\(call) failed: \(String(cString: strerror(code)))" }

    package init(_ call: String, errno code: Int32 = errno) {
        self.call = call
        self.code = code
    }
}

/// Non-blocking socket I/O that suspends on the ``Reactor`` instead of blocking a thread.
package enum SocketIO {
    /// Reads up to `buffer.count` bytes; returns 0 at end of stream.
    package static func read(_ fd: Int32, into buffer: inout [UInt8], reactor: Reactor) async throws -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count >= 0 { return count }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try await reactor.wait(for: .readable, on: fd)
            case ECONNRESET: return 0  // the peer vanished: same as end of stream for a request/response protocol
            default: throw SocketError("recv")
            }
        }
    }

    /// Writes every byte of `data`, waiting for buffer space as long as the peer is slow to read.
    package static func writeAll(_ fd: Int32, _ data: Data, reactor: Reactor) async throws {
        var offset = 0
        while offset < data.count {
            // MSG_NOSIGNAL: a client that hung up must produce EPIPE here, not a SIGPIPE for the process.
            let written = data.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try await reactor.wait(for: .writable, on: fd)
            default: throw SocketError("send")
            }
        }
    }

    /// Writes what fits without waiting; used for a last error line to a client that is being turned away.
    package static func writeWithoutWaiting(_ fd: Int32, _ data: Data) {
        _ = data.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    /// Accepts one connection as a non-blocking, close-on-exec descriptor.
    ///
    /// - Parameter stopping: when it turns `true`, the pending wait ends with ``ReactorError``.
    package static func accept(
        _ listener: Int32,
        reactor: Reactor,
        stopping: @escaping @Sendable () -> Bool
    ) async throws -> Int32 {
        while true {
            let fd = cposix_accept(listener)
            if fd >= 0 { return fd }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: try await reactor.wait(for: .readable, on: listener, abandonIf: stopping)
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors or memory: back off instead of spinning; existing clients keep being served.
                try await Task.sleep(for: .milliseconds(100))
            default: throw SocketError("accept4")
            }
        }
    }

    /// Puts `fd` into non-blocking mode.
    package static func setNonBlocking(_ fd: Int32) throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw SocketError("fcntl") }
    }
}

/// Fills a `sockaddr_un` for `path`; `nil` when the path does not fit (108 bytes including the terminator).
package func unixSocketAddress(_ path: String) -> sockaddr_un? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return address
}
