import FoundationEssentials

/// The version of the control protocol; raised when a method or event changes incompatibly.
package enum ProtocolVersion {
    package static let current = 1
}

/// The product version shared by the daemon and the client.
package enum SinglecastVersion {
    package static let current = "0.1.0"
}

/// A JSON-RPC 2.0 request or notification (a request without `id`).
package struct RPCRequest: Sendable, Hashable {
    /// `nil` for a notification, which gets no response.
    package var id: JSONValue?
    package var method: String
    /// `nil`, `.object` or `.array`.
    package var params: JSONValue?

    package init(id: JSONValue?, method: String, params: JSONValue? = nil) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// Parses one line of the control protocol that holds a single request (see ``RPCMessage`` for batches).
    ///
    /// - Returns: the request, or the error response to send back (with the request's `id` when it could be read).
    package static func parse(line: some Collection<UInt8>) -> Result<RPCRequest, RPCErrorResponse> {
        decode(line: line).flatMap(parse(value:))
    }

    /// Reads a line as JSON, checking UTF-8 and nesting first; the failure is the one Parse error to answer.
    ///
    /// The line is read where it lies: a copy for the UTF-8 check (a `String`) and another for the decoder (a `Data`)
    /// put three copies of a 1 MB line in memory at once, for each of 32 connections sending one.
    static func decode(line: some Collection<UInt8>) -> Result<JSONValue, RPCErrorResponse> {
        if let decoded = line.withContiguousStorageIfAvailable(decode(bytes:)) { return decoded }
        return Array(line).withUnsafeBufferPointer(decode(bytes:))
    }

    private static func decode(bytes: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, RPCErrorResponse> {
        guard (try? UTF8Span(validating: bytes.span)) != nil else {
            return .failure(RPCErrorResponse(id: .null, error: .parseError("the line is not valid UTF-8")))
        }
        if Self.nestingExceeds(bytes, limit: maximumNesting) {
            return .failure(
                RPCErrorResponse(
                    id: .null,
                    error: .parseError(
                        "the line nests arrays and objects more than \(maximumNesting) deep; requests need only a few levels"
                    )
                )
            )
        }
        do {
            // No copy: the `Data` only lends the line to the decoder and does not outlive this call.
            let data =
                bytes.baseAddress.map {
                    Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: $0), count: bytes.count, deallocator: .none)
                } ?? Data()
            return .success(try JSONDecoder().decode(JSONValue.self, from: data))
        } catch {
            return .failure(RPCErrorResponse(id: .null, error: .parseError("the line is not valid JSON")))
        }
    }

    /// Checks one request object: the whole line, or one member of a batch.
    static func parse(value: JSONValue) -> Result<RPCRequest, RPCErrorResponse> {
        guard case .object(let fields) = value else {
            let reason =
                if case .array = value {
                    "a batch (a JSON array) holds several requests, where one request object was expected"
                } else {
                    "a request must be a JSON object, not \(value.typeName == "object" ? "an" : "a") \(value.typeName)"
                }
            return .failure(RPCErrorResponse(id: .null, error: .invalidRequest(reason)))
        }
        var id: JSONValue? = nil
        if let rawID = fields["id"] {
            switch rawID {
            case .double(let number) where !number.isFinite:
                return .failure(RPCErrorResponse(id: .null, error: .invalidRequest("\"id\" must be a finite number")))
            case .double(let number) where number.magnitude >= 0x1p63:
                // Read as a Double, 99999999999999999999999 would be answered as 1e+23: another id. JSON-RPC wants the
                // very same id back, so a number the daemon cannot echo exactly is refused rather than changed.
                return .failure(
                    RPCErrorResponse(
                        id: .null,
                        error: .invalidRequest(
                            "a number \"id\" must lie between -2^63 and 2^63-1, or it would not come back unchanged; use a string"
                        )
                    )
                )
            case .string(let text) where text.utf8.count > RPCError.longestText && text.count > RPCError.longestText:
                // JSON-RPC wants the id back unchanged, so it cannot be cut as an error's texts are. Answers are
                // written outside the bound on long requests, and an id as long as a request line made each answer
                // that long.
                return .failure(
                    RPCErrorResponse(
                        id: .null,
                        error: .invalidRequest(
                            "a string \"id\" must be at most \(RPCError.longestText) characters, since the answer repeats it"
                        )
                    )
                )
            case .null, .integer, .double, .string: id = rawID
            default:
                return .failure(
                    RPCErrorResponse(
                        id: .null,
                        error: .invalidRequest("\"id\" must be a string, a number or null, not \(rawID.typeName)")
                    )
                )
            }
        }
        let replyID = id ?? .null
        guard fields["jsonrpc"] == .string("2.0") else {
            return .failure(RPCErrorResponse(id: replyID, error: .invalidRequest("\"jsonrpc\" must be \"2.0\"")))
        }
        guard case .string(let method) = fields["method"] else {
            return .failure(
                RPCErrorResponse(id: replyID, error: .invalidRequest("\"method\" must be a string naming a method"))
            )
        }
        let params = fields["params"]
        switch params {
        case nil, .object?, .array?: break
        case .some(let other):
            return .failure(
                RPCErrorResponse(
                    id: replyID,
                    error: .invalidRequest("\"params\" must be an object or an array, not \(other.typeName)")
                )
            )
        }
        return .success(RPCRequest(id: id, method: method, params: params))
    }

    /// Arrays and objects nested deeper than this are refused before decoding. No request needs more than a few
    /// levels, and decoding a ``JSONValue`` takes time that grows with about the cube of its depth: a 1 KB line
    /// nesting 500 arrays cost 4 s of CPU (debug build), so a client could stall the daemon with a few of them.
    package static let maximumNesting = 64

    /// Whether `bytes` open more than `limit` arrays or objects at once, counting outside strings only; one pass.
    static func nestingExceeds(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return false
    }

    /// Encodes the request as one protocol line, terminator included.
    package func encodedLine() throws -> Data {
        var object: [String: JSONValue] = ["jsonrpc": .string("2.0"), "method": .string(method)]
        if let id { object["id"] = id }
        if let params { object["params"] = params }
        return try WireCoding.line(for: JSONValue.object(object))
    }
}

