import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// The client against a real Unix socket served by ``TestServer``.
@Suite struct EndToEndTests {
    static let statusLine = try! String(
        decoding: WireCoding.resultLine(id: .integer(1), result: FormattingTests.status),
        as: UTF8.self
    ).trimmingCharacters(in: .newlines)

    @Test func statusHuman() async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([Self.statusLine]))
            let run = await runCLI(["status", "--socket", server.path])
            #expect(run.stderr == "")
            #expect(run.status == 0)
            #expect(run.stdout == FormattingTests.statusText)
            let request = try server.request()
            #expect(request.method == "status")
            #expect(request.id == .integer(1))
            #expect(request.params == nil)
            #expect(server.requests() == [#"{"id":1,"jsonrpc":"2.0","method":"status"}"#])
        }
    }

    @Test func statusJSONIsTheResultAsReceived() async throws {
        try await withTemporaryDirectory { directory in
            // Keys out of order and a field this client does not know: printed sorted, kept, nothing else.
            let line = #"{"jsonrpc":"2.0","result":{"zeta":1,"alpha":{"b":true,"a":null},"version":"0.1.0"},"id":1}"#
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            let run = await runCLI(["--json", "status"], environment: ["SINGLECAST_SOCKET": server.path])
            #expect(run.status == 0)
            #expect(run.stdout == #"{"alpha":{"a":null,"b":true},"version":"0.1.0","zeta":1}"# + "\n")
            #expect(run.stderr == "")
        }
    }

    @Test func notificationsBeforeTheResponseAreSkipped() async throws {
        try await withTemporaryDirectory { directory in
            let lines = [
                #"{"jsonrpc":"2.0","method":"daemon.reloaded","params":{"at":"2026-11-29T12:00:00Z"}}"#,
                #"{"jsonrpc":"2.0","id":99,"result":{"pong":false}}"#,
                #"{"jsonrpc":"2.0","id":1,"result":{"pong":true}}"#,
            ]
            let server = try TestServer(directory: directory, behavior: .reply(lines))
            let run = await runCLI(["ping", "--socket", server.path, "--json"])
            #expect(run.status == 0)
            #expect(run.stdout == #"{"pong":true}"# + "\n")
        }
    }

    @Test func pingShowsRoundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(
                directory: directory,
                behavior: .reply([#"{"jsonrpc":"2.0","id":1,"result":{"pong":true}}"#])
            )
            let run = await runCLI(["ping", "--socket", server.path])
            #expect(run.status == 0)
            #expect(run.stdout.wholeMatch(of: /pong \(\d+\.\d ms\)\n/) != nil, "\(run.stdout)")
            #expect(try server.request().method == "ping")
        }
    }

    @Test func versionHumanJSONAndMismatchWarning() async throws {
        let result = #"{"daemon":"0.2.0","protocol":2,"sqlite":"3.40.1","libcurl":"7.88.1"}"#
        let line = #"{"jsonrpc":"2.0","id":1,"result":"# + result + "}"
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            let run = await runCLI(["version", "--socket", server.path])
            #expect(run.status == 0)
            #expect(
                run.stdout == """
                    Client   singlecastctl \(SinglecastVersion.current) (protocol \(ProtocolVersion.current))
                    Daemon   singlecastd 0.2.0 (protocol 2)
                    SQLite   3.40.1
                    libcurl  7.88.1

                    """
            )
            #expect(
                run.stderr
                    == "Warning: singlecastctl speaks protocol 1 but singlecastd speaks protocol 2; install matching versions of both.\n"
            )
        }
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            let run = await runCLI(["version", "--json", "--socket", server.path])
            #expect(run.status == 0)
            #expect(
                run.stdout
                    == #"{"client":{"protocol":\#(ProtocolVersion.current),"version":"\#(SinglecastVersion.current)"},"#
                    + #""daemon":{"daemon":"0.2.0","libcurl":"7.88.1","protocol":2,"sqlite":"3.40.1"}}"# + "\n"
            )
        }
    }

    static let watchLines = [
        #"{"jsonrpc":"2.0","id":1,"result":{"topics":["daemon"]}}"#,
        #"{"jsonrpc":"2.0","method":"daemon.reloaded","params":{"at":"2026-11-29T12:00:00Z","message":"ok"}}"#,
        #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
    ]

    @Test func watchPrintsEventsUntilTheDaemonStops() async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(Self.watchLines))
            let run = await runCLI(["watch", "--topic", "daemon", "--socket", server.path])
            #expect(run.stderr == "")
            #expect(run.status == 0)
            #expect(
                run.stdout == """
                    \(Timestamps.text("2026-11-29T12:00:00Z", zone: .system)) daemon.reloaded  ok
                    \(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping

                    """
            )
            let request = try server.request()
            #expect(request.method == "watch")
            #expect(request.params == .object(["topics": .array([.string("daemon")])]))
        }
    }

    @Test func watchJSONPrintsRawLinesAndOmitsParamsWithoutTopics() async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(Self.watchLines))
            let run = await runCLI(["watch", "--json", "--socket", server.path])
            #expect(run.status == 0)
            #expect(run.stdout == Self.watchLines.dropFirst().map { $0 + "\n" }.joined())
            #expect(try server.request().params == nil)
        }
    }

    @Test func watchEndingWithoutStoppingIsAnError() async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(Array(Self.watchLines.prefix(2))))
            let run = await runCLI(["watch", "--socket", server.path])
            #expect(run.status == 1)
            #expect(run.stdout == "\(Timestamps.text("2026-11-29T12:00:00Z", zone: .system)) daemon.reloaded  ok\n")
            #expect(
                run.stderr
                    == "Error: singlecastd at \(server.path) closed the connection without announcing that it was stopping.\n"
            )
        }
    }

    @Test func noSocketMeansNotRunning() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/control.sock"
            let run = await runCLI(["status"], environment: ["SINGLECAST_SOCKET": path])
            #expect(run.status == 69)
            #expect(run.stdout == "")
            #expect(
                run.stderr
                    == "Error: singlecastd is not running (no socket at \(path)). "
                    + "Start it with 'systemctl --user start singlecastd' or run 'singlecastd'.\n"
            )
        }
    }

    @Test func defaultSocketComesFromXDGRuntimeDir() async throws {
        try await withTemporaryDirectory { directory in
            let run = await runCLI(["ping"], environment: ["XDG_RUNTIME_DIR": directory])
            #expect(run.status == 69)
            #expect(run.stderr.contains("(no socket at \(directory)/singlecast/control.sock)"))
        }
    }

    @Test func staleSocketMeansNothingListening() async throws {
        try await withTemporaryDirectory { directory in
            // A bound socket that never listens: what a crashed daemon leaves behind.
            let path = directory + "/stale.sock"
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            try TestServer.bind(descriptor, to: path)
            let run = await runCLI(["ping", "--socket", path])
            #expect(run.status == 69)
            #expect(
                run.stderr
                    == "Error: singlecastd is not running (nothing is listening at \(path)). "
                    + "Start it with 'systemctl --user start singlecastd' or run 'singlecastd'.\n"
            )
        }
    }

    @Test func otherConnectErrorsAreUnavailableToo() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/not-a-directory/control.sock"
            #expect(FileManager.default.createFile(atPath: directory + "/not-a-directory", contents: Data()))
            let run = await runCLI(["ping", "--socket", path])
            #expect(run.status == 69)
            #expect(run.stderr == "Error: Cannot connect to singlecastd at \(path): Not a directory.\n")
        }
        let long = "/tmp/" + String(repeating: "x", count: 120)
        let run = await runCLI(["ping", "--socket", long])
        #expect(run.status == 69)
        #expect(
            run.stderr.hasPrefix("Error: The socket path \(long) is 125 bytes long; Unix sockets allow at most 107.")
        )
    }

    @Test func daemonErrorIsPrintedAndExitsOne() async throws {
        try await withTemporaryDirectory { directory in
            let error = RPCErrorResponse(id: .integer(1), error: .methodNotFound("status", suggestion: nil))
            let line = String(decoding: WireCoding.errorLine(error), as: UTF8.self).trimmingCharacters(in: .newlines)
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            let run = await runCLI(["status", "--socket", server.path])
            #expect(run.status == 1)
            #expect(run.stdout == "")
            #expect(run.stderr == "Error: Method not found: 'status'.\n")
        }
    }

    @Test func refusalWithNullIDIsReported() async throws {
        try await withTemporaryDirectory { directory in
            let error = RPCErrorResponse(id: .null, error: .tooManyClients(limit: 64))
            let line = String(decoding: WireCoding.errorLine(error), as: UTF8.self).trimmingCharacters(in: .newlines)
            let server = try TestServer(directory: directory, behavior: .reply([line]))
            let run = await runCLI(["ping", "--socket", server.path])
            #expect(run.status == 1)
            #expect(
                run.stderr
                    == "Error: Too many clients: the daemon serves at most 64 connections at once; try again shortly.\n"
            )
        }
    }

    @Test func closingWithoutAnswerAndGarbageAreClearErrors() async throws {
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply([]))
            let run = await runCLI(["status", "--socket", server.path])
            #expect(run.status == 1)
            #expect(run.stderr == "Error: singlecastd at \(server.path) closed the connection without answering.\n")
        }
        try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(["hello"]))
            let run = await runCLI(["status", "--socket", server.path])
            #expect(run.status == 1)
            #expect(
                run.stderr == "Error: singlecastd sent an invalid reply: the line 'hello' is not a JSON-RPC message.\n"
            )
        }
    }

    @Test func wedgedDaemonTimesOut() async throws {
        try await withTemporaryDirectory { directory in
            // Silent far longer than the timeout, so only the timeout can have ended the wait; the bound is
            // loose because the whole suite shares two cores.
            let server = try TestServer(directory: directory, behavior: .silent(seconds: 600))
            let start = ContinuousClock.now
            let run = await runCLI(["status", "--socket", server.path], responseTimeout: .milliseconds(300))
            #expect(ContinuousClock.now - start < .seconds(300))
            #expect(run.status == 1)
            #expect(
                run.stderr
                    == "Error: singlecastd at \(server.path) did not answer within 0.3 s. It may be stuck; "
                    + "check its log (e.g. 'journalctl --user -u singlecastd').\n"
            )
        }
    }
}
