import CMicroHTTPD
import FoundationEssentials
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One request between libmicrohttpd and the task that answers it.
final class WebExchange: @unchecked Sendable {
    enum Phase: Sendable {
        case receiving
        /// Suspended while a route answers.
        case waiting
        case answered(WebResponse)
        case done
    }

    /// `MHD_Connection *`; resumed only under `phase`'s lock while the phase is `waiting`, when it surely exists.
    private let connection: OpaquePointer
    /// Built and filled on libmicrohttpd's thread; read by the answering task only after the suspend.
    var request: WebRequest
    /// Answered at the headers (401, 403, …): the body, if any, is thrown away.
    var refused = false
    private let phase = Mutex(Phase.receiving)

    init(connection: OpaquePointer, request: WebRequest) {
        self.connection = connection
        self.request = request
    }

    /// The phase; an answer is handed out once, and the exchange is then done.
    func take() -> Phase {
        phase.withLock { phase in
            defer { if case .answered = phase { phase = .done } }
            return phase
        }
    }

    /// Called from the access handler, the only place libmicrohttpd allows it.
    func suspend() {
        phase.withLock { phase in
            phase = .waiting
            MHD_suspend_connection(connection)
        }
    }

    /// Hands the answer over and resumes the connection; an answer that comes too late (after a stop answered
    /// 503) is dropped, with its file closed.
    func finish(_ response: WebResponse) {
        let accepted = phase.withLock { phase in
            guard case .waiting = phase else { return false }
            phase = .answered(response)
            MHD_resume_connection(connection)
            return true
        }
        if !accepted { response.body.closeFile() }
    }

    /// The connection ended: an answer it never sent still owns a file.
    func discard() {
        let left = phase.withLock { phase -> WebResponse? in
            defer { phase = .done }
            if case .answered(let response) = phase { return response }
            return nil
        }
        left?.body.closeFile()
    }
}

extension WebResponse.Body {
    func closeFile() {
        if case .file(let fd, _, _) = self { close(fd) }
    }
}

/// One libmicrohttpd daemon: one listening socket with its thread.
final class RunningDaemon: @unchecked Sendable {
    let handle: OpaquePointer
    let binding: WebBinding
    let listenFD: Int32
    private let retainedBinding: Unmanaged<WebBinding>
    /// PEM texts libmicrohttpd keeps pointers to until it stops.
    private let pem: [UnsafeMutablePointer<CChar>]

    private init(
        handle: OpaquePointer,
        binding: WebBinding,
        retained: Unmanaged<WebBinding>,
        pem: [UnsafeMutablePointer<CChar>]
    ) {
        self.handle = handle
        self.binding = binding
        self.retainedBinding = retained
        self.pem = pem
        listenFD = cmhd_listen_fd(handle)
    }

