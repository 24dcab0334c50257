/// The HTTP listener's part of the configuration (`http_*` keys).
package struct WebSettings: Hashable, Sendable {
    /// Where the listener binds; empty = no listener (the default).
    package var listen: [WebListenAddress] = []
    /// HTTP Basic authentication; `http_auth = off` is accepted only when every address is loopback.
    package var basicAuth = true
    /// PEM files for HTTPS; both or neither.
    package var tlsCertificate: String?
    package var tlsKey: String?
    /// A connection idle this long (a slow client, a half-sent request) is closed.
    package var timeout: Duration = .seconds(30)

    package init() {}

    /// Why these settings cannot run, naming the key to change; `nil` when they can.
    package var problem: (key: String, message: String)? {
        if !basicAuth, let open = listen.first(where: { !$0.isLoopback }) {
            return (
                "http_auth",
                "http_auth = off is allowed only when every http_listen address is loopback; \(open) is not"
            )
        }
        switch (tlsCertificate, tlsKey) {
        case (.some, nil): return ("http_tls_cert", "http_tls_cert is set without http_tls_key")
        case (nil, .some): return ("http_tls_key", "http_tls_key is set without http_tls_cert")
        default: return nil
        }
    }

    /// `http://127.0.0.1:8372, https://[::1]:8372`, or `off`, for logs and the status line.
    package var summary: String {
        guard !listen.isEmpty else { return "off" }
        let scheme = tlsCertificate == nil ? "http" : "https"
        return listen.map { "\(scheme)://\($0)" }.joined(separator: ", ")
    }
}
