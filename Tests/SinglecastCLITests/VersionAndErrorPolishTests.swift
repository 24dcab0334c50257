import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `version` without a daemon, and the daemon's errors in the user's words.
@Suite struct VersionAndErrorPolishTests {
    static let client = "singlecastctl \(SinglecastVersion.current) (protocol \(ProtocolVersion.current))"

    /// Which client is installed is worth knowing most when the daemon does not answer.
    @Test func versionShowsTheClientWhenTheDaemonIsDown() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/control.sock"
            let run = await runCLI(["version", "--socket", path])
            #expect(run.status == 69)
            #expect(run.stdout == "Client  \(Self.client)\nDaemon  unreachable\n")
            #expect(run.stderr.hasPrefix("Error: singlecastd is not running (no socket at \(path))."))

            let json = await runCLI(["version", "--json", "--socket", path])
            #expect(json.status == 69)
            #expect(
                json.stdout
                    == #"{"client":{"protocol":\#(ProtocolVersion.current),"version":"\#(SinglecastVersion.current)"},"#
                    + #""daemon":null}"# + "\n"
            )
            #expect(json.stderr.hasPrefix(#"{"error":{"code":69,"message":"singlecastd is not running"#))
            #expect(json.stderr.hasSuffix(#""reason":"not_running"}}"# + "\n"))
        }
    }

    static let invalidParams = RPCError(
        code: RPCError.invalidParamsCode,
        message: "Invalid params: there is no download 999; 'singlecastctl downloads' lists them.",
        reason: "unknown_download",
        details: ["id": "999"]
    )

    func answering(_ error: RPCError, _ arguments: [String]) async throws -> CLIRun {
        let response = WireCoding.errorLine(RPCErrorResponse(id: .integer(1), error: error))
        let line = String(decoding: response, as: UTF8.self).trimmingCharacters(in: .newlines)
        return try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            return await runCLI(arguments + ["--socket", server.path])
        }
    }

    /// "Invalid params:" is JSON-RPC's word for the mistake, not the user's.
    @Test func daemonErrorsDoNotStartWithJSONRPCWords() async throws {
        let run = try await answering(Self.invalidParams, ["show", "999"])
        #expect(run.status == 1)
        #expect(run.stderr == "Error: there is no download 999; 'singlecastctl downloads' lists them.\n")
    }

    /// `--json` keeps the daemon's message exactly as it came.
    @Test func jsonKeepsTheDaemonsMessage() async throws {
        let run = try await answering(Self.invalidParams, ["show", "999", "--json"])
        #expect(run.status == 1)
        let line = try JSONDecoder().decode(JSONValue.self, from: Data(run.stderr.utf8))
        #expect(
            line
                == .object([
                    "error": .object([
                        "code": .integer(-32602),
                        "reason": .string("unknown_download"),
                        "message": .string(Self.invalidParams.message),
                    ])
                ])
        )
    }
}