    static func start(
        binding: WebBinding,
        activatedFD: Int32?,
        settings: WebSettings,
        limits: HTTPListener.Limits,
        tls: (certificate: String, key: String)?
    ) throws(WebListenerError) -> RunningDaemon {
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if binding.address.family == .v6 { flags |= MHD_USE_IPv6.rawValue }
        if tls != nil { flags |= MHD_USE_TLS.rawValue }
        let timeoutSeconds = max(1, settings.timeout.components.seconds)
        // On a loopback address every client is this machine, or a TLS proxy in front of the listener speaking for
        // all its clients: a limit per address would throttle them all as one; the total cap still holds.
        let perAddress = binding.address.isLoopback ? 0 : limits.connectionsPerAddress
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_LIMIT, value: limits.connections, ptr_value: nil),
            MHD_OptionItem(
                option: MHD_OPTION.PER_IP_CONNECTION_LIMIT,
                value: perAddress,
                ptr_value: nil
            ),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_TIMEOUT, value: Int(timeoutSeconds), ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_MEMORY_LIMIT, value: limits.headerBytes, ptr_value: nil),
            cmhd_completed_option(requestCompleted, nil),
            cmhd_keep_escaped_option(),
        ]
        var pem: [UnsafeMutablePointer<CChar>] = []
        if let tls {
            pem = [strdup(tls.key), strdup(tls.certificate)]
            options.append(MHD_OptionItem(option: MHD_OPTION.HTTPS_MEM_KEY, value: 0, ptr_value: pem[0]))
            options.append(MHD_OptionItem(option: MHD_OPTION.HTTPS_MEM_CERT, value: 0, ptr_value: pem[1]))
        }
        let retained = Unmanaged.passRetained(binding)
        let handle: OpaquePointer?
        if let activatedFD {
            options.append(MHD_OptionItem(option: MHD_OPTION.LISTEN_SOCKET, value: Int(activatedFD), ptr_value: nil))
            options.append(MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil))
            handle = cmhd_start(flags, nil, nil, accessHandler, retained.toOpaque(), &options)
        } else {
            handle = withSocketAddress(binding.address) { address in
                options.append(MHD_OptionItem(option: MHD_OPTION.SOCK_ADDR, value: 0, ptr_value: address))
                options.append(MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil))
                return cmhd_start(flags, nil, nil, accessHandler, retained.toOpaque(), &options)
            }
        }
        let startErrno = errno
        guard let handle else {
            retained.release()
            for text in pem { free(text) }
            let reason = startErrno == 0 ? "libmicrohttpd refused the settings" : String(cString: strerror(startErrno))
            throw WebListenerError(message: "cannot listen on \(binding.url): \(reason)")
        }
        return RunningDaemon(handle: handle, binding: binding, retained: retained, pem: pem)
    }

    /// Stops accepting; the socket is closed unless it is systemd's, which a restart takes again.
    func quiesce(keepSocket: Bool) {
        let fd = MHD_quiesce_daemon(handle)
        if fd >= 0 && !keepSocket { close(fd) }
    }

    /// Closes every connection and joins the thread; no connection may be suspended without a resume pending.
    func stop() {
        MHD_stop_daemon(handle)
        retainedBinding.release()
        for text in pem { free(text) }
    }

    private static func withSocketAddress<R>(
        _ address: WebListenAddress,
        _ body: (UnsafeMutableRawPointer) -> R
    ) -> R {
        switch address.family {
        case .v4:
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = address.port.bigEndian
            _ = inet_pton(AF_INET, address.host, &socketAddress.sin_addr)
            return withUnsafeMutablePointer(to: &socketAddress) { body(UnsafeMutableRawPointer($0)) }
        case .v6:
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr)
            return withUnsafeMutablePointer(to: &socketAddress) { body(UnsafeMutableRawPointer($0)) }
        }
    }
}

// MARK: libmicrohttpd callbacks: C function pointers, so no captures; the context pointers carry the objects.

private let accessHandler: MHD_AccessHandlerCallback = {
    context,
    connection,
    url,
    method,
    _,
    upload,
    uploadSize,
    requestContext in
    guard let context, let connection, let url, let method, let uploadSize, let requestContext else {
        return MHD_Result.NO
    }
    let binding = Unmanaged<WebBinding>.fromOpaque(context).takeUnretainedValue()
    return binding.listener.handle(
        binding,
        connection: connection,
        url: String(cString: url),
        method: String(cString: method),
        upload: upload,
        uploadSize: uploadSize,
        requestContext: requestContext
    )
}

private let requestCompleted: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
    guard let requestContext, let pointer = requestContext.pointee else { return }
    requestContext.pointee = nil
    Unmanaged<WebExchange>.fromOpaque(pointer).takeRetainedValue().discard()
}

let eventReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return cmhd_end_with_error() }
    return Unmanaged<WebEventStream>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

let eventFree: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<WebEventStream>.fromOpaque(context).takeRetainedValue().connectionClosed()
}

private let collectValue: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return MHD_Result.YES }
    let box = Unmanaged<WebValueBox>.fromOpaque(context).takeUnretainedValue()
    box.values.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return MHD_Result.YES
}

private final class WebValueBox {
    var values: [(String, String)] = []
}

// MARK: Requests and responses

