import SinglecastProtocol

/// Bytes on the control socket: the daemon frames them into lines (bounded) and parses each as a request or a
/// batch; the client parses the lines it receives as responses and events.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzJSONRPC(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    var framer = LineFramer(maximumLineLength: 4096)
    // Chunks of varying size, as reads return them.
    var position = 0
    var events: [LineFramer.Event] = []
    while position < bytes.count {
        let size = Int(bytes[position] % 61) + 1
        events += framer.append(bytes[position..<min(bytes.count, position + size)])
        position += size
    }
    if let last = framer.finish() { events.append(last) }
    for event in events {
        guard case .line(let line) = event else { continue }
        _ = RPCMessage.parse(line: line)
        _ = try? RPCIncoming.parse(line: line)
    }
    // The whole input as one line too: framing must not be what keeps a bad line away from the parsers.
    _ = RPCMessage.parse(line: bytes)
    _ = try? RPCIncoming.parse(line: bytes)
    return 0
}
