@testable import SinglecastDaemon

/// What a stranger's request to the web side decides before any file is opened: the `Range` and `If-Range` headers
/// against a file of some length, `If-None-Match` against an entity tag, and the request path as names.
///
/// The first 8 bytes are the file's length; the rest is lines: Range, If-Range, If-None-Match, the path.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzWebRequest(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    var length: UInt64 = 0
    for byte in bytes.prefix(8) { length = length << 8 | UInt64(byte) }
    // A file holds at most Int64.max bytes.
    length &= UInt64(Int64.max)
    var fields = bytes.dropFirst(8).split(separator: 0x0A, maxSplits: 3, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    while fields.count < 4 { fields.append("") }
    let etag = EntityTag(opaque: "abc")
    let lastModified = "Sat, 05 Dec 2026 10:00:00 GMT"
    let outcome = ByteRanges.decide(
        range: fields[0],
        ifRange: fields[1].isEmpty ? nil : fields[1],
        length: length,
        etag: etag,
        lastModified: lastModified
    )
    if case .partial(let offset, let part) = outcome {
        // What would be sent lies inside the file and is not empty.
        precondition(part > 0 && offset < length && part <= length - offset, "range outside the file")
        _ = ByteRanges.contentRange(offset: offset, length: part, of: length)
    }
    _ = EntityTag.noneMatch(fields[2], current: etag)
    if let tag = EntityTag(parsing: fields[2]) { precondition(EntityTag(parsing: tag.header) == tag) }
    let facts = FileAnswer.Facts(size: length, modified: 1_800_000_000, device: 1, inode: 2)
    _ = FileAnswer(
        isGet: true,
        headers: ["range": fields[0], "if-range": fields[1], "if-none-match": fields[2]],
        facts: facts,
        contentType: MediaType.of(name: fields[3], announced: fields[1])
    )
    if let segments = WebPath.segments(fields[3]) {
        precondition(
            !segments.contains { $0 == ".." || $0 == "." || $0.contains("/") || $0.isEmpty },
            "a climbing name"
        )
        _ = segments.first.flatMap { WebPath.id($0) }
    }
    return 0
}
