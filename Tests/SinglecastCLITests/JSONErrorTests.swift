import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// With `--json`, errors are JSON too: `{"error":{"code":…,"reason":…,"message":…}}` on stderr, with the exit
/// statuses of the text output.
@Suite struct JSONErrorTests {
    /// The one line on stderr, parsed.
    func error(_ run: CLIRun) throws -> [String: JSONValue] {
        #expect(run.stdout == "")
        #expect(run.stderr.hasSuffix("\n"))
        #expect(run.stderr.filter { $0 == "\n" }.count == 1)
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(run.stderr.utf8))
        guard case .object(let outer) = value, outer.count == 1, case .object(let error)? = outer["error"] else {
            Issue.record("not an error object: \(run.stderr)")
            return [:]
        }
        #expect(Set(error.keys) == ["code", "reason", "message"])
        return error
    }

    @Test func usageErrorIsJSONWithStatus64() async throws {
        for arguments in [["--json", "status", "--frob"], ["status", "--frob", "--json"], ["--json", "stauts"]] {
            let run = await runCLI(arguments)
            #expect(run.status == 64)
            let error = try error(run)
            #expect(error["code"] == .integer(64))
            let reason = JSONValue.string(arguments.contains("stauts") ? "unknown_subcommand" : "unknown_option")
            #expect(error["reason"] == reason)
            #expect(
                error["message"]
                    == .string(
                        arguments.contains("stauts")
                            ? "Unknown subcommand 'stauts'. Did you mean 'status'?" : "Unknown option '--frob'"
                    )
            )
        }
        // `--json` is the flag, not the value `--socket` lacks.
        let missing = await runCLI(["status", "--socket", "--json"])
        #expect(missing.status == 64)
        #expect(try error(missing)["message"] == .string("Missing value for '--socket <path>'"))
        // A command's own check fails after parsing.
        let run = await runCLI(["--json", "pause"])
        #expect(run.status == 64)
        #expect(try error(run)["reason"] == .string("validation"))
    }

    @Test func withoutJSONUsageErrorsStayText() async {
        let run = await runCLI(["status", "--frob"])
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("Error: Unknown option '--frob'\n"))
        // After `--`, `--json` is an argument, not the flag.
        let terminated = await runCLI(["enqueue", "--", "--json", "--frob"])
        #expect(!terminated.stderr.hasPrefix("{"))
    }

    @Test func daemonErrorCarriesItsCodeAndReasonWithStatus1() async throws {
        let rpc = RPCError(
            code: -32602,
            message: "Invalid params: there is no download 999; 'singlecastctl downloads' lists them.",
            reason: "unknown_download",
            details: ["id": "999"]
        )
        let response = WireCoding.errorLine(RPCErrorResponse(id: .integer(1), error: rpc))
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(
                directory: directory,
                behavior: .reply([String(decoding: response, as: UTF8.self).trimmingCharacters(in: .newlines)])
            )
            return await runCLI(["show", "999", "--json", "--socket", server.path])
        }
        #expect(run.status == 1)
        let error = try error(run)
        #expect(error["code"] == .integer(-32602))
        #expect(error["reason"] == .string("unknown_download"))
        #expect(error["message"] == .string(rpc.message))
    }

    @Test func daemonErrorWithoutReasonHasNullReason() async throws {
        let line = #"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Something odd."}}"#
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            return await runCLI(["--json", "ping", "--socket", server.path])
        }
        #expect(run.status == 1)
        let error = try error(run)
        #expect(error["code"] == .integer(-32000))
        #expect(error["reason"] == .null)
        #expect(error["message"] == .string("Something odd."))
    }

    @Test func unreachableDaemonIsJSONWithStatus69() async throws {
        let run = try await withTemporaryDirectory { directory in
            await runCLI(["downloads", "--json", "--socket", directory + "/none.sock"])
        }
        #expect(run.status == 69)
        let error = try error(run)
        #expect(error["code"] == .integer(69))
        #expect(error["reason"] == .string("not_running"))
        guard case .string(let message)? = error["message"] else {
            Issue.record("no message")
            return
        }
        #expect(message.hasPrefix("singlecastd is not running"))
    }

    @Test func clientSideFailureIsJSONWithStatus1() async throws {
        let run = try await withTemporaryDirectory { directory in
            await runCLI([
                "enqueue", "https://a.example/1.mp3", "--user", "ada", "--password-file", directory + "/missing",
                "--json", "--socket", directory + "/none.sock",
            ])
        }
        #expect(run.status == 1)
        let error = try error(run)
        #expect(error["code"] == .integer(1))
        #expect(error["reason"] == .string("cannot_read_file"))
    }
}