extension HTTPListener {
    /// The request's line and headers as a route sees them.
    static func request(
        _ connection: OpaquePointer,
        _ binding: WebBinding,
        _ url: String,
        _ method: String
    ) -> WebRequest {
        let headers = values(connection, MHD_ValueKind.HEADER_KIND)
        var headerMap: [String: String] = [:]
        for (name, value) in headers { headerMap[name.lowercased()] = value }
        var query: [String: String] = [:]
        for (name, value) in values(connection, MHD_ValueKind.GET_ARGUMENT_KIND) {
            query[WebPercent.decode(name)] = WebPercent.decode(value)
        }
        let parsedMethod: WebRequest.Method =
            switch method {
            case "GET": .get
            case "HEAD": .head
            case "POST": .post
            default: .other(method)
            }
        let scheme = binding.tls ? "https" : "http"
        return WebRequest(
            method: parsedMethod,
            rawPath: url,
            query: query,
            headers: headerMap,
            baseURL: "\(scheme)://\(headerMap["host"] ?? binding.address.description)"
        )
    }

    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(String, String)] {
        let box = WebValueBox()
        withExtendedLifetime(box) {
            _ = MHD_get_connection_values(connection, kind, collectValue, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.values
    }

    /// Queues `response` on the connection; libmicrohttpd sends it (without a body for HEAD) and frees it.
    static func queue(_ response: WebResponse, on connection: OpaquePointer) -> MHD_Result {
        let handle: OpaquePointer?
        switch response.body {
        case .empty:
            handle = MHD_create_response_from_buffer(0, nil, MHD_ResponseMemoryMode.RESPMEM_PERSISTENT)
        case .bytes(let bytes) where bytes.isEmpty:
            handle = MHD_create_response_from_buffer(0, nil, MHD_ResponseMemoryMode.RESPMEM_PERSISTENT)
        case .bytes(let bytes):
            handle = bytes.withUnsafeBytes {
                MHD_create_response_from_buffer(
                    $0.count,
                    UnsafeMutableRawPointer(mutating: $0.baseAddress),
                    MHD_ResponseMemoryMode.RESPMEM_MUST_COPY
                )
            }
        case .file(let fd, let offset, let length):
            // libmicrohttpd owns the descriptor from here and closes it with the response.
            handle = offset <= UInt64(Int64.max) ? MHD_create_response_from_fd_at_offset64(length, fd, offset) : nil
            if handle == nil { close(fd) }
        }
        guard let handle else { return MHD_Result.NO }
        addHeaders(response.headers, to: handle)
        let result = MHD_queue_response(connection, UInt32(clamping: response.status), handle)
        MHD_destroy_response(handle)
        return result
    }

    /// The route's headers, then the ones every answer carries unless the route set them.
    static func addHeaders(_ headers: [(name: String, value: String)], to handle: OpaquePointer) {
        for (name, value) in headers { _ = MHD_add_response_header(handle, name, value) }
        let given = Set(headers.map { $0.name.lowercased() })
        let always = [
            ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
        ]
        for (name, value) in always where !given.contains(name.lowercased()) {
            _ = MHD_add_response_header(handle, name, value)
        }
    }

    /// The answer to a request ``WebGate`` refused.
    static func refusal(_ action: WebGate.Action) -> WebResponse {
        switch action {
        case .serve:
            preconditionFailure("a served request is answered by a route")
        case .challenge:
            .text(401, "Unauthorized", headers: [("WWW-Authenticate", #"Basic realm="singlecast", charset="UTF-8""#)])
        case .forbidden(let refusal):
            .text(403, "Forbidden: \(refusal.rawValue)")
        case .tooLarge(let limit):
            .text(413, "Content Too Large: at most \(limit) bytes", headers: [("Connection", "close")])
        case .throttled(let seconds):
            .text(
                429,
                "Too Many Requests: too many failed logins from this address; try again in \(seconds) s",
                headers: [("Retry-After", "\(seconds)")]
            )
        }
    }
}

/// Percent-decoding for query parameters (libmicrohttpd is told to leave them as sent).
enum WebPercent {
    /// `%XX` to its byte and `+` to a space; a `%` not followed by two hex digits stays as it is.
    static func decode(_ text: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), input.count >= 2, let high = hex(input[input.startIndex]),
                let low = hex(input[input.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