/// A JSON-RPC error object with a stable numeric code and a stable machine-readable `data.reason`.
package struct RPCError: Error, Hashable, Sendable, Codable {
    package var code: Int
    package var message: String
    package var data: ErrorData?

    package struct ErrorData: Hashable, Sendable, Codable {
        /// Stable snake_case reason such as `unknown_method`; clients branch on this, not on `message`.
        package var reason: String
        /// Extra facts for the reason, e.g. the unknown method's name.
        package var details: [String: String]?

        package init(reason: String, details: [String: String]? = nil) {
            self.reason = reason
            self.details = details
        }
    }

    /// The most characters of a message, or of a detail, that an error carries; the last one is `…` when the text
    /// was longer.
    ///
    /// Errors repeat what the client sent (a method's or a parameter's name, a value it could not read). Repeated
    /// whole, a 900 KB method name came back twice in a 1.8 MB answer, which the daemon held until the client read
    /// it, outside the bound on long requests: 32 clients at once took it 52 MiB over its baseline.
    package static let longestText = 1000

    package init(code: Int, message: String, reason: String, details: [String: String]? = nil) {
        self.code = code
        self.message = Self.cut(message)
        self.data = ErrorData(reason: reason, details: details?.mapValues(Self.cut))
    }

    private static func cut(_ text: String) -> String {
        let head = text.prefix(longestText)
        return head.endIndex == text.endIndex ? text : String(head.dropLast()) + "…"
    }

    package var reason: String? { data?.reason }

    // Codes from the JSON-RPC 2.0 specification.
    package static let parseErrorCode = -32700
    package static let invalidRequestCode = -32600
    package static let methodNotFoundCode = -32601
    package static let invalidParamsCode = -32602
    package static let internalErrorCode = -32603
    // Implementation-defined server errors live in -32000 ... -32099.
    package static let requestTooLargeCode = -32000
    package static let permissionDeniedCode = -32001
    package static let tooManyClientsCode = -32002
    package static let shuttingDownCode = -32003

    package static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error: \(detail).", reason: "parse_error")
    }

    package static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid request: \(detail).", reason: "invalid_request")
    }

    package static func methodNotFound(_ method: String, suggestion: String? = nil) -> RPCError {
        var message = "Method not found: '\(method)'."
        if let suggestion { message += " Did you mean '\(suggestion)'?" }
        return RPCError(
            code: methodNotFoundCode,
            message: message,
            reason: "method_not_found",
            details: ["method": method]
        )
    }

    package static func invalidParams(_ detail: String, parameter: String? = nil) -> RPCError {
        RPCError(
            code: invalidParamsCode,
            message: "Invalid params: \(detail).",
            reason: "invalid_params",
            details: parameter.map { ["parameter": $0] }
        )
    }

    package static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "Internal error: \(detail).", reason: "internal_error")
    }

    package static func requestTooLarge(limit: Int) -> RPCError {
        RPCError(
            code: requestTooLargeCode,
            message: "Request too large: a line may hold at most \(limit) bytes; the connection will be closed.",
            reason: "request_too_large",
            details: ["limit": String(limit)]
        )
    }

    package static func permissionDenied(peerUID: UInt32, daemonUID: UInt32) -> RPCError {
        RPCError(
            code: permissionDeniedCode,
            message:
                "Permission denied: this singlecastd serves only uid \(daemonUID), and the client runs as uid \(peerUID).",
            reason: "permission_denied",
            details: ["peer_uid": String(peerUID)]
        )
    }

    package static func tooManyClients(limit: Int) -> RPCError {
        RPCError(
            code: tooManyClientsCode,
            message: "Too many clients: the daemon serves at most \(limit) connections at once; try again shortly.",
            reason: "too_many_clients",
            details: ["limit": String(limit)]
        )
    }

    package static let shuttingDown = RPCError(
        code: shuttingDownCode,
        message: "The daemon is shutting down and takes no new requests.",
        reason: "shutting_down"
    )
}

