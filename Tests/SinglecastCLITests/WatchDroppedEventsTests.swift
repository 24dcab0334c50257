import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// `watch` says so when the daemon dropped events it could not send in time (`events.dropped`).
@Suite struct WatchDroppedEventsTests {
    static let lines = [
        #"{"jsonrpc":"2.0","id":1,"result":{"topics":["daemon","downloads"]}}"#,
        #"{"jsonrpc":"2.0","method":"events.dropped","params":{"at":"2026-11-29T12:04:00Z","count":1500}}"#,
        #"{"jsonrpc":"2.0","method":"daemon.stopping","params":{"at":"2026-11-29T12:05:00Z"}}"#,
    ]

    @Test func watchPrintsHowManyEventsWereDropped() async throws {
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(Self.lines))
            return await runCLI(["watch", "--socket", server.path])
        }
        #expect(run.stderr == "")
        #expect(run.status == 0)
        #expect(
            run.stdout == """
                \(Timestamps.text("2026-11-29T12:04:00Z", zone: .system)) … 1,500 events dropped (singlecastd could not send them in time)
                \(Timestamps.text("2026-11-29T12:05:00Z", zone: .system)) daemon.stopping

                """
        )
    }

    @Test func jsonShowsTheEventAsSent() async throws {
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(directory: directory, behavior: .reply(Self.lines))
            return await runCLI(["watch", "--json", "--socket", server.path])
        }
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").first.map(String.init) == Self.lines[1])
    }

    @Test func oneDroppedEventIsSingular() {
        let params: JSONValue = .object(["at": .string("T"), "count": .integer(1)])
        #expect(
            WatchCommand.eventLine("events.dropped", params)
                == "T … 1 event dropped (singlecastd could not send it in time)\n"
        )
    }
}
