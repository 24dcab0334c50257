import FoundationEssentials
import SinglecastSupport

/// Decides whether the listener serves a request, from the request's facts alone: the one place that says who may
/// use the HTTP surface. The listener gathers the facts, asks, and applies the answer.
package struct WebGate: Sendable {
    /// The user name of HTTP Basic authentication.
    package static let user = "singlecast"
    /// The header an unsafe request (anything but GET and HEAD) carries with the token of `GET /session`. A browser
    /// sends no custom header cross-origin without a CORS preflight, which the listener never grants.
    package static let csrfHeader = "x-singlecast-csrf"

    /// The Basic password, or `nil` when `http_auth = off` (loopback only).
    package var password: String?
    /// The token unsafe requests must carry in ``csrfHeader``.
    package var csrfToken: String
    /// The largest request body, in bytes.
    package var bodyLimit: Int

    package init(password: String?, csrfToken: String, bodyLimit: Int) {
        self.password = password
        self.csrfToken = csrfToken
        self.bodyLimit = bodyLimit
    }

    /// What the listener knows of a request once its headers are in.
    package struct Facts: Sendable {
        /// The client's IP address, the key of the login throttle.
        package var client: String
        /// The address of the listener that accepted the connection.
        package var listener: WebListenAddress
        package var method: WebRequest.Method
        package var host: String?
        package var origin: String?
        package var authorization: String?
        package var csrfToken: String?
        /// `Content-Length`, when the client sent one; `nil` for none or one that is not a number.
        package var contentLength: Int64?
        package var tls: Bool

        package init(
            client: String,
            listener: WebListenAddress,
            method: WebRequest.Method,
            host: String? = nil,
            origin: String? = nil,
            authorization: String? = nil,
            csrfToken: String? = nil,
            contentLength: Int64? = nil,
            tls: Bool = false
        ) {
            self.client = client
            self.listener = listener
            self.method = method
            self.host = host
            self.origin = origin
            self.authorization = authorization
            self.csrfToken = csrfToken
            self.contentLength = contentLength
            self.tls = tls
        }
    }

    package enum Refusal: String, Sendable, Hashable {
        /// The `Host` header names something other than the loopback listener: a DNS rebinding page.
        case foreignHost = "foreign Host"
        /// The `Origin` header is another site's: a cross-site request.
        case foreignOrigin = "foreign Origin"
        /// An unsafe method without the CSRF token.
        case missingCSRFToken = "missing or wrong CSRF token"
    }

    package enum Action: Sendable, Hashable {
        case serve
        /// 401 with a `WWW-Authenticate` challenge.
        case challenge
        /// 403.
        case forbidden(Refusal)
        /// 413.
        case tooLarge(limit: Int)
        /// 429 with `Retry-After` in seconds: too many failed logins from this address.
        case throttled(retryAfterSeconds: Int64)
    }

    /// The action for `facts`, counting a failed login in `throttle`; `now` in milliseconds.
    package func decide(_ facts: Facts, throttle: inout LoginThrottle, now: Int64) -> Action {
        if facts.listener.isLoopback && !Self.namesLoopback(facts.host, listener: facts.listener) {
            return .forbidden(.foreignHost)
        }
        if let origin = facts.origin, !Self.isSameOrigin(origin, host: facts.host, tls: facts.tls) {
            return .forbidden(.foreignOrigin)
        }
        if let password {
            if let wait = throttle.retryAfter(facts.client, now: now) {
                return .throttled(retryAfterSeconds: (wait + 999) / 1000)
            }
            // No credentials at all is a browser's first request, not a guess.
            guard let authorization = facts.authorization else { return .challenge }
            guard Self.matches(authorization, password: password) else {
                throttle.recordFailure(facts.client, now: now)
                return .challenge
            }
            throttle.recordSuccess(facts.client)
        }
        switch facts.method {
        case .get, .head: break
        case .post, .other:
            guard let token = facts.csrfToken, Self.constantTimeEqual(Array(token.utf8), Array(csrfToken.utf8)) else {
                return .forbidden(.missingCSRFToken)
            }
        }
        if let length = facts.contentLength, length > Int64(bodyLimit) { return .tooLarge(limit: bodyLimit) }
        return .serve
    }

    /// Whether `host` (a `Host` header) names the loopback listener: its own address, or `localhost`, with its
    /// port or none.
    static func namesLoopback(_ host: String?, listener: WebListenAddress) -> Bool {
        guard let host = host?.lowercased() else { return false }
        let port = String(listener.port)
        let names = [listener.hostInHeader.lowercased(), "localhost"]
        return names.contains { name in host == name || host == "\(name):\(port)" }
    }

    /// Whether `origin` is the origin the request was addressed to: the scheme the listener speaks and the `Host`.
    static func isSameOrigin(_ origin: String, host: String?, tls: Bool) -> Bool {
        guard let host else { return false }
        return origin.lowercased() == "\(tls ? "https" : "http")://\(host.lowercased())"
    }

    /// Whether `authorization` is `Basic` with ``user`` and `password`.
    static func matches(_ authorization: String, password: String) -> Bool {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(parts[1]).trimmingWhitespace())
        else { return false }
        return constantTimeEqual(Array(decoded), Array("\(user):\(password)".utf8))
    }

    /// Compares without stopping at the first difference, so the time taken does not tell how much of a guess was
    /// right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
