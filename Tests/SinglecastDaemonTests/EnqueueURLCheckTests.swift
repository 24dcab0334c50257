import Foundation
import SinglecastDaemon
import SinglecastProtocol
import Testing

/// `enqueue` checks every URL before it queues any, by the quick look at the plain shape most URLs have and by the
/// full parse for the rest: both refuse what the other would.
@Suite struct EnqueueURLCheckTests {
    private func refusal(_ daemon: InProcessRouter, _ urls: [String]) async throws -> String? {
        let params = String(decoding: try JSONEncoder().encode(["urls": urls]), as: UTF8.self)
        let line = #"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":\#(params)}"#
        guard case .error(_, let refusal) = try await daemon.answer(line) else { return nil }
        #expect(refusal.reason == "invalid_params")
        return refusal.message
    }

    @Test func requireHTTPSRefusesPlainHTTPInEitherShape() async throws {
        var configuration = DaemonConfiguration()
        configuration.requireHTTPS = true
        try await InProcessRouter.with(configuration: configuration) { daemon in
            // Plain shape, and one with credentials that only the full parse reads.
            for url in ["http://127.0.0.1:9/a.mp3", "HTTP://user:secret@127.0.0.1:9/b.mp3"] {
                let message = try await refusal(daemon, ["https://127.0.0.1:9/ok.mp3", url])
                #expect(message?.contains("require_https is on") == true, "\(url): \(message ?? "queued")")
                #expect(message?.contains("secret") == false)
            }
            #expect(try await refusal(daemon, ["https://127.0.0.1:9/c.mp3", "HTTPS://u:p@127.0.0.1:9/d.mp3"]) == nil)
        }
    }

    @Test func anyRefusedURLQueuesNothing() async throws {
        try await InProcessRouter.with { daemon in
            for bad in ["ftp://127.0.0.1/a.mp3", "http:///a.mp3", "not a url", "https://"] {
                let message = try await refusal(daemon, ["http://127.0.0.1:9/good.mp3", bad])
                #expect(message != nil, "\(bad) was queued")
            }
            let listed = try await daemon.answer(#"{"jsonrpc":"2.0","id":2,"method":"downloads"}"#)
            guard case .result(_, let result) = listed else {
                Issue.record("downloads failed: \(listed)")
                return
            }
            #expect(String(decoding: try JSONEncoder().encode(result), as: UTF8.self).contains(#""downloads":[]"#))
        }
    }
}
