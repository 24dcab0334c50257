#if canImport(Glibc)
import Glibc
#endif

/// Splits a byte stream into `\n`-terminated lines without ever buffering more than the line limit.
///
/// The control protocol is one JSON object per line. A peer that sends a line longer than the limit gets
/// ``Event/lineTooLong`` once; the caller answers with an error and closes, because the rest of that line
/// cannot be told apart from the next request.
package struct LineFramer: Sendable {
    package enum Event: Equatable, Sendable {
        /// A complete line without its terminator (a trailing `\r` is removed too).
        case line([UInt8])
        /// The current line exceeded ``maximumLineLength``; nothing more will be produced.
        case lineTooLong
    }

    package let maximumLineLength: Int
    private var pending: [UInt8] = []
    private var overflowed = false

    package init(maximumLineLength: Int) {
        precondition(maximumLineLength > 0)
        self.maximumLineLength = maximumLineLength
    }

    /// Bytes received but not yet part of a complete line.
    package var bufferedByteCount: Int { pending.count }

    /// Feeds received bytes and returns the events they complete, in order.
    package mutating func append(_ bytes: some Collection<UInt8>) -> [Event] {
        guard !overflowed else { return [] }
        // Contiguous bytes (what sockets deliver) are searched with memchr: a byte-by-byte loop over a generic
        // collection was a fifth of the client's time reading a 100,000-episode reply.
        if let events = bytes.withContiguousStorageIfAvailable({ appendContiguous($0) }) { return events }
        var events: [Event] = []
        var lineStart = bytes.startIndex
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index] == UInt8(ascii: "\n") {
                let piece = bytes[lineStart..<index]
                if pending.count + piece.count > maximumLineLength {
                    return overflow(events)
                }
                pending.append(contentsOf: piece)
                events.append(.line(takePending()))
                lineStart = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        let rest = bytes[lineStart..<bytes.endIndex]
        if pending.count + rest.count > maximumLineLength {
            return overflow(events)
        }
        pending.append(contentsOf: rest)
        return events
    }

    private mutating func appendContiguous(_ bytes: UnsafeBufferPointer<UInt8>) -> [Event] {
        var events: [Event] = []
        guard let base = bytes.baseAddress else { return events }
        var start = 0
        while start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) {
            let end = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            if pending.count + (end - start) > maximumLineLength { return overflow(events) }
            if pending.isEmpty {
                // A line within one read is copied once, to its exact size, and never passes through `pending`.
                var line = Array(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                events.append(.line(line))
            } else {
                appendPending(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                events.append(.line(takePending()))
            }
            start = end + 1
        }
        if pending.count + (bytes.count - start) > maximumLineLength { return overflow(events) }
        appendPending(UnsafeBufferPointer(rebasing: bytes[start...]))
        return events
    }

    /// Above this many pending bytes, room for a whole line is reserved at once: growing by doubling copied a 1 MB line
    /// five times, with the old and the new buffer in memory together each time.
    private static let reservedAbove = 64 * 1024

    private mutating func appendPending(_ bytes: UnsafeBufferPointer<UInt8>) {
        if pending.count + bytes.count > Self.reservedAbove && pending.capacity < maximumLineLength {
            pending.reserveCapacity(maximumLineLength)
        }
        pending.append(contentsOf: bytes)
    }

    /// Ends the stream: an unterminated last line is returned as a line, as a peer that wrote
    /// `{"jsonrpc":…}` without a newline and then shut down its side still deserves an answer.
    package mutating func finish() -> Event? {
        guard !overflowed, !pending.isEmpty else { return nil }
        let line = takePending()
        return line.allSatisfy(Self.isWhitespace) ? nil : .line(line)
    }

    private mutating func takePending() -> [UInt8] {
        // The buffer leaves with its line: kept, a long line's buffer would stay in memory for as long as the
        // connection lasts (up to max_request_bytes for each client).
        var line = pending
        pending = []
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    private mutating func overflow(_ events: [Event]) -> [Event] {
        overflowed = true
        pending = []
        return events + [.lineTooLong]
    }

    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
