/// Why a sync did not happen or did not finish. The control server maps it to a JSON-RPC error in one place
/// (`RPCError+Domain.swift`); `sync.failed` carries `reason` and `message`.
package struct SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: String, Hashable, Sendable {
        /// No `sync_server` is set.
        case disabled = "sync_disabled"
        /// A key is missing or the password file may not be used.
        case misconfigured = "sync_misconfigured"
        /// The server answered 401: wrong user or password. Not retried until the configuration changes.
        case unauthorized = "sync_unauthorized"
        /// Not reached, timed out, or a 5xx answer: retried with backoff.
        case unreachable = "sync_unreachable"
        /// The server answered with something other than the JSON the API describes, or with too much of it.
        case badResponse = "sync_bad_response"
    }

    package var code: Code
    /// What happened, as a clause: it names the server and user where they matter, never the password.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    /// Whether waiting and trying again may help (the server was away), as opposed to a problem only the user
    /// can mend (credentials, configuration).
    package var isTransient: Bool {
        switch code {
        case .unreachable, .badResponse: true
        case .disabled, .misconfigured, .unauthorized: false
        }
    }
}
