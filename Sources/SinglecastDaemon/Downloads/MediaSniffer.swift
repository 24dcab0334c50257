internal import CMagic
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Why libmagic could not name a file's type.
package struct MagicError: Error, Equatable, Sendable {
    package enum Code: Equatable, Sendable {
        /// `magic_open` failed (out of memory).
        case open
        /// The magic database could not be loaded: no check works until the daemon restarts.
        case load
        /// `magic_buffer` failed on these bytes.
        case buffer
        /// The partial file could not be read.
        case read
    }

    package var code: Code
    package var message: String
}

/// libmagic's MIME type for a completed download's first bytes: the only user of the `CMagic` module.
///
/// A check opens a cookie of its own: `magic_load` maps the compiled database (`magic.mgc`) and costs about 0.4 ms
/// here, against 2–8 ms for `magic_buffer` on 64 KiB, so one cookie per check is cheaper than owning and guarding a
/// shared one. Checks run one at a time on a queue of their own, never on the queue actor or the cooperative pool.
package enum MediaSniffer {
    /// How much of the file libmagic sees: enough for an ID3 tag with a cover image before the first MPEG frame.
    package static let headSize = 64 << 10

    /// libmagic's MIME type (`MAGIC_MIME_TYPE`) for the first ``headSize`` bytes of the open file `fd`.
    package static func mimeType(ofFile fd: Int32) async -> Result<String, MagicError> {
        await withCheckedContinuation { continuation in
            queue.async {
                var head = [UInt8](repeating: 0, count: headSize)
                let count = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
                guard count >= 0 else {
                    let message = "cannot read the file: \(String(cString: strerror(errno)))"
                    return continuation.resume(returning: .failure(MagicError(code: .read, message: message)))
                }
                continuation.resume(returning: Result { () throws(MagicError) in try mimeType(of: head[..<count]) })
            }
        }
    }

    /// libmagic's MIME type (`MAGIC_MIME_TYPE`) for `bytes`, synchronously.
    package static func mimeType(of bytes: ArraySlice<UInt8>) throws(MagicError) -> String {
        let cookie = try MagicCookie()
        // withUnsafeBytes rethrows untyped: the result comes out as a Result.
        return try bytes.withUnsafeBytes { buffer in Result { () throws(MagicError) in try cookie.mimeType(of: buffer) }
        }
        .get()
    }

    private static let queue = DispatchQueue(label: "singlecast.media-check")
}

/// One libmagic handle. Not thread-safe: libmagic keeps its state and the result it returns in the cookie, so it
/// lives and dies inside one check.
final class MagicCookie {
    private let raw: magic_t

    init() throws(MagicError) {
        // MIME type only; no peeking into compressed data, which would decompress what a server sent compressed.
        guard let raw = magic_open(MAGIC_MIME_TYPE | MAGIC_NO_CHECK_COMPRESS) else {
            throw MagicError(code: .open, message: "magic_open failed: \(String(cString: strerror(errno)))")
        }
        // NULL: the system's default database (Debian: /usr/lib/file/magic.mgc, from libmagic-mgc).
        guard magic_load(raw, nil) == 0 else {
            let reason = magic_error(raw).map { String(cString: $0) } ?? "no reason given"
            magic_close(raw)
            throw MagicError(code: .load, message: "cannot load libmagic's database: \(reason)")
        }
        self.raw = raw
    }

    deinit { magic_close(raw) }

    func mimeType(of bytes: UnsafeRawBufferPointer) throws(MagicError) -> String {
        // > The magic_buffer() function returns a textual description of the contents of the buffer argument with
        // > length bytes size.  (The string is owned by the cookie: copied at once.)
        guard let type = magic_buffer(raw, bytes.baseAddress, bytes.count) else {
            let reason = magic_error(raw).map { String(cString: $0) } ?? "no reason given"
            throw MagicError(code: .buffer, message: "libmagic could not read the bytes: \(reason)")
        }
        return String(cString: type)
    }
}

@available(*, unavailable)
extension MagicCookie: Sendable {}
