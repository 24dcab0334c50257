import SinglecastProtocol

/// The client's fast reader of episode lists (`episodes`, `inbox`: JSONByteReader) on any bytes a daemon (or
/// something posing as one) sends. What it reads must write back (JSONByteWriter) and read again as the same value:
/// the two sides of the wire agree.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzByteJSON(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    roundTrip(EpisodesResult.self, bytes)
    roundTrip(InboxResult.self, bytes)
    roundTrip(EpisodeInfo.self, bytes)
    return 0
}

private func roundTrip<T: JSONByteReadable & JSONByteWritable & Equatable>(
    _ type: T.Type,
    _ bytes: UnsafeRawBufferPointer
) {
    guard let value = try? JSONByteReader.decode(type, from: bytes) else { return }
    var writer = JSONByteWriter()
    do {
        try value.write(to: &writer)
        let again = try JSONByteReader.decode(type, from: writer.bytes)
        precondition(again == value, "\(type) changed on its way through the writer and back")
    } catch {
        fatalError("\(type) read, but what the writer made of it does not: \(error)")
    }
}
