import Foundation
import SinglecastDaemon
import SinglecastProtocol
import Testing

/// Requests that once crashed, hung or misled the daemon, answered by the real router in process.
@Suite struct HostileRequestTests {
    private func error(_ answer: RPCIncoming) throws -> RPCError {
        guard case .error(_, let error) = answer else { throw RPCErrorMismatch(answer: answer) }
        return error
    }

    /// `"/dl\u0000x"` reached the kernel as `/dl`, which exists, so every candidate file name looked taken and the
    /// queue actor looped forever looking for a free one.
    @Test(.timeLimit(.minutes(1))) func aNULInTheDirectoryIsRefusedAtOnce() async throws {
        try await InProcessRouter.with { daemon in try await nulInTheDirectory(daemon) }
    }

    private func nulInTheDirectory(_ daemon: InProcessRouter) async throws {
        let directory = daemon.downloadDirectory + "\\u0000x"
        let answer = try await daemon.answer(
            #"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"urls":["http://127.0.0.1:9/a"],"directory":"\#(directory)"}}"#
        )
        let refused = try error(answer)
        #expect(refused.reason == "invalid_params")
        #expect(refused.data?.details?["parameter"] == "directory")
        #expect(refused.message.contains("NUL"))
        for (parameter, params) in [
            ("headers", #""headers":["X-Token: a\u0000b"]"#),
            ("user", #""user":"a\u0000b","password":"p""#),
            ("password", #""user":"u","password":"\u0000""#),
        ] {
            let line =
                #"{"jsonrpc":"2.0","id":2,"method":"enqueue","params":{"urls":["http://127.0.0.1:9/b"],\#(params)}}"#
            let refusal = try error(try await daemon.answer(line))
            #expect(refusal.data?.details?["parameter"] == parameter, "\(line)")
        }
    }

    /// The directory used to be created before the URLs were checked, so a refused request still left it behind.
    @Test func aRefusedEnqueueCreatesNoDirectory() async throws {
        try await InProcessRouter.with { daemon in
            for (index, url) in ["file:///etc/passwd", "ftp://127.0.0.1:9/x", "javascript:alert(1)", "http://"]
                .enumerated()
            {
                let directory = daemon.root.file("data/outside-\(index)/../../escape-\(index)")
                let line =
                    #"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"urls":["http://127.0.0.1:9/ok","\#(url)"],"directory":"\#(directory)"}}"#
                let refused = try error(try await daemon.answer(line))
                #expect(refused.reason == "invalid_params", "\(url)")
                #expect(!FileManager.default.fileExists(atPath: daemon.root.file("data/outside-\(index)")))
                #expect(!FileManager.default.fileExists(atPath: (directory as NSString).standardizingPath))
            }
            #expect(try await daemon.answer(#"{"jsonrpc":"2.0","id":2,"method":"downloads"}"#).isEmptyDownloadList)
        }
    }

    /// A number that does not fit an integer parameter was answered "'' has an invalid value", naming no parameter.
    @Test func aNumberThatDoesNotFitNamesItsParameter() async throws {
        try await InProcessRouter.with { daemon in
            for (method, params, parameter) in [
                ("enqueue", #"{"urls":["http://127.0.0.1:9/a"],"priority":1e300}"#, "priority"),
                ("show", #"{"id":1.5}"#, "id"),
                ("show", #"{"id":99999999999999999999999}"#, "id"),
                ("pause", #"{"ids":[1,2.5]}"#, "ids"),
                ("episodes", #"{"podcast":"x","limit":-1e30}"#, "limit"),
            ] {
                let line = #"{"jsonrpc":"2.0","id":7,"method":"\#(method)","params":\#(params)}"#
                let refused = try error(try await daemon.answer(line))
                #expect(refused.reason == "invalid_params", "\(line)")
                #expect(refused.data?.details?["parameter"] == parameter, "\(line)")
                #expect(refused.message.contains("'\(parameter)'"), "\(refused.message)")
            }
        }
    }

    /// Looking for a "did you mean" among the methods compared a 1 MB method name with each of them, quadratically:
    /// 23 s of CPU on one of the daemon's two cooperative threads for a single request line.
    @Test func aHugeUnknownMethodIsAnsweredAtOnce() async throws {
        try await InProcessRouter.with { daemon in
            let method = String(repeating: "pingx", count: 200_000)
            let started = ContinuousClock.now
            let refused = try error(try await daemon.answer(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)"}"#))
            #expect(ContinuousClock.now - started < .seconds(3))
            #expect(refused.reason == "method_not_found")
            #expect(!refused.message.contains("Did you mean"))
            let typo = try error(try await daemon.answer(#"{"jsonrpc":"2.0","id":2,"method":"stauts"}"#))
            #expect(typo.message.contains("Did you mean 'status'?"))
        }
    }
}

extension RPCIncoming {
    var isEmptyDownloadList: Bool {
        guard case .result(_, let value) = self, let list = try? WireCoding.decode(DownloadsResult.self, from: value)
        else { return false }
        return list.downloads.isEmpty
    }
}

struct RPCErrorMismatch: Error, CustomStringConvertible {
    var answer: RPCIncoming
    var description: String { "expected an error answer, got \(answer)" }
}
