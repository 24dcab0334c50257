import CCurl
import Foundation
import SinglecastProtocol
import SinglecastStore

/// What a request handler may do to the connection it arrived on.
package protocol ConnectionControl: Sendable {
    /// Starts (or changes) the events this connection receives.
    func watch(_ topics: Set<EventTopic>)
}

/// Maps each JSON-RPC method to its handler and every failure to a JSON-RPC error.
package struct Router: Sendable {
    let context: DaemonContext

    package init(context: DaemonContext) {
        self.context = context
    }

    /// Answers one request line.
    ///
    /// - Returns: the response line, or `nil` for a notification (a request without `id`), which JSON-RPC
    ///   never answers.
    package func respond(to line: [UInt8], connection: some ConnectionControl) async -> Data? {
        let request: RPCRequest
        switch RPCRequest.parse(line: line) {
        case .success(let parsed): request = parsed
        case .failure(let response):
            context.countRequest()
            return WireCoding.errorLine(response)
        }
        let outcome: Result<JSONValue, RPCError>
        do {
            outcome = .success(try await handle(request, connection: connection))
        } catch let error as RPCError {
            outcome = .failure(error)
        } catch {
            context.logger.error("\(request.method) failed: \(error)")
            outcome = .failure(.internalError(String(describing: error)))
        }
        context.countRequest()
        guard let id = request.id else { return nil }
        switch outcome {
        case .success(let result):
            do {
                return try WireCoding.resultLine(id: id, result: result)
            } catch {
                return WireCoding.errorLine(RPCErrorResponse(id: id, error: .internalError("cannot encode the result")))
            }
        case .failure(let error):
            return WireCoding.errorLine(RPCErrorResponse(id: id, error: error))
        }
    }

    private func handle(_ request: RPCRequest, connection: some ConnectionControl) async throws -> JSONValue {
        guard let method = Method(rawValue: request.method) else {
            let suggestion = closestMatch(to: request.method, among: Method.allCases.map(\.rawValue))
            throw RPCError.methodNotFound(request.method, suggestion: suggestion)
        }
        switch method {
        case .ping:
            try expectNoParams(request)
            return try WireCoding.value(of: PingResult())
        case .version:
            try expectNoParams(request)
            return try WireCoding.value(of: versionResult())
        case .status:
            try expectNoParams(request)
            return try WireCoding.value(of: await context.status())
        case .watch:
            let topics = try watchTopics(request.params)
            connection.watch(topics)
            return try WireCoding.value(of: WatchResult(topics: topics.sorted { $0.rawValue < $1.rawValue }))
        case .unwatch:
            try expectNoParams(request)
            connection.watch([])
            return try WireCoding.value(of: WatchResult(topics: []))
        default:
            throw RPCError.methodNotFound(request.method)
        }
    }

    private func versionResult() -> VersionResult {
        VersionResult(
            daemon: SinglecastVersion.current,
            protocolVersion: ProtocolVersion.current,
            sqlite: Store.sqliteVersion,
            libcurl: String(cString: ccurl_runtime_version())
        )
    }

    /// Methods without parameters accept a missing, empty-object or empty-array `params`.
    private func expectNoParams(_ request: RPCRequest) throws {
        switch request.params {
        case nil, .object([:])?, .array([])?: return
        case .object(let fields)?:
            let names = fields.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw RPCError.invalidParams("'\(request.method)' takes no parameters, got \(names)")
        default:
            throw RPCError.invalidParams("'\(request.method)' takes no parameters")
        }
    }

    private func watchTopics(_ params: JSONValue?) throws -> Set<EventTopic> {
        let allTopics = Set(EventTopic.allCases)
        let known = EventTopic.allCases.map(\.rawValue).joined(separator: ", ")
        guard let params else { return allTopics }
        guard case .object(let fields) = params else {
            throw RPCError.invalidParams(
                "'watch' takes an object such as {\"topics\":[\"daemon\"]}",
                parameter: "params"
            )
        }
        if let unknown = fields.keys.first(where: { $0 != "topics" }) {
            throw RPCError.invalidParams("unknown parameter '\(unknown)'; 'watch' takes 'topics'", parameter: unknown)
        }
        guard let rawTopics = fields["topics"], rawTopics != .null else { return allTopics }
        guard case .array(let items) = rawTopics else {
            throw RPCError.invalidParams(
                "'topics' must be an array of strings, not \(rawTopics.typeName)",
                parameter: "topics"
            )
        }
        var topics: Set<EventTopic> = []
        for item in items {
            guard case .string(let name) = item else {
                throw RPCError.invalidParams("'topics' must hold strings, found \(item.typeName)", parameter: "topics")
            }
            guard let topic = EventTopic(rawValue: name) else {
                throw RPCError.invalidParams("unknown topic '\(name)'; known topics: \(known)", parameter: "topics")
            }
            topics.insert(topic)
        }
        return topics.isEmpty ? allTopics : topics
    }
}
