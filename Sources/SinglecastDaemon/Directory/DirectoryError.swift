/// Why a directory request (search, lookup, chart) was refused or failed. The control server maps it to a JSON-RPC
/// error in one place (`RPCError+Domain.swift`).
package struct DirectoryError: Error, Equatable, Sendable {
    package enum Code: Equatable, Sendable {
        /// A parameter is wrong; `parameter` names it.
        case invalid(parameter: String)
        case termTooShort(term: String, minimum: Int)
        /// `lookup` of an id the directory does not know.
        case unknownPodcast(Int64)
        /// The rate limit (`search_rate_limit`, described as `limit`) allows the next request in this many seconds.
        case rateLimited(retryAfterSeconds: Int, limit: String)
        /// Stopped before it finished (a newer search on the same connection).
        case cancelled
        /// Not reached; `transferError` is the transfer's error code.
        case unreachable(transferError: String)
        case httpStatus(Int, url: String)
        /// Not JSON, or not JSON of the expected shape.
        case badResponse(url: String)
    }

    package var code: Code
    /// What happened, as a clause the protocol layer frames.
    package var message: String

    static func invalid(_ message: String, parameter: String) -> Self {
        Self(code: .invalid(parameter: parameter), message: message)
    }

    static func badResponse(_ message: String, url: String) -> Self {
        Self(code: .badResponse(url: url), message: message)
    }
}
