import FoundationEssentials
import SinglecastProtocol

/// `GET /session`: what the page needs before its first unsafe request, the CSRF token. Only an authenticated,
/// same-origin request gets here (``WebGate``), and another site's page cannot read the answer.
struct WebSessionRoute: WebRoute {
    let csrfToken: String

    func respond(to request: WebRequest) async -> WebResponse? {
        guard request.rawPath == "/session" else { return nil }
        guard request.method == .get || request.method == .head else { return .methodNotAllowed("GET, HEAD") }
        let body = #"{"user":"\#(WebGate.user)","csrf_header":"X-Singlecast-CSRF","csrf_token":"\#(csrfToken)"}"#
        return WebResponse(
            status: 200,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: .bytes(Array(body.utf8))
        )
    }
}

/// `POST /rpc`: one JSON-RPC 2.0 request or batch, the body a control-socket client sends as a line, answered by
/// the same ``Router``. A notification alone gets 204.
struct WebRPCRoute: WebRoute {
    let router: Router

    func respond(to request: WebRequest) async -> WebResponse? {
        guard request.rawPath == "/rpc" else { return nil }
        guard request.method == .post else { return .methodNotAllowed("POST") }
        guard let answer = await router.respond(to: request.body, connection: WebRPCConnection()) else {
            return WebResponse(status: 204, headers: [("Cache-Control", "no-store")])
        }
        return WebResponse(
            status: 200,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: .bytes(Array(answer))
        )
    }
}

/// An HTTP request has no connection to stream events on: `watch` over `/rpc` changes nothing; `/events` is the
/// stream.
private struct WebRPCConnection: ConnectionControl {
    func watch(_ selection: EventSelection) {}
}

extension WebResponse {
    /// 405 with the methods the path takes.
    static func methodNotAllowed(_ allow: String) -> WebResponse {
        WebResponse(
            status: 405,
            headers: [("Allow", allow), ("Content-Type", "text/plain; charset=utf-8")],
            body: .bytes(Array("405 Method Not Allowed\n".utf8))
        )
    }

    /// A short plain-text answer for a refusal.
    static func text(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> WebResponse {
        WebResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8")] + headers,
            body: .bytes(Array("\(status) \(message)\n".utf8))
        )
    }
}
