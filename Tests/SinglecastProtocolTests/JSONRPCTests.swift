import Foundation
import SinglecastProtocol
import Testing

@Suite struct JSONRPCTests {
    private func parse(_ text: String) -> Result<RPCRequest, RPCErrorResponse> {
        RPCRequest.parse(line: Array(text.utf8))
    }

    @Test func validRequestsKeepTheirIdExactly() throws {
        let numeric = try parse(#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#).get()
        #expect(numeric.id == .integer(9_007_199_254_740_993))
        let text = try parse(#"{"jsonrpc":"2.0","id":"abc","method":"watch","params":{"topics":["daemon"]}}"#).get()
        #expect(text.id == .string("abc"))
        #expect(text.params == .object(["topics": .array([.string("daemon")])]))
        let notification = try parse(#"{"jsonrpc":"2.0","method":"ping"}"#).get()
        #expect(notification.id == nil)
        let nullID = try parse(#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).get()
        #expect(nullID.id == .null)
    }

    @Test(arguments: [
        ("{", -32700, "not valid JSON"),
        ("", -32700, "not valid JSON"),
        ("[]", -32600, "a batch (a JSON array) holds several requests"),
        ("\"ping\"", -32600, "not a string"),
        (#"{"id":1,"method":"ping"}"#, -32600, "\"jsonrpc\" must be \"2.0\""),
        (#"{"jsonrpc":"2.0","id":1}"#, -32600, "\"method\" must be a string"),
        (#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, -32600, "\"id\" must be a string, a number or null"),
        (#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#, -32600, "\"params\" must be an object or an array"),
        (String(repeating: "[", count: 100_000), -32700, "nests arrays and objects more than 64 deep"),
    ])
    func malformedRequests(line: String, code: Int, fragment: String) {
        guard case .failure(let response) = parse(line) else {
            Issue.record("parsed \(line.prefix(40))")
            return
        }
        #expect(response.error.code == code)
        #expect(response.error.message.contains(fragment), "\(response.error.message)")
    }

    /// Numbers beyond 64 bits were read as Doubles and answered changed (`99999999999999999999999` as `1e+23`).
    @Test(arguments: [
        "99999999999999999999999", "-9223372036854775809", "9223372036854775808", "1e300", "-1.5e19",
    ])
    func idsThatCannotComeBackUnchangedAreRefused(id: String) {
        guard case .failure(let response) = parse(#"{"jsonrpc":"2.0","id":\#(id),"method":"ping"}"#) else {
            Issue.record("accepted id \(id)")
            return
        }
        #expect(response.error.code == RPCError.invalidRequestCode)
        #expect(response.id == .null)
    }

    @Test func numberIDsWithinRangeAreKept() throws {
        #expect(try parse(#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#).get().id == .integer(.min))
        #expect(try parse(#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}"#).get().id == .integer(.max))
        #expect(try parse(#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).get().id == .double(1.5))
        #expect(try parse(#"{"jsonrpc":"2.0","id":-0.25e3,"method":"ping"}"#).get().id != nil)
    }

    /// Each token keeps its kind, whichever kind `JSONValue` tries first: a string that spells a number or a boolean
    /// stays a string, and a number or boolean never becomes one.
    @Test func everyTokenKeepsItsKind() throws {
        let params = try parse(
            #"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":["1","true","null","1.5",1,true,null,1.5,-2e3,[],{}]}}"#
        ).get().params
        let expected: [JSONValue] = [
            .string("1"), .string("true"), .string("null"), .string("1.5"), .integer(1), .bool(true), .null,
            .double(1.5), .integer(-2000), .array([]), .object([:]),
        ]
        guard case .object(let fields)? = params, case .array(let values)? = fields["a"] else {
            Issue.record("params: \(String(describing: params))")
            return
        }
        #expect(values.count == expected.count)
        for (value, wanted) in zip(values, expected) where value != wanted {
            // -2e3 may be read as a whole number or as a Double; either is the same number.
            if case .double(let number) = value, case .integer(let whole) = wanted, number == Double(whole) { continue }
            Issue.record("\(value) instead of \(wanted)")
        }
    }

    /// Arrays of one kind are read whole; an array that only starts like one, or mixes kinds, keeps each element's.
    @Test(arguments: [
        (#"["a","b"]"#, [JSONValue.string("a"), .string("b")]),
        ("[1,2,3]", [.integer(1), .integer(2), .integer(3)]),
        (#"["a",1]"#, [.string("a"), .integer(1)]),
        ("[1,2.5]", [.integer(1), .double(2.5)]),
        ("[1,9223372036854775808]", [.integer(1), .double(9_223_372_036_854_775_808)]),
        ("[true,false]", [.bool(true), .bool(false)]),
        (
            #"[1,"1",null,[2],{"k":3}]"#,
            [.integer(1), .string("1"), .null, .array([.integer(2)]), .object(["k": .integer(3)])]
        ),
        ("[]", []),
    ])
    func arraysKeepEachElementsKind(json: String, expected: [JSONValue]) throws {
        let params = try parse(#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"# + json + "}}").get().params
        #expect(params == .object(["a": .array(expected)]))
    }

    /// Decoding 500 nested arrays inside a 1 KB request took 4 s of CPU; deep nesting is refused before decoding.
    @Test func deepNestingIsRefusedWithoutDecoding() throws {
        for depth in [65, 500, 100_000] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let started = ContinuousClock.now
            guard
                case .failure(let response) = parse(#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[\#(nested)]}"#)
            else {
                Issue.record("accepted \(depth) levels")
                continue
            }
            #expect(ContinuousClock.now - started < .seconds(1))
            #expect(response.error.code == RPCError.parseErrorCode)
            #expect(response.error.message.contains("more than 64 deep"))
        }
        // Within the limit, and brackets inside strings do not count.
        let fine = String(repeating: "[", count: 62) + String(repeating: "]", count: 62)
        #expect(try parse(#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[\#(fine)]}"#).get().id == .integer(1))
        let quoted = String(repeating: "[{", count: 1_000) + #"\"]"#
        #expect(try parse(#"{"jsonrpc":"2.0","id":2,"method":"ping","params":["\#(quoted)"]}"#).get().id == .integer(2))
    }

    @Test func invalidUTF8IsAParseErrorThatSaysSo() {
        guard case .failure(let response) = RPCRequest.parse(line: [0x7B, 0xC3, 0x28, 0x7D]) else {
            Issue.record("accepted invalid UTF-8")
            return
        }
        #expect(response.error.code == RPCError.parseErrorCode)
        #expect(response.error.message == "Parse error: the line is not valid UTF-8.")
        #expect(response.id == .null)
    }

    /// An answer repeats its request's `id` unchanged, so a long one cannot be cut as error texts are: it is refused,
    /// and the refusal is short.
    @Test func anIDLongerThanAnyTextTheDaemonRepeatsIsRefused() throws {
        let longest = String(repeating: "é", count: RPCError.longestText)
        #expect(try parse(#"{"jsonrpc":"2.0","id":"\#(longest)","method":"ping"}"#).get().id == .string(longest))
        for length in [RPCError.longestText + 1, 900_000] {
            let id = String(repeating: "i", count: length)
            guard case .failure(let response) = parse(#"{"jsonrpc":"2.0","id":"\#(id)","method":"ping"}"#) else {
                Issue.record("accepted an id of \(length) characters")
                continue
            }
            #expect(response.id == .null)
            #expect(response.error.code == RPCError.invalidRequestCode)
            #expect(
                response.error.message
                    == "Invalid request: a string \"id\" must be at most 1000 characters, since the answer repeats it."
            )
            #expect(WireCoding.errorLine(response).count < 300)
        }
    }

    @Test func errorForAReadableRequestCarriesItsID() {
        guard case .failure(let response) = parse(#"{"jsonrpc":"1.0","id":"q","method":"ping"}"#) else {
            Issue.record("accepted jsonrpc 1.0")
            return
        }
        #expect(response.id == .string("q"))
    }

    @Test func linesAreCompactSortedAndNewlineTerminated() throws {
        let result = try WireCoding.resultLine(id: .integer(1), result: PingResult())
        #expect(String(decoding: result, as: UTF8.self) == #"{"id":1,"jsonrpc":"2.0","result":{"pong":true}}"# + "\n")
        let error = WireCoding.errorLine(RPCErrorResponse(id: .null, error: .methodNotFound("x")))
        #expect(
            String(decoding: error, as: UTF8.self)
                == #"{"error":{"code":-32601,"data":{"details":{"method":"x"},"reason":"method_not_found"},"message":"Method not found: 'x'."},"id":null,"jsonrpc":"2.0"}"#
                + "\n"
        )
        let request = try RPCRequest(id: .integer(3), method: "status").encodedLine()
        #expect(String(decoding: request, as: UTF8.self) == #"{"id":3,"jsonrpc":"2.0","method":"status"}"# + "\n")
    }

    /// Errors repeat what the client sent: 32 clients sending 900 KB method names got each one back twice (message and
    /// details), in answers the daemon held until the clients read them, and its peak went 52 MiB over its baseline.
    @Test func clientTextIsRepeatedOnlyInPart() throws {
        let name = String(repeating: "m", count: 900_000)
        let error = RPCError.methodNotFound(name)
        #expect(error.message.count == RPCError.longestText)
        #expect(error.message.hasPrefix("Method not found: 'mmm") && error.message.hasSuffix("m…"))
        #expect(error.data?.details?["method"] == String(repeating: "m", count: RPCError.longestText - 1) + "…")
        #expect(WireCoding.errorLine(RPCErrorResponse(id: .null, error: error)).count < 2 * RPCError.longestText + 200)
        let parameter = RPCError.invalidParams("unknown parameter '\(name)'", parameter: name)
        #expect(parameter.message.count == RPCError.longestText)
        #expect(parameter.data?.details?["parameter"]?.count == RPCError.longestText)
        // Text of exactly the limit is kept whole.
        let longest = String(repeating: "é", count: RPCError.longestText)
        #expect(
            RPCError(code: 1, message: longest, reason: "r", details: ["d": longest]).data?.details?["d"] == longest
        )
        #expect(RPCError(code: 1, message: longest, reason: "r").message == longest)
    }

    @Test(arguments: [JSONValue.integer(7), .string("a/b \u{e9}\""), .null])
    func aResultEncodedBeforehandMakesTheSameLine(id: JSONValue) throws {
        let result = DownloadsResult(downloads: [
            DownloadInfo(
                id: 41,
                url: "https://cdn.example.com/é/ep 1.mp3?x=1&y=2",
                finalURL: nil,
                file: "/home/ada/episodes/ep \"1\".mp3",
                state: .active,
                pauseReason: nil,
                priority: -2,
                position: 3,
                bytesDone: 1 << 40,
                bytesTotal: nil,
                speed: 1234.5,
                etaSeconds: 0.25,
                attempts: 1,
                lastError: DownloadErrorInfo(code: "network", message: "reset", httpStatus: nil),
                nextRetryAt: nil,
                addedAt: "2026-11-29T13:40:00Z",
                completedAt: nil,
                headerNames: ["Authorization"],
                hasCredentials: true
            )
        ])
        #expect(
            try WireCoding.resultLine(id: id, encoded: WireCoding.encoded(result))
                == WireCoding.resultLine(id: id, result: result)
        )
    }

    @Test func incomingMessagesAreClassified() throws {
        guard
            case .result(let id, let value) = try RPCIncoming.parse(
                line: Array(#"{"jsonrpc":"2.0","id":2,"result":{"pong":true}}"#.utf8)
            )
        else {
            Issue.record("not a result")
            return
        }
        #expect(id == .integer(2))
        #expect(try WireCoding.decode(PingResult.self, from: value) == PingResult())
        guard
            case .notification(let method, _) = try RPCIncoming.parse(
                line: Array(#"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"x"}}"#.utf8)
            )
        else {
            Issue.record("not a notification")
            return
        }
        #expect(method == "daemon.stopping")
    }

    @Test func defaultSocketPathFollowsXDGRuntimeDir() {
        #expect(
            SocketLocation.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"], uid: 1000)
                == "/run/user/1000/singlecast/control.sock"
        )
        #expect(SocketLocation.defaultSocketPath(environment: [:], uid: 42) == "/tmp/singlecast-42/control.sock")
        #expect(
            SocketLocation.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "run"], uid: 42)
                == "/tmp/singlecast-42/control.sock"
        )
    }
}
