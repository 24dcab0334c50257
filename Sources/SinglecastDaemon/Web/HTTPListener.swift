import CMicroHTTPD
import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why the HTTP listener could not start.
package struct WebListenerError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// The optional HTTP listener: libmicrohttpd parses HTTP on its own thread (epoll), ``WebGate`` decides who is
/// served, and each request is answered by a Swift task while its connection is suspended.
///
/// Routes are asked in order (``WebRoute``); a path none claims is 404. `/events` is the listener's own, since its
/// response never ends. Reloads stop every connection and start afresh on the new addresses.
package final class HTTPListener: Service {
    /// Limits on what one client, or all of them, can make the daemon hold.
    package struct Limits: Sendable {
        /// The largest request body; `POST /rpc` bodies are small.
        package var bodyBytes = 256 << 10
        /// The memory libmicrohttpd gives one connection for the request line and headers: more is 431.
        package var headerBytes = 32 << 10
        package var connectionsPerAddress = 32
        package var connections = 256
    }

    private let context: DaemonContext
    private let routes: [any WebRoute]
    private let csrfToken: String
    package let limits: Limits
    private let throttle = Mutex(LoginThrottle())

    private struct State {
        var settings = WebSettings()
        var daemons: [RunningDaemon] = []
        /// Requests suspended while a route answers them.
        var waiting: [ObjectIdentifier: WebExchange] = [:]
        var streams: [ObjectIdentifier: WebEventStream] = [:]
        /// New requests are answered 503 while the listener stops or moves.
        var accepting = true
        var shuttingDown = false
    }

    private let state = Mutex(State())
    private let stopRequested = Completion()
    /// Sockets systemd passed for the listener (`FileDescriptorName=http`); kept across reloads.
    private let activatedSockets: [Int32]

    package init(
        context: DaemonContext,
        routes: [any WebRoute],
        csrfToken: String,
        activatedSockets: [Int32] = [],
        limits: Limits = Limits()
    ) {
        self.context = context
        self.routes = routes
        self.csrfToken = csrfToken
        self.activatedSockets = activatedSockets
        self.limits = limits
    }

    /// A fresh CSRF token for one run of the daemon.
    package static func makeCSRFToken() -> String {
        var random = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(random.next(), radix: 16) }.joined(separator: "-")
    }

    // MARK: Lifecycle

    /// Binds the configured addresses (and any socket systemd passed); before READY, so a port in use is a start
    /// error rather than a listener that silently is not there.
    package func start(_ settings: WebSettings) throws(WebListenerError) {
        let daemons = try launch(settings)
        state.withLock { state in
            state.settings = settings
            state.daemons = daemons
            state.accepting = true
        }
        publishStatus()
        if !daemons.isEmpty { context.logger.notice("HTTP listener on \(describe(daemons))") }
    }

    /// Waits for ``beginShutdown()``, then lets answers in flight finish and closes every connection.
    package func run() async throws {
        try? await stopRequested.wait()
        await stopDaemons()
        publishStatus()
    }

    package func beginShutdown() {
        let first = state.withLock { state in
            defer { state.shuttingDown = true }
            return !state.shuttingDown
        }
        if first { stopRequested.succeed() }
    }

    /// SIGHUP: when the `http_*` settings changed, stops the listener and starts it on the new ones. A new address
    /// that cannot be bound leaves the previous ones in service.
    package func apply(_ settings: WebSettings) async throws(WebListenerError) {
        let current = state.withLock { $0.shuttingDown ? nil : $0.settings }
        guard let current, current != settings else { return }
        await stopDaemons()
        do {
            try start(settings)
        } catch {
            context.logger.error("HTTP listener: \(error); keeping \(current.summary)")
            try? start(current)
            throw error
        }
    }

    /// For the watchdog: every daemon that should run still has its thread and listening socket.
    package func healthCheck() throws(WebListenerError) {
        let daemons = state.withLock { $0.daemons }
        for daemon in daemons where cmhd_listen_fd(daemon.handle) < 0 {
            throw WebListenerError(message: "the HTTP listener on \(daemon.binding.address) lost its socket")
        }
    }

    /// Connections open now, across the daemons.
    package var connectionCount: Int {
        state.withLock { $0.daemons.reduce(0) { $0 + Int(cmhd_connection_count($1.handle)) } }
    }

    private func publishStatus() {
        let (daemons, settings) = state.withLock { ($0.shuttingDown ? [] : $0.daemons, $0.settings) }
        context.web.update(
            listening: daemons.map { $0.binding.url },
            basicAuth: settings.basicAuth,
            connections: { [weak self] in self?.connectionCount ?? 0 }
        )
    }

    private func describe(_ daemons: [RunningDaemon]) -> String {
        daemons.map { $0.binding.url }.joined(separator: ", ")
    }

    /// Stops taking requests, ends event streams, waits for answers in flight (at most `shutdown_timeout`, then
    /// they get 503), and stops libmicrohttpd, which must not hold a suspended connection when it stops.
    private func stopDaemons() async {
        let (daemons, streams) = state.withLock { state in
            state.accepting = false
            defer { state.daemons = [] }
            return (state.daemons, Array(state.streams.values))
        }
        guard !daemons.isEmpty else { return }
        for daemon in daemons { daemon.quiesce(keepSocket: activatedSockets.contains(daemon.listenFD)) }
        for stream in streams { stream.finish() }
        // Answers get shutdown_timeout; an event stream gets a second to send what was published before the stop
        // (daemon.stopping), since a page that stopped reading must not hold every stop up.
        let now = ContinuousClock.now
        let (deadline, streamDeadline) = (now + context.configuration.shutdownTimeout, now + .seconds(1))
        while true {
            // A stream counts until libmicrohttpd has sent its last byte, not only until it was handed over.
            let answering = state.withLock { !$0.waiting.isEmpty }
            let streaming = streams.contains { !$0.isGone }
            let at = ContinuousClock.now
            guard (answering && at < deadline) || (streaming && at < streamDeadline) else { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        let late = state.withLock { state in
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for exchange in late { exchange.finish(.text(503, "Service Unavailable: singlecastd is stopping")) }
        for stream in streams where !stream.isGone { stream.end() }
        for daemon in daemons { daemon.stop() }
        state.withLock { $0.streams = [:] }
        context.logger.debug("HTTP listener stopped on \(describe(daemons))")
    }

    private func launch(_ settings: WebSettings) throws(WebListenerError) -> [RunningDaemon] {
        var tls: (certificate: String, key: String)?
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            tls = (try Self.readPEM(certificate, key: "http_tls_cert"), try Self.readPEM(key, key: "http_tls_key"))
        }
        var sockets: [(WebListenAddress, Int32?)] = settings.listen.map { ($0, nil) }
        for fd in activatedSockets {
            guard let address = Self.boundAddress(fd) else {
                throw WebListenerError(message: "the http socket systemd passed is not a TCP socket")
            }
            sockets.append((address, fd))
        }
        var started: [RunningDaemon] = []
        for (address, fd) in sockets {
            let binding = WebBinding(listener: self, address: address, tls: tls != nil)
            do {
                started.append(
                    try RunningDaemon.start(
                        binding: binding,
                        activatedFD: fd,
                        settings: settings,
                        limits: limits,
                        tls: tls
                    )
                )
            } catch {
                for daemon in started {
                    daemon.quiesce(keepSocket: activatedSockets.contains(daemon.listenFD))
                    daemon.stop()
                }
                throw error
            }
        }
        return started
    }

    private static func readPEM(_ path: String, key: String) throws(WebListenerError) -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw WebListenerError(message: "\(key) '\(path)' cannot be read: \(describeFileError(error))")
        }
    }

    /// The address a socket systemd passed is bound to.
    private static func boundAddress(_ fd: Int32) -> WebListenAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard got == 0, let (host, port) = WebAddressText.describe(&storage) else { return nil }
        return WebListenAddress(storage.ss_family == sa_family_t(AF_INET6) ? "[\(host)]:\(port)" : "\(host):\(port)")
    }

    // MARK: Requests (on libmicrohttpd's thread)

    /// libmicrohttpd's access handler, called for the headers, for each piece of body, and once the request is
    /// complete (again after a resume).
    func handle(
        _ binding: WebBinding,
        connection: OpaquePointer,
        url: String,
        method: String,
        upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let pointer = requestContext.pointee else {
            let exchange = WebExchange(connection: connection, request: Self.request(connection, binding, url, method))
            requestContext.pointee = Unmanaged.passRetained(exchange).toOpaque()
            let action = decide(exchange.request, connection: connection, binding: binding)
            guard action == .serve else {
                exchange.refused = true
                context.logger.debug("HTTP \(method) \(url): \(action)")
                return Self.queue(Self.refusal(action), on: connection)
            }
            return MHD_Result.YES
        }
        let exchange = Unmanaged<WebExchange>.fromOpaque(pointer).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            if exchange.refused { return MHD_Result.YES }
            // A body without Content-Length (chunked) that grows past the limit: no 413 can be queued mid-body.
            guard exchange.request.body.count + count <= limits.bodyBytes, let upload else { return MHD_Result.NO }
            exchange.request.body += UnsafeRawBufferPointer(start: upload, count: count)
            return MHD_Result.YES
        }
        if exchange.refused { return MHD_Result.YES }
        return complete(exchange, connection: connection)
    }

    /// The request is all in: answer it now (events, refusals) or suspend it while a route answers.
    private func complete(_ exchange: WebExchange, connection: OpaquePointer) -> MHD_Result {
        switch exchange.take() {
        case .answered(let response):
            return Self.queue(response, on: connection)
        case .waiting, .done:
            return MHD_Result.YES
        case .receiving:
            break
        }
        let request = exchange.request
        if request.rawPath == "/events" {
            return startEvents(request, connection: connection)
        }
        let admitted = state.withLock { state in
            guard state.accepting else { return false }
            state.waiting[ObjectIdentifier(exchange)] = exchange
            return true
        }
        guard admitted else {
            return Self.queue(.text(503, "Service Unavailable: singlecastd is stopping"), on: connection)
        }
        exchange.suspend()
        Task {
            let response = await answer(request)
            state.withLock { _ = $0.waiting.removeValue(forKey: ObjectIdentifier(exchange)) }
            exchange.finish(response)
        }
        return MHD_Result.YES
    }

    /// The first route's answer, or 404.
    private func answer(_ request: WebRequest) async -> WebResponse {
        for route in routes {
            if let response = await route.respond(to: request) { return response }
        }
        return .text(404, "Not Found")
    }

    private func startEvents(_ request: WebRequest, connection: OpaquePointer) -> MHD_Result {
        guard request.method == .get || request.method == .head else {
            return Self.queue(.methodNotAllowed("GET, HEAD"), on: connection)
        }
        let selection: EventSelection
        do throws(EventSelection.Invalid) {
            func names(_ key: String) -> [String]? { request.query[key]?.split(separator: ",").map(String.init) }
            selection = try EventSelection(topicNames: names("topics"), eventNames: names("events"))
        } catch {
            return Self.queue(.text(400, "Bad Request: \(error.message)"), on: connection)
        }
        let stream = WebEventStream(connection: connection, events: context.events, selection: selection)
        let admitted = state.withLock { state in
            guard state.accepting else { return false }
            state.streams[ObjectIdentifier(stream)] = stream
            return true
        }
        guard admitted else {
            stream.connectionClosed()
            return Self.queue(.text(503, "Service Unavailable: singlecastd is stopping"), on: connection)
        }
        let retained = Unmanaged.passRetained(stream).toOpaque()
        guard let response = MHD_create_response_from_callback(UInt64.max, 16 << 10, eventReader, retained, eventFree)
        else {
            Unmanaged<WebEventStream>.fromOpaque(retained).release()
            stream.connectionClosed()
            return MHD_Result.NO
        }
        Self.addHeaders(
            [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")],
            to: response
        )
        let queued = MHD_queue_response(connection, 200, response)
        MHD_destroy_response(response)
        // Heartbeats well inside the connection timeout, so an idle stream is not cut.
        let heartbeat = min(.seconds(15), state.withLock { $0.settings.timeout } / 3)
        Task {
            await stream.run(heartbeat: heartbeat)
            state.withLock { _ = $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
        }
        return queued
    }

    private func decide(_ request: WebRequest, connection: OpaquePointer, binding: WebBinding) -> WebGate.Action {
        let settings = state.withLock { $0.settings }
        var password: String?
        if settings.basicAuth {
            do {
                password = try context.webPassword.current()
            } catch {
                context.logger.error("HTTP listener: \(error)")
                return .challenge
            }
        }
        let gate = WebGate(password: password, csrfToken: csrfToken, bodyLimit: limits.bodyBytes)
        let facts = WebGate.Facts(
            client: Self.clientAddress(connection),
            listener: binding.address,
            method: request.method,
            host: request.header("host"),
            origin: request.header("origin"),
            authorization: request.header("authorization"),
            csrfToken: request.header(WebGate.csrfHeader),
            contentLength: request.header("content-length").flatMap { OutsideNumber.decimal($0.utf8) },
            tls: binding.tls
        )
        return throttle.withLock { gate.decide(facts, throttle: &$0, now: WallClock.milliseconds()) }
    }

    private static func clientAddress(_ connection: OpaquePointer) -> String {
        guard let address = cmhd_client_address(connection) else { return "unknown" }
        var storage = sockaddr_storage()
        let size =
            address.pointee.sa_family == sa_family_t(AF_INET6)
            ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        withUnsafeMutableBytes(of: &storage) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: size))
        }
        return WebAddressText.describe(&storage)?.host ?? "unknown"
    }
}

/// What one listening socket's callbacks need: the listener, the address, whether it speaks TLS.
final class WebBinding: Sendable {
    unowned let listener: HTTPListener
    let address: WebListenAddress
    let tls: Bool

    init(listener: HTTPListener, address: WebListenAddress, tls: Bool) {
        self.listener = listener
        self.address = address
        self.tls = tls
    }

    var url: String { "\(tls ? "https" : "http")://\(address)" }
}

/// Text forms of socket addresses.
enum WebAddressText {
    /// The host (`127.0.0.1`, `::1`) and port of an IPv4 or IPv6 address.
    /// `inet_ntop`'s NUL-terminated text.
    private static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func describe(_ storage: inout sockaddr_storage) -> (host: String, port: UInt16)? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var bytes = address.pointee.sin_addr
                    guard inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
                    return (Self.text(text), UInt16(bigEndian: address.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var bytes = address.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
                    return (Self.text(text), UInt16(bigEndian: address.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }
}
