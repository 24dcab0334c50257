import CCurl
import CPosix
import FoundationEssentials
import SinglecastProtocol
import SinglecastStore

/// What a request handler may do to the connection it arrived on.
package protocol ConnectionControl: Sendable {
    /// Starts (or changes) the events this connection receives.
    func watch(_ selection: EventSelection)
}

/// Maps each JSON-RPC method to its handler and every failure to a JSON-RPC error.
package struct Router: Sendable {
    let context: DaemonContext

    package init(context: DaemonContext) {
        self.context = context
    }

    /// Answers one line: a request, or a batch of them.
    ///
    /// The members of a batch run in order, each after the previous one finished, although JSON-RPC would allow
    /// any order: queue commands depend on one another (`enqueue` then `move` or `pause` the new download), and
    /// a client that sends them together means them in the order written.
    ///
    /// - Returns: the response line, or `nil` for a notification (a request without `id`), which JSON-RPC
    ///   never answers, and for a batch of notifications only.
    package func respond(to line: [UInt8], connection: some ConnectionControl) async -> Data? {
        switch RPCMessage.parse(line: line) {
        case .single(let parsed):
            return await respond(to: parsed, connection: connection)
        case .batch(let members):
            var responses: [Data] = []
            for member in members {
                if let response = await respond(to: member, connection: connection) { responses.append(response) }
            }
            return WireCoding.batchLine(responses)
        }
    }

    /// Answers one request, or the error found while parsing it, with one response line.
    private func respond(
        to parsed: Result<RPCRequest, RPCErrorResponse>,
        connection: some ConnectionControl
    ) async -> Data? {
        let request: RPCRequest
        switch parsed {
        case .success(let parsed): request = parsed
        case .failure(let response):
            context.countRequest()
            return WireCoding.errorLine(response)
        }
        let outcome: Result<EncodedJSON, RPCError>
        do {
            outcome = .success(try await handle(request, connection: connection))
        } catch {
            if let mapped = RPCError(domain: error) {
                outcome = .failure(mapped)
            } else {
                context.logger.error("\(request.method) failed: \(error)")
                outcome = .failure(.internalError(String(describing: error)))
            }
        }
        context.countRequest()
        guard let id = request.id else { return nil }
        switch outcome {
        case .success(let result):
            do {
                return try WireCoding.resultLine(id: id, encoded: result)
            } catch {
                return WireCoding.errorLine(RPCErrorResponse(id: id, error: .internalError("cannot encode the result")))
            }
        case .failure(let error):
            return WireCoding.errorLine(RPCErrorResponse(id: id, error: error))
        }
    }

    private func handle(_ request: RPCRequest, connection: some ConnectionControl) async throws -> EncodedJSON {
        guard let method = Method(rawValue: request.method) else {
            let suggestion = closestMatch(to: request.method, among: Method.allCases.map(\.rawValue))
            throw RPCError.methodNotFound(request.method, suggestion: suggestion)
        }
        switch method {
        case .ping:
            try expectNoParams(request)
            return try WireCoding.encoded(PingResult())
        case .version:
            try expectNoParams(request)
            return try WireCoding.encoded(versionResult())
        case .status:
            try expectNoParams(request)
            return try WireCoding.encoded(await context.status())
        case .watch:
            let selection = try watchSelection(request.params)
            connection.watch(selection)
            return try WireCoding.encoded(WatchResult(selection))
        case .unwatch:
            try expectNoParams(request)
            connection.watch(.none)
            return try WireCoding.encoded(WatchResult(.none))
        case .enqueue:
            let params = try params(EnqueueParams.self, request)
            if params.episodes?.isEmpty == false {
                let command = try await EpisodeEnqueueCommand(params, queue: context.queue)
                return try WireCoding.encoded(EnqueueResult(try await context.podcasts.enqueue(command)))
            }
            let requests = try await DownloadRequest.requests(for: params, queue: context.queue)
            return try WireCoding.encoded(EnqueueResult(try await context.queue.enqueue(requests)))
        case .downloads:
            let params = try request.params == nil ? DownloadsParams() : params(DownloadsParams.self, request)
            let query = try DownloadListQuery(params)
            return try WireCoding.encoded(DownloadsResult(try await context.podcasts.downloads(query)))
        case .show:
            let id = try params(ShowParams.self, request).id
            return try WireCoding.encoded(DownloadInfo(try await context.podcasts.download(id)))
        case .resume:
            let params = try params(SelectionParams.self, request)
            let resumed = try await context.queue.resume(.init(params), now: params.now == true)
            var result = ChangedResult(resumed)
            result.unchanged = await unchanged(.resume, params, changed: result.changed)
            return try WireCoding.encoded(result)
        case .move:
            let params = try params(MoveParams.self, request)
            let priority = try await context.queue.move(params.id, to: .init(params))
            return try WireCoding.encoded(ChangedResult(changed: [params.id], priority: priority))
        case .pause, .retry:
            let params = try params(SelectionParams.self, request)
            let changed = try await change(method, request)
            let command: DownloadQueueStateMachine.SelectionCommand = method == .pause ? .pause : .retry
            let left = await unchanged(command, params, changed: changed)
            return try WireCoding.encoded(ChangedResult(changed: changed, unchanged: left))
        case .cancel, .clear:
            return try WireCoding.encoded(ChangedResult(changed: try await change(method, request)))
        case .limit:
            let params = try request.params == nil ? nil : params(LimitParams.self, request)
            let change: DownloadQueue.LimitChange? =
                params.map { $0.reset == true ? .reset : .set($0.rate) }
            return try WireCoding.encoded(LimitParams(rate: try await context.queue.limit(change)))
        case .subscribe:
            let command = try SubscribeCommand(try params(SubscribeParams.self, request))
            return try WireCoding.encoded(SubscribeResult(try await context.podcasts.subscribe(command)))
        case .unsubscribe:
            let command = UnsubscribeCommand(try params(UnsubscribeParams.self, request))
            return try WireCoding.encoded(UnsubscribeResult(try await context.podcasts.unsubscribe(command)))
        case .podcasts:
            // `[]` stays the same as none, as it was while `podcasts` took no parameters.
            let none = request.params == nil || request.params == .array([])
            let page = try PodcastPage(none ? PodcastsParams() : params(PodcastsParams.self, request))
            return try WireCoding.encoded(PodcastsResult(try await context.podcasts.list(page)))
        case .episodes:
            let query = EpisodeQuery(try params(EpisodesParams.self, request))
            return try WireCoding.encoded(EpisodesResult(try await context.podcasts.episodes(query)))
        case .refresh:
            let params = try request.params == nil ? RefreshParams() : params(RefreshParams.self, request)
            let reports = try await context.podcasts.refresh(params.podcast)
            return try WireCoding.encoded(RefreshResult(reports, brief: params.brief ?? false))
        case .set:
            let change = PodcastChange(try params(SetPodcastParams.self, request))
            return try WireCoding.encoded(PodcastResult(try await context.podcasts.set(change)))
        case .download:
            let command = DownloadLatestCommand(try params(DownloadLatestParams.self, request))
            return try WireCoding.encoded(EnqueueResult(try await context.podcasts.downloadLatest(command)))
        case .delete:
            let ids = try params(EpisodeSelectionParams.self, request).episodes
            return try WireCoding.encoded(DeleteResult(try await context.podcasts.delete(episodes: ids)))
        case .redownload:
            let ids = try params(EpisodeSelectionParams.self, request).episodes
            return try WireCoding.encoded(EnqueueResult(try await context.podcasts.redownload(episodes: ids)))
        case .trash, .restore, .purge:
            return try await trash(method, request)
        case .podcast:
            let selector = try params(PodcastParams.self, request).podcast
            return try WireCoding.encoded(PodcastDetailResult(try await context.podcasts.details(selector)))
        case .episode:
            let ids = try params(EpisodeSelectionParams.self, request).episodes
            return try WireCoding.encoded(InboxResult(try await context.podcasts.episodeDetails(ids)))
        case .inbox:
            let params = try request.params == nil ? InboxParams() : params(InboxParams.self, request)
            return try WireCoding.encoded(InboxResult(try await context.podcasts.inbox(limit: params.limit)))
        case .played, .unplayed:
            let choice = try EpisodeChoice(try params(EpisodeMarkParams.self, request))
            let outcome = try await context.podcasts.markPlayed(choice, played: method == .played)
            return try WireCoding.encoded(EpisodeMarkResult(outcome))
        case .pin, .unpin:
            let choice = try EpisodeChoice(try params(EpisodeMarkParams.self, request))
            let outcome = try await context.podcasts.pin(choice, pinned: method == .pin)
            return try WireCoding.encoded(EpisodeMarkResult(outcome))
        case .rules:
            let query = PodcastChange(try params(RulesParams.self, request))
            return try WireCoding.encoded(RulesResult(try await context.podcasts.rules(query)))
        case .import:
            let document = try params(ImportParams.self, request).opml
            return try WireCoding.encoded(ImportResult(try await context.podcasts.importOPML(document)))
        case .export:
            try expectNoParams(request)
            return try WireCoding.encoded(ExportResult(await context.podcasts.exportOPML()))
        case .search:
            return try WireCoding.encoded(await context.directory.search(try params(SearchParams.self, request)))
        case .lookup:
            return try WireCoding.encoded(await context.directory.lookup(try params(LookupParams.self, request)))
        case .top:
            let params = try request.params == nil ? TopParams() : params(TopParams.self, request)
            return try WireCoding.encoded(await context.directory.top(params))
        case .httpPassword:
            let params = try request.params == nil ? HTTPPasswordParams() : params(HTTPPasswordParams.self, request)
            let password = params.reset == true ? try context.webPassword.reset() : try context.webPassword.current()
            return try WireCoding.encoded(
                HTTPPasswordResult(user: WebGate.user, password: password, file: context.webPassword.path)
            )
        case .sync:
            return try WireCoding.encoded(await sync(request))
        }
    }

    /// Carries out a queue command that changes downloads.
    ///
    /// - Returns: The downloads it changed.
    private func change(_ method: Method, _ request: RPCRequest) async throws -> [Int64] {
        let queue = context.queue
        switch method {
        case .pause: return try await queue.pause(.init(try params(SelectionParams.self, request)))
        case .retry: return try await queue.retry(.init(try params(SelectionParams.self, request)))
        case .cancel:
            let params = try params(SelectionParams.self, request)
            let ids = try DownloadQueueStateMachine.Selection.cancelling(params)
            return try await queue.cancel(ids, deletePartial: params.deletePartial ?? false)
        case .clear:
            let params = try params(ClearParams.self, request)
            return try await queue.clear(Set(params), deletePartial: params.deletePartial ?? false)
        default:
            preconditionFailure("'\(method.rawValue)' changes no downloads")
        }
    }

    /// Whether `line` is a request that replaces one of the same method still running on its connection: a newer
    /// `search` cancels the previous one (search-as-you-type clients send one per keystroke).
    package static func supersedes(_ line: [UInt8]) -> Bool {
        // Parsing only lines that can be one keeps the common case at a byte scan: memmem, because the generic
        // `firstRange(of:)` cost 70 instructions a byte, and the control server asks this of each line several times.
        guard line.count < 1 << 16, contains(line, Self.searchToken),
            case .success(let request) = RPCRequest.parse(line: line)
        else { return false }
        return request.method == Method.search.rawValue
    }

    private static let searchToken = Array(#""search""#.utf8)

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                cposix_memmem(haystack.baseAddress, haystack.count, needle.baseAddress, needle.count) != nil
            }
        }
    }

    /// Decodes `params` as `T`, turning a decoding failure into an `invalid_params` error that names the field.
    func params<T: Codable>(_ type: T.Type, _ request: RPCRequest) throws -> T {
        guard case .object? = request.params else {
            throw RPCError.invalidParams("'\(request.method)' takes an object of named parameters", parameter: "params")
        }
        do {
            let value = try WireCoding.decode(type, from: request.params ?? .object([:]))
            try rejectUnknownParameters(request, understood: value)
            return value
        } catch let DecodingError.keyNotFound(key, _) {
            throw RPCError.invalidParams("'\(key.stringValue)' is required", parameter: key.stringValue)
        } catch let DecodingError.typeMismatch(expected, context) {
            let name = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw RPCError.invalidParams("'\(name)' must be of type \(Self.jsonType(expected))", parameter: name)
        } catch let DecodingError.valueNotFound(expected, context) {
            let name = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw RPCError.invalidParams("'\(name)' must be of type \(Self.jsonType(expected))", parameter: name)
        } catch let DecodingError.dataCorrupted(context) {
            let name = context.codingPath.map(\.stringValue).joined(separator: ".")
            guard name.isEmpty else { throw RPCError.invalidParams("'\(name)' has an invalid value", parameter: name) }
            // Foundation reports a number that does not fit its field (1.5 or 1e300 for an integer) without a coding
            // path; every numeric parameter is an integer, so the first one holding another number is the culprit.
            guard case .object(let fields)? = request.params,
                let culprit = fields.keys.sorted().first(where: { Self.holdsNonInteger(fields[$0]) })
            else {
                throw RPCError.invalidParams("the parameters cannot be read", parameter: "params")
            }
            throw RPCError.invalidParams("'\(culprit)' must hold whole numbers within 64 bits", parameter: culprit)
        }
    }

    /// Whether `value` is, or contains, a number that is not a 64-bit integer.
    private static func holdsNonInteger(_ value: JSONValue?) -> Bool {
        switch value {
        case .double?: true
        case .array(let items)?: items.contains { holdsNonInteger($0) }
        case .object(let fields)?: fields.values.contains { holdsNonInteger($0) }
        default: false
        }
    }

    /// A misspelt parameter must not be silently ignored: every non-null field the client sent has to appear in
    /// what was understood.
    private func rejectUnknownParameters(_ request: RPCRequest, understood: some Encodable) throws {
        guard case .object(let sent)? = request.params, let read = try EncodedKeys.of(understood) else { return }
        if let unknown = sent.filter({ $0.value != .null && !read.contains($0.key) }).keys.sorted().first {
            let known = read.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw RPCError.invalidParams(
                "unknown parameter '\(unknown)' for '\(request.method)'"
                    + (known.isEmpty ? "" : "; understood: \(known)"),
                parameter: unknown
            )
        }
    }

    private static func jsonType(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Bool.Type: "boolean"
        case is Int.Type, is Int64.Type, is Double.Type: "number"
        case is [Any].Type: "array"
        default: "object"
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
    func expectNoParams(_ request: RPCRequest) throws {
        switch request.params {
        case nil, .object([:])?, .array([])?: return
        case .object(let fields)?:
            let names = fields.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw RPCError.invalidParams("'\(request.method)' takes no parameters, got \(names)")
        default:
            throw RPCError.invalidParams("'\(request.method)' takes no parameters")
        }
    }

    private func watchSelection(_ params: JSONValue?) throws -> EventSelection {
        guard let params else { return EventSelection(topics: Set(EventTopic.allCases)) }
        guard case .object(let fields) = params else {
            throw RPCError.invalidParams(
                "'watch' takes an object such as {\"topics\":[\"daemon\"]}",
                parameter: "params"
            )
        }
        if let unknown = fields.keys.sorted().first(where: { $0 != "topics" && $0 != "events" }) {
            throw RPCError.invalidParams(
                "unknown parameter '\(unknown)'; 'watch' takes 'topics' and 'events'",
                parameter: unknown
            )
        }
        let topicNames = try names(fields["topics"], parameter: "topics")
        let eventNames = try names(fields["events"], parameter: "events")
        do throws(EventSelection.Invalid) {
            return try EventSelection(topicNames: topicNames, eventNames: eventNames)
        } catch {
            throw RPCError.invalidParams(error.message, parameter: error.parameter)
        }
    }

    /// An optional array of strings.
    private func names(_ value: JSONValue?, parameter: String) throws -> [String]? {
        guard let value, value != .null else { return nil }
        guard case .array(let items) = value else {
            throw RPCError.invalidParams(
                "'\(parameter)' must be an array of strings, not \(value.typeName)",
                parameter: parameter
            )
        }
        return try items.map { item in
            guard case .string(let name) = item else {
                throw RPCError.invalidParams(
                    "'\(parameter)' must hold strings, found \(item.typeName)",
                    parameter: parameter
                )
            }
            return name
        }
    }
}
