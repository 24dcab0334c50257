import Testing

@testable import SinglecastHTTP

/// The engine asks `RequestHeader` as the client and the daemon do: it used to send a header with an empty name,
/// and one with a NUL cut short at it.
@Suite struct RequestHeaderEngineTests {
    @Test(arguments: [": value", "X-Token: a\u{0}b", "X A: 1"])
    func aHeaderTheRuleRefusesIsNotSent(header: String) async throws {
        let file = try TestFile()
        var request = file.request("http://127.0.0.1:9/x")
        request.headers = [header]
        let outcome = try await withEngine { await $0.transfer(request, progress: { _ in }) }
        #expect(outcome.error?.code == .invalidRequest, "\(String(describing: outcome.error))")
    }
}
