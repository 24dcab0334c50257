import Foundation
import SinglecastDaemon
import SinglecastProtocol
import Testing

/// `enqueue` asks `RequestHeader` as the client does: it used to take a header the client refuses.
@Suite struct RequestHeaderEnqueueTests {
    @Test func aHeaderTheClientRefusesIsRefusedByTheDaemon() async throws {
        try await InProcessRouter.with { daemon in
            for header in ["X A: 1", #"X-A: 1\u2028X-B: 2"#] {
                let line =
                    #"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"urls":["http://127.0.0.1:9/a"],"headers":["\#(header)"]}}"#
                guard case .error(_, let refusal) = try await daemon.answer(line) else {
                    Issue.record("\(header) was taken")
                    continue
                }
                #expect(refusal.reason == "invalid_params")
                #expect(refusal.data?.details?["parameter"] == "headers", "\(header)")
            }
        }
    }
}
