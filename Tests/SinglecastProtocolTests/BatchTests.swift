import Foundation
import SinglecastProtocol
import Testing

/// JSON-RPC 2.0 batches (specification section 6), as parsed from one line.
@Suite struct BatchTests {
    private func parse(_ text: String) -> RPCMessage { RPCMessage.parse(line: Array(text.utf8)) }

    private func singleError(_ text: String) -> RPCError? {
        guard case .single(.failure(let response)) = parse(text) else { return nil }
        #expect(response.id == .null)
        return response.error
    }

    @Test func aBatchKeepsItsMembersInOrderAndParsesEachOnItsOwn() throws {
        let message = parse(
            #"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"foo":"boo"},{"jsonrpc":"2.0","method":"status"},7]"#
        )
        guard case .batch(let members) = message else {
            Issue.record("not a batch: \(message)")
            return
        }
        #expect(members.count == 4)
        #expect(try members[0].get() == RPCRequest(id: .integer(1), method: "ping"))
        guard case .failure(let noVersion) = members[1], case .failure(let number) = members[3] else {
            Issue.record("malformed members were accepted: \(members)")
            return
        }
        #expect(noVersion.error.code == RPCError.invalidRequestCode)
        #expect(try members[2].get() == RPCRequest(id: nil, method: "status"))
        #expect(number.error.message.contains("a request must be a JSON object, not a number"))
    }

    @Test func aSingleRequestIsNotABatch() throws {
        guard case .single(.success(let request)) = parse(#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#) else {
            Issue.record("not parsed as one request")
            return
        }
        #expect(request.method == "ping")
    }

    @Test func anEmptyBatchIsOneInvalidRequest() throws {
        let error = try #require(singleError("[]"))
        #expect(error.code == RPCError.invalidRequestCode)
        #expect(error.message.contains("empty batch"))
    }

    @Test func invalidJSONIsOneParseErrorEvenWhenItLooksLikeABatch() throws {
        let error = try #require(singleError(#"[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method""#))
        #expect(error.code == RPCError.parseErrorCode)
    }

    @Test func theNestingLimitCountsTheBatchItself() throws {
        let deep =
            "[" + String(repeating: "[", count: RPCRequest.maximumNesting)
            + String(
                repeating: "]",
                count: RPCRequest.maximumNesting + 1
            )
        let error = try #require(singleError(deep))
        #expect(error.code == RPCError.parseErrorCode)
    }

    @Test func batchesBeyondTheLimitAreRefusedWhole() throws {
        let ping = #"{"jsonrpc":"2.0","method":"ping"}"#
        let largest = "[" + Array(repeating: ping, count: RPCMessage.maximumBatchSize).joined(separator: ",") + "]"
        guard case .batch(let members) = parse(largest) else {
            Issue.record("a batch of the largest size was refused")
            return
        }
        #expect(members.count == RPCMessage.maximumBatchSize)
        let tooMany = "[" + Array(repeating: ping, count: RPCMessage.maximumBatchSize + 1).joined(separator: ",") + "]"
        let error = try #require(singleError(tooMany))
        #expect(error.code == RPCError.invalidRequestCode)
        #expect(error.message.contains("at most 1000 requests and this one holds 1001"))
    }

    @Test func batchLinesJoinResponsesAndSayNothingForNone() throws {
        #expect(WireCoding.batchLine([]) == nil)
        let one = try WireCoding.resultLine(id: .integer(1), result: ["pong": true])
        let two = WireCoding.errorLine(RPCErrorResponse(id: .null, error: .invalidRequest("x")))
        let line = try #require(WireCoding.batchLine([one, two]))
        #expect(line.last == 10)
        #expect(line.dropLast().firstIndex(of: 10) == nil)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: line)
        guard case .array(let items) = decoded else {
            Issue.record("not an array: \(String(decoding: line, as: UTF8.self))")
            return
        }
        #expect(items.count == 2)
    }
}