/// `{"jsonrpc":"2.0","id":…,"error":{…}}`
package struct RPCErrorResponse: Error, Hashable, Sendable {
    package var id: JSONValue
    package var error: RPCError

    package init(id: JSONValue, error: RPCError) {
        self.id = id
        self.error = error
    }
}

/// One message from the daemon: a response to a request, or a notification (an event).
package enum RPCIncoming: Sendable {
    case result(id: JSONValue, result: JSONValue)
    case error(id: JSONValue, error: RPCError)
    case notification(method: String, params: JSONValue?)

    /// Parses one line sent by the daemon.
    package static func parse(line: some Collection<UInt8>) throws -> RPCIncoming {
        let envelope = try JSONDecoder().decode(Envelope.self, from: Data(line))
        if let method = envelope.method {
            return .notification(method: method, params: envelope.params)
        }
        if let error = envelope.error {
            return .error(id: envelope.id ?? .null, error: error)
        }
        return .result(id: envelope.id ?? .null, result: envelope.result ?? .null)
    }

    private struct Envelope: Decodable {
        var id: JSONValue?
        var method: String?
        var params: JSONValue?
        var result: JSONValue?
        var error: RPCError?
    }
}

/// A JSON value already encoded the way ``WireCoding`` encodes (compact, sorted keys).
package struct EncodedJSON: Sendable, Hashable {
    package var data: Data

    package init(data: Data) { self.data = data }
}

