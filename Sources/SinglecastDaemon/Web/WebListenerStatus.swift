import SinglecastProtocol
import Synchronization

/// What the HTTP listener serves now: written by the listener when it starts, stops or moves, read by `status` and
/// the systemd status line.
package final class WebListenerStatus: Sendable {
    private struct State {
        var listening: [String] = []
        var auth = "basic"
        var connections: @Sendable () -> Int = { 0 }
    }

    private let state = Mutex(State())

    package init() {}

    func update(listening: [String], basicAuth: Bool, connections: @escaping @Sendable () -> Int) {
        state.withLock { $0 = State(listening: listening, auth: basicAuth ? "basic" : "off", connections: connections) }
    }

    /// `status`'s `http` member; `nil` while nothing listens.
    func status() -> StatusResult.HTTP? {
        let state = state.withLock { $0 }
        guard !state.listening.isEmpty else { return nil }
        return StatusResult.HTTP(listening: state.listening, auth: state.auth, connections: state.connections())
    }

    /// `http://127.0.0.1:8372`, for the status line; `nil` while nothing listens.
    var summary: String? {
        let listening = state.withLock { $0.listening }
        return listening.isEmpty ? nil : listening.joined(separator: ", ")
    }
}
