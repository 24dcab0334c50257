import FoundationEssentials

extension FeedTool {
    /// `--scan`: the XML reader over the document with a handler that keeps nothing, so that bench/feeds can put
    /// the reader's own cost beside libxml2's streaming reader and tell it apart from building the model.
    ///
    /// It does what every parse does before the builder sees a byte (the size limit, the conversion to UTF-8, the
    /// sniff for JSON and HTML, the well-formedness checks) and counts elements and character data.
    static func scan(_ data: Data, limits: FeedParser.Limits = .default) throws(FeedError) -> ScanCount {
        try FeedParser.read(data, limits: limits, handler: { ScanCount() }, finish: { $0 })
    }

    /// What `--scan` prints: elements, and bytes of character data and CDATA (entity references undecoded).
    struct ScanCount: XMLHandler {
        var elements = 0
        var textBytes = 0

        mutating func startElement(_ tag: StartTag) throws(FeedError) { elements += 1 }
        mutating func endElement(raw: UnsafeBufferPointer<UInt8>) throws(FeedError) {}
        mutating func text(_ raw: UnsafeBufferPointer<UInt8>) { textBytes += raw.count }
        mutating func cdata(_ content: UnsafeBufferPointer<UInt8>) { textBytes += content.count }
    }
}
