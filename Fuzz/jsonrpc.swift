import SinglecastProtocol

/// Bytes on the control socket: the daemon frames them into lines (bounded) and parses each as a request or a
/// batch; the client parses the lines it receives as responses and events. Each line is also read as the event
/// and topic names a watcher sends (``checkEventNames(_:)``).
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
        checkEventNames(line)
    }
    // The whole input as one line too: framing must not be what keeps a bad line away from the parsers.
    _ = RPCMessage.parse(line: bytes)
    _ = try? RPCIncoming.parse(line: bytes)
    return 0
}

/// The names `watch` and `GET /events` take from a client (`topics`, `events`), here a line's comma-separated
/// halves: a selection is refused with a reason, or admits nothing but known events of its topics.
func checkEventNames(_ line: some Collection<UInt8>) {
    let names = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    let half = names.count / 2
    let selection: EventSelection
    do throws(EventSelection.Invalid) {
        selection = try EventSelection(topicNames: Array(names[..<half]), eventNames: Array(names[half...]))
    } catch {
        precondition(!error.message.isEmpty && (error.parameter == "topics" || error.parameter == "events"))
        return
    }
    for name in selection.events ?? [] {
        guard let topic = EventTopic(eventName: name) else { preconditionFailure("admitted unknown event \(name)") }
        precondition(selection.admits(topic, event: name), "\(name) chosen yet not admitted")
    }
}
