/// One HTTP request as the listener hands it to a route: the listener has already checked the credentials, the
/// `Host` and `Origin` headers and the body's size, so a route only decides what the path means.
package struct WebRequest: Sendable {
    package enum Method: Sendable, Hashable {
        case get, head, post
        case other(String)
    }

    package var method: Method
    /// The path as the client sent it, before any percent-decoding, without the query.
    package var rawPath: String
    /// The query's parameters, percent-decoded; a repeated name keeps its last value.
    package var query: [String: String]
    /// Header names in lower case; a repeated header keeps its last value.
    package var headers: [String: String]
    package var body: [UInt8]
    /// `scheme://host[:port]` as the client addressed the listener, for the absolute URLs feeds need.
    package var baseURL: String

    package init(
        method: Method,
        rawPath: String,
        query: [String: String] = [:],
        headers: [String: String] = [:],
        body: [UInt8] = [],
        baseURL: String
    ) {
        self.method = method
        self.rawPath = rawPath
        self.query = query
        self.headers = headers
        self.body = body
        self.baseURL = baseURL
    }

    package func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A route's answer. The listener adds the headers every response carries (`Date`, security headers).
package struct WebResponse: Sendable {
    package enum Body: Sendable {
        case empty
        case bytes([UInt8])
        /// `length` bytes of an open file from `offset`, sent with sendfile. The listener owns the descriptor
        /// from here on and closes it once the response is sent or abandoned.
        case file(descriptor: Int32, offset: UInt64, length: UInt64)
    }

    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: Body

    package init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A part of the HTTP surface: the listener asks each route in turn and answers 404 when none claims the path.
package protocol WebRoute: Sendable {
    /// Answers the request, or `nil` when the path is not this route's.
    func respond(to request: WebRequest) async -> WebResponse?
}
