import Foundation
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// The gPodder API's JSON as the server sends it, and as singlecast sends it.
@Suite("Sync wire")
struct SyncWireTests {
    @Test("subscription changes: URLs kept, entries of the wrong type skipped and counted")
    func subscriptionChanges() throws {
        let body = Data(#"{"add":["https://f/a",7,null,""],"remove":["https://f/b"],"timestamp":1796421678}"#.utf8)
        let changes = try SyncWire.subscriptionChanges(body)
        #expect(changes.add == ["https://f/a"])
        #expect(changes.remove == ["https://f/b"])
        #expect(changes.timestamp == 1_796_421_678)
        #expect(changes.skipped == 3)
    }

    @Test(
        "malformed, mistyped or timestamp-less answers are refused as bad responses",
        arguments: [#"{"add":[]"#, "<html>", #"{"add":"x","timestamp":1}"#, #"{"add":[]}"#, #"{"timestamp":-5}"#, "[]"]
    )
    func refused(_ text: String) {
        #expect(throws: SyncError.self) { try SyncWire.subscriptionChanges(Data(text.utf8)) }
    }

    @Test("episode actions as gpodder.net sends them; unusable ones are skipped, not fatal")
    func actions() throws {
        let body = Data(
            """
            {"actions":[
              {"podcast":"https://f/a","episode":"https://f/e1","guid":null,"device":"phone","action":"play",
               "timestamp":"2026-12-04T20:00:00","started":0,"position":1800,"total":1800},
              {"podcast":"https://f/a","episode":"https://f/e2","action":"PLAY","position":1e30},
              {"podcast":"https://f/a","action":"play"},
              {"podcast":"https://f/a","episode":"https://f/e3","action":"rewind"}
            ],"timestamp":1796414400}
            """.utf8
        )
        let parsed = try SyncWire.actions(body)
        #expect(parsed.actions.count == 2)
        #expect(parsed.skipped == 2)
        let first = try #require(parsed.actions.first)
        #expect(first.timestamp == 1_796_414_400)
        #expect(first.reachedEnd)
        #expect(parsed.actions[1].position == nil)
        #expect(!parsed.actions[1].reachedEnd)
    }

    @Test("an answer over the size bound is refused before it is parsed")
    func sizeBound() {
        let huge = Data(count: Int(SyncWire.maxResponseBytes) + 1)
        #expect(throws: SyncError.self) { try SyncWire.actions(huge) }
    }

    @Test("action timestamps are written as the API reads them")
    func timestamps() {
        #expect(SyncWire.formatTimestamp(milliseconds: 1_796_414_400_999) == "2026-12-04T20:00:00")
        #expect(SyncWire.parseTimestamp("2026-12-04T20:00:00") == 1_796_414_400)
        #expect(SyncWire.formatTimestamp(milliseconds: 0) == "1970-01-01T00:00:00")
    }

    @Test("uploaded actions carry started, position and total on plays only")
    func actionUpload() throws {
        let entries = [
            SyncOutboxEntry(
                id: 1,
                kind: .play,
                podcastURL: "https://f/a",
                episodeURL: "https://f/e",
                guid: "g",
                position: 600,
                total: 600,
                at: 1_796_414_400_000
            ),
            SyncOutboxEntry(
                id: 2,
                kind: .delete,
                podcastURL: "https://f/a",
                episodeURL: "https://f/e",
                at: 1_796_414_401_000
            ),
        ]
        let json =
            try JSONSerialization.jsonObject(with: SyncWire.actionUpload(entries, device: "home")) as? [[String: Any]]
        let sent = try #require(json)
        #expect(sent.count == 2)
        #expect(sent[0]["action"] as? String == "play")
        #expect(sent[0]["position"] as? Int == 600)
        #expect(sent[0]["started"] as? Int == 0)
        #expect(sent[0]["device"] as? String == "home")
        #expect(sent[0]["timestamp"] as? String == "2026-12-04T20:00:00")
        #expect(sent[1]["position"] == nil)
    }

    @Test("a play of unknown length goes up in the API's minimal form, without started, position and total")
    func minimalPlay() throws {
        let entry = SyncOutboxEntry(id: 1, kind: .play, podcastURL: "https://f/a", episodeURL: "https://f/e", at: 1000)
        let json = try JSONSerialization.jsonObject(with: SyncWire.actionUpload([entry], device: "home"))
        let sent = try #require((json as? [[String: Any]])?.first)
        #expect(sent["action"] as? String == "play")
        #expect(sent["started"] == nil && sent["position"] == nil && sent["total"] == nil, "\(sent)")
    }

    @Test("user and device names are single path segments")
    func paths() {
        let (url, body) = SyncRequest.pullSubscriptions(device: "my phone/2", since: 5)
            .http(server: "https://g.example", flavor: .gpodder, user: "ada lovelace", device: "home")
        #expect(url == "https://g.example/api/2/subscriptions/ada%20lovelace/my%20phone%2F2.json?since=5")
        #expect(body == nil)
        let (nextcloud, _) = SyncRequest.pullActions(since: 9)
            .http(server: "https://n.example", flavor: .nextcloud, user: "ada", device: "home")
        #expect(nextcloud == "https://n.example/index.php/apps/gpoddersync/episode_action?since=9")
    }
}
