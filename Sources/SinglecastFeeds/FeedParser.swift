import FoundationEssentials

/// Reads RSS and Atom podcast feeds into ``Feed``.
///
/// The parser is pure (no I/O) and uses its own byte-level XML reader: FoundationXML's `XMLParser`
/// stops at libxml2's 10 MB limit and creates a `String` per callback, while feeds of 50 MB exist.
/// Memory stays close to the input size plus the resulting ``Feed``.
package enum FeedParser {
    /// Bounds on what the parser accepts.
    package struct Limits: Sendable, Hashable {
        /// Largest document accepted, in bytes.
        package var maxBytes: Int
        /// Deepest element nesting accepted (feeds need about 6).
        package var maxDepth: Int

        package init(maxBytes: Int = 256 << 20, maxDepth: Int = 256) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
        }

        /// 256 MiB and 256 levels.
        package static let `default` = Limits()
    }

    /// Parses a feed.
    ///
    /// - Parameters:
    ///   - data: the document as fetched: UTF-8, UTF-16, ISO-8859-1/-15 or windows-1252.
    ///   - url: the URL it was fetched from, used to resolve relative links; `nil` leaves them relative.
    /// - Returns: the feed, with episodes in document order.
    /// - Throws: ``FeedError`` when the document is not XML, not a feed, declares DTD entities, or breaks
    ///   the default ``Limits``.
    package static func parse(_ data: Data, url: String?) throws(FeedError) -> Feed {
        try parse(data, url: url, limits: .default)
    }

    /// Parses a feed within the given limits; see ``parse(_:url:)``.
    package static func parse(_ data: Data, url: String?, limits: Limits) throws(FeedError) -> Feed {
        try read(data, limits: limits) { FeedBuilder(url: url?.trimmedOrNil) }
    }

    /// Parses a feed and hands its episodes to `consumer` in batches of at most `batchSize`, in document
    /// order, as the document is read: the episodes of a 100,000-item feed are never all in memory at once.
    ///
    /// - Returns: the feed without its episodes (``Feed/episodes`` is empty); the channel's fields are
    ///   complete only now, since a feed may give them after its items.
    /// - Throws: ``FeedError`` as ``parse(_:url:)``; batches handed out before the error stay handed out.
    package static func parse(
        _ data: Data,
        url: String?,
        limits: Limits = .default,
        batchSize: Int,
        episodes consumer: ([Episode]) -> Void
    ) throws(FeedError) -> Feed {
        let outcome = withoutActuallyEscaping(consumer) { consumer in
            Result { () throws(FeedError) -> Feed in
                // Episodes handed out cannot be taken back, so the document is not read twice: its line ends are
                // checked before the reader starts.
                try read(data, limits: limits, checkLineEndsFirst: true) {
                    FeedBuilder(url: url?.trimmedOrNil, batchSize: batchSize, consumer: consumer)
                }
            }
        }
        return try outcome.get()
    }

    /// Parses a feed like ``parse(_:url:limits:)`` and hands `readPast` each stretch of bytes the reader has
    /// gone past (a few MiB at a time), so that a caller that mapped a file can drop those pages and hold
    /// only the model, not the whole document as well.
    ///
    /// The stretches lie in `data`'s own bytes when the document is UTF-8; when it is not, or has a carriage
    /// return (the reader meets it, then reads a normalized copy from the start), they lie in a converted copy,
    /// after any it went past in `data`: the caller must check where each one is. The reader may
    /// read bytes it went past again (to match an end tag, to give an error's line): the caller may only
    /// make them cheaper to hold (`MADV_DONTNEED` on a private file mapping), never unreadable or different.
    package static func parse(
        _ data: Data,
        url: String?,
        limits: Limits = .default,
        readPast: (UnsafeBufferPointer<UInt8>) -> Void
    ) throws(FeedError) -> Feed {
        let outcome = withoutActuallyEscaping(readPast) { readPast in
            Result { () throws(FeedError) -> Feed in
                try read(data, limits: limits, readPast: readPast) { FeedBuilder(url: url?.trimmedOrNil) }
            }
        }
        return try outcome.get()
    }

    private static func read(
        _ data: Data,
        limits: Limits,
        checkLineEndsFirst: Bool = false,
        readPast: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil,
        builder makeBuilder: () -> FeedBuilder
    ) throws(FeedError) -> Feed {
        try read(
            data,
            limits: limits,
            checkLineEndsFirst: checkLineEndsFirst,
            readPast: readPast,
            handler: makeBuilder,
            finish: { (builder) throws(FeedError) in try builder.finish() }
        )
    }

    /// Reads the document with a handler from `makeHandler` and returns what `finish` makes of it.
    ///
    /// A UTF-8 document is read in place, its carriage returns looked for as the reader goes rather than in a pass
    /// of their own before it (on bench/feeds' 54 MB feed that pass was a twentieth of the parse: every byte came
    /// from memory twice). A document with one anywhere, even past an error, is read again from the start with
    /// its line ends normalized and a new handler, so the outcome is what it would be had they been normalized
    /// first. With `checkLineEndsFirst` they are: for a handler that hands results out as it reads.
    static func read<Handler: XMLHandler, Result>(
        _ data: Data,
        limits: Limits,
        checkLineEndsFirst: Bool = false,
        readPast: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil,
        handler makeHandler: () -> Handler,
        finish: (inout Handler) throws(FeedError) -> Result
    ) throws(FeedError) -> Result {
        guard data.count <= limits.maxBytes else { throw .tooLarge(data.count, limit: limits.maxBytes) }
        return try DocumentBytes.withUTF8(data, lineEndsCheckedByReader: !checkLineEndsFirst) {
            (bytes, lineEndsUnchecked) throws(FeedError) -> Result in
            /// `nil` when the reader met a carriage return (only while `checkingLineEnds`).
            func attempt(_ bytes: UnsafeBufferPointer<UInt8>, checkingLineEnds: Bool) throws(FeedError) -> Result? {
                try sniff(bytes)
                var handler = makeHandler()
                var reader = XMLReader(bytes, maxDepth: limits.maxDepth, checkingLineEnds: checkingLineEnds)
                reader.readPast = readPast
                try reader.run(&handler)
                if checkingLineEnds && reader.documentHasCarriageReturn() { return nil }
                return try finish(&handler)
            }
            if lineEndsUnchecked {
                do throws(FeedError) {
                    if let result = try attempt(bytes, checkingLineEnds: true) { return result }
                } catch {
                    guard DocumentBytes.hasCarriageReturn(bytes) else { throw error }
                }
                let normalized = DocumentBytes.normalizingLineEnds(bytes)
                return try normalized.withUnsafeBufferPointer { (normalized) throws(FeedError) -> Result in
                    guard let result = try attempt(normalized, checkingLineEnds: false) else {
                        fatalError("a reader that does not look for line ends stopped at one")
                    }
                    return result
                }
            }
            guard let result = try attempt(bytes, checkingLineEnds: false) else {
                fatalError("a reader that does not look for line ends stopped at one")
            }
            return result
        }
    }

    /// Rejects JSON and HTML with a clear message before the XML reader trips over them.
    static func sniff(_ bytes: UnsafeBufferPointer<UInt8>) throws(FeedError) {
        var index = 0
        while index < bytes.count && (bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x09) {
            index += 1
        }
        guard index < bytes.count else { throw .notXML("the document is empty", at: nil) }
        if bytes[index] == 0x7B || bytes[index] == 0x5B {
            throw .notAFeed(
                "The document is JSON, not an RSS or Atom feed. If it is a JSON Feed, ask the publisher for "
                    + "its RSS feed; singlecast reads RSS and Atom."
            )
        }
        guard bytes[index] == 0x3C else {
            throw .notXML("the document does not start with '<'", at: TextPosition(offset: index, in: bytes))
        }
        if let name = firstElementName(bytes, from: index), name.lowercased() == "html" {
            throw FeedBuilder.htmlError
        }
    }

    /// The name of the first element, skipping the prolog (declaration, comments, DOCTYPE).
    private static func firstElementName(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> String? {
        var index = start
        let limit = min(bytes.count, 64 * 1024)
        while index + 1 < limit {
            if bytes[index] == 0x3C {
                let next = bytes[index + 1]
                let isLetter = (next >= 0x41 && next <= 0x5A) || (next >= 0x61 && next <= 0x7A)
                if isLetter {
                    var end = index + 1
                    while end < limit && bytes[end] != 0x20 && bytes[end] != 0x3E && bytes[end] != 0x2F
                        && bytes[end] != 0x0A && bytes[end] != 0x09
                    {
                        end += 1
                    }
                    return String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                }
            }
            index += 1
        }
        return nil
    }
}
