@testable import SinglecastDaemon

/// What a download was announced as (enclosure type, Content-Type, URL, file name: all from the network) against
/// what libmagic detected. Fields are separated by newlines.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzMediaCheck(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    var fields = text.split(separator: "\n", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
    while fields.count < 5 { fields.append("") }
    let announcement = MediaCheck.Announcement(
        enclosureType: fields[0].isEmpty ? nil : fields[0],
        contentType: fields[1].isEmpty ? nil : fields[1],
        url: fields[2],
        fileName: fields[3]
    )
    // A type read on its bytes must be what the reading of any text makes of it.
    for type in fields[0...1] {
        precondition(
            MediaCheck.Announcement.normalized(type) == MediaCheck.Announcement.normalizedText(type),
            "MediaCheck normalized \(type) otherwise on its bytes"
        )
    }
    _ = announcement.isMedia
    _ = MediaCheck.verdict(announcement, detected: fields[4])
    _ = MediaCheck.describe(fields[4])
    return 0
}