/// The one place that turns values into protocol lines, so every message is encoded the same way.
package enum WireCoding {
    /// Encodes `value` as compact JSON with sorted keys followed by `\n`.
    package static func line(for value: some Encodable) throws -> Data {
        var data = try encoder().encode(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Re-reads a ``JSONValue`` (a result or params) as a typed value.
    package static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONDecoder().decode(type, from: encoder().encode(value))
    }

    /// Converts a typed value into a ``JSONValue``.
    package static func value(of encodable: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: encoder().encode(encodable))
    }

    /// `{"jsonrpc":"2.0","id":…,"result":…}` plus `\n`.
    package static func resultLine(id: JSONValue, result: some Encodable) throws -> Data {
        try line(for: ResultEnvelope(id: id, result: result))
    }

    /// Encodes a result once, for ``resultLine(id:encoded:)``.
    ///
    /// A result that writes itself (``JSONByteWritable``, such as a podcast's 100,000 episodes) writes the same bytes
    /// the encoder would, several times faster.
    package static func encoded(_ result: some Encodable) throws -> EncodedJSON {
        if let writable = result as? any JSONByteWritable {
            var writer = JSONByteWriter()
            try writable.write(to: &writer)
            return EncodedJSON(data: Data(writer.bytes))
        }
        return EncodedJSON(data: try encoder().encode(result))
    }

    /// The same line as ``resultLine(id:result:)``, around a result encoded beforehand.
    ///
    /// A daemon answer used to be encoded, decoded into a ``JSONValue`` and encoded again; for a list of a
    /// hundred downloads that round trip was most of the request's time.
    package static func resultLine(id: JSONValue, encoded result: EncodedJSON) throws -> Data {
        // The keys in the order `.sortedKeys` writes them: id, jsonrpc, result.
        var line = Data(#"{"id":"#.utf8)
        line.append(try encoder().encode(id))
        line.append(contentsOf: #","jsonrpc":"2.0","result":"#.utf8)
        line.append(result.data)
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    /// `{"jsonrpc":"2.0","id":…,"error":…}` plus `\n`.
    package static func errorLine(_ response: RPCErrorResponse) -> Data {
        // Encoding a struct of strings and integers cannot fail; fall back to a fixed line all the same.
        (try? line(for: ErrorEnvelope(id: response.id, error: response.error)))
            ?? Data(#"{"error":{"code":-32603,"message":"Internal error."},"id":null,"jsonrpc":"2.0"}"#.utf8 + [10])
    }

    /// The answer to a batch: the members' response lines in one array plus `\n`, or `nil` when there are none
    /// (a batch of notifications only), since JSON-RPC then sends nothing at all.
    package static func batchLine(_ responseLines: [Data]) -> Data? {
        guard !responseLines.isEmpty else { return nil }
        var line = Data("[".utf8)
        for (index, response) in responseLines.enumerated() {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            line.append(response.last == UInt8(ascii: "\n") ? response.dropLast() : response)
        }
        line.append(contentsOf: "]\n".utf8)
        return line
    }

    /// `{"jsonrpc":"2.0","method":…,"params":…}` plus `\n`; params that write themselves (``JSONByteWritable``, a
    /// download's events) skip the encoder, as ``encoded(_:)`` does for results.
    package static func notificationLine(method: String, params: some Encodable) throws -> Data {
        guard let writable = params as? any JSONByteWritable else {
            return try line(for: NotificationEnvelope(method: method, params: params))
        }
        return try notificationLine(method: method, writing: writable)
    }

    /// The same line for params known to write themselves, without looking them up as ``JSONByteWritable`` at run
    /// time: a download's events come here, three or more per download.
    package static func notificationLine(method: String, writing params: some JSONByteWritable) throws -> Data {
        // The keys in the order `.sortedKeys` writes them: jsonrpc, method, params.
        // A `download.*` event is 350–500 bytes: one buffer, copied once into its `Data`.
        var writer = JSONByteWriter(capacity: 1024)
        writer.beginObject()
        writer.member(NotificationKey.jsonrpc, "2.0")
        writer.member(NotificationKey.method, method)
        writer.key(NotificationKey.params)
        try params.write(to: &writer)
        writer.endObject()
        writer.newline()
        return Data(writer.bytes)
    }

    private enum NotificationKey: String, CodingKey { case jsonrpc, method, params }

    private struct ResultEnvelope<Result: Encodable>: Encodable {
        let jsonrpc = "2.0"
        var id: JSONValue
        var result: Result
    }

    private struct ErrorEnvelope: Encodable {
        let jsonrpc = "2.0"
        var id: JSONValue
        var error: RPCError
    }

    private struct NotificationEnvelope<Params: Encodable>: Encodable {
        let jsonrpc = "2.0"
        var method: String
        var params: Params
    }
}
