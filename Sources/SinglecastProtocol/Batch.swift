/// One line a client sent: a single request, or a JSON-RPC 2.0 batch (an array of requests).
///
/// The daemon answers a batch with one line holding an array of the members' responses in request order;
/// notifications add nothing to it, and a batch of notifications only gets no line at all.
package enum RPCMessage: Sendable, Hashable {
    /// A line that is not a batch: the request, or the one error to answer.
    case single(Result<RPCRequest, RPCErrorResponse>)
    /// A batch with its members in order, each parsed on its own: a bad member gets an error entry and spoils
    /// nothing else.
    case batch([Result<RPCRequest, RPCErrorResponse>])

    /// Batches longer than this are refused whole. A batch is carried out one request after another on one
    /// connection, so the cap bounds how long one line can keep that connection (and the queue it commands) busy.
    package static let maximumBatchSize = 1000

    /// Parses one line of the control protocol.
    ///
    /// Invalid JSON, an empty batch `[]` and a batch over ``maximumBatchSize`` are each answered with one
    /// error object, not an array, as JSON-RPC 2.0 section 6 asks.
    package static func parse(line: some Collection<UInt8>) -> RPCMessage {
        let value: JSONValue
        switch RPCRequest.decode(line: line) {
        case .success(let decoded): value = decoded
        case .failure(let response): return .single(.failure(response))
        }
        guard case .array(let members) = value else { return .single(RPCRequest.parse(value: value)) }
        guard !members.isEmpty else {
            return refused("an empty batch holds no requests; send at least one request object in the array")
        }
        guard members.count <= maximumBatchSize else {
            return refused(
                "a batch may hold at most \(maximumBatchSize) requests and this one holds \(members.count); "
                    + "split it into smaller batches"
            )
        }
        return .batch(members.map(RPCRequest.parse(value:)))
    }

    private static func refused(_ reason: String) -> RPCMessage {
        .single(.failure(RPCErrorResponse(id: .null, error: .invalidRequest(reason))))
    }
}
