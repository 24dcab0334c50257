import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the order of a sync decides, against the real gpodder-fastapi-router: URLs the server respells, plays the
/// phone uploads late, and played marks from before sync was turned on.
extension SyncTests {
    /// The API's action timestamp (UTC, no zone) of `date`.
    private static func apiTimestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: date)
    }

    @Test func theFirstSyncDoesNotSubscribeAgainToAFeedTheServerSpellsOtherwise() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            _ = try serve(site, ["a"])
            // The server normalises URLs as gpodder.net does: a comma in the path comes back as %2C, and nginx serves
            // both spellings.
            let feedURL = try site.serve(Self.feed(site, ["a"]), as: "phone,radio.xml")
            let rewritten = feedURL.replacingOccurrences(of: ",", with: "%2C")
            let server = try GPodderServer()
            // The phone has the same feed, which the server keeps in its own spelling.
            _ = try phone(server, ["subscribe", feedURL])
            #expect(try phone(server, ["subscriptions", "phone"]).contains(rewritten))

            let daemon = try syncingDaemon(server)
            try daemon.startAndWaitUntilReady()
            let client = try LineClient(path: daemon.socketPath)
            _ = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feedURL)"}"#)
            let synced = try ctl(daemon, ["sync", "--json"])
            #expect(synced.status == 0, "\(synced.stderr)\n\(daemon.log)")
            let result = try JSONDecoder().decode(SyncResult.self, from: Data(synced.stdout.utf8))
            #expect(result.report?.subscribed == 0, "\(daemon.log)")
            #expect(try client.result("podcasts", as: PodcastsResult.self).podcasts.map(\.feedURL) == [feedURL])
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aPlayThePhoneUploadsLateWithAnOldTimestampIsStillApplied() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            let feedURL = try serve(site, ["a", "b"])
            let server = try GPodderServer()
            _ = try phone(server, ["subscribe", feedURL])
            let daemon = try syncingDaemon(server)
            try daemon.startAndWaitUntilReady()
            #expect(try ctl(daemon, ["sync"]).status == 0, "\(daemon.log)")
            usleep(1_100_000)
            #expect(try ctl(daemon, ["sync"]).status == 0, "\(daemon.log)")

            // Heard to the end a week ago on a phone that was offline until now: this server files actions by their
            // own time, so the play lands before the cursor of the last sync.
            let weekAgo = Self.apiTimestamp(Date.now.addingTimeInterval(-7 * 86_400))
            _ = try phone(server, ["--timestamp", weekAgo, "play", feedURL, site.url("/media-b.mp3"), "1800", "1800"])
            let synced = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--json"]).stdout.utf8)
            )
            #expect(synced.report?.markedPlayed == 1, "\(daemon.log)")
            let client = try LineClient(path: daemon.socketPath)
            let podcast = try #require(try client.result("podcasts", as: PodcastsResult.self).podcasts.first)
            let episodes = try client.result(
                "episodes",
                as: EpisodesResult.self,
                params: #"{"podcast":"\#(podcast.id)"}"#
            ).episodes
            #expect(episodes.first { $0.guid == "b" }?.playedAt != nil, "\(episodes)")

            // Read again in the next sync's overlap, it changes nothing and goes nowhere.
            let again = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--json"]).stdout.utf8)
            )
            #expect(again.report?.markedPlayed == 0)
            #expect(again.report?.uploadedActions == 0)
            #expect(daemon.stop() == 0)
        }
    }

    @Test func episodesPlayedBeforeSyncWasOnReachTheServerOnceAsPlays() async throws {
        try await onOwnThread {
            let site = try NginxServer()
            let feedURL = try serve(site, ["a", "b"])
            let server = try GPodderServer()
            let root = TemporaryDirectory()

            // Without sync: a subscription and an episode heard here.
            let plain = DaemonProcess(root: root)
            try plain.writeConfig("use_trash = false\n")
            try plain.startAndWaitUntilReady()
            let client = try LineClient(path: plain.socketPath)
            let podcast = try client.result("subscribe", as: SubscribeResult.self, params: #"{"url":"\#(feedURL)"}"#)
            let episodes = try client.result(
                "episodes",
                as: EpisodesResult.self,
                params: #"{"podcast":"\#(podcast.podcast.id)"}"#
            ).episodes
            let b = try #require(episodes.first { $0.guid == "b" }, "\(episodes)")
            _ = try client.result("played", as: EpisodeMarkResult.self, params: #"{"episodes":[\#(b.id)]}"#)
            #expect(plain.stop() == 0)

            // Sync turned on: the first sync tells the server of the play, with the episode's duration.
            let daemon = try syncingDaemon(server, root: root)
            try daemon.startAndWaitUntilReady()
            let synced = try JSONDecoder().decode(
                SyncResult.self,
                from: Data(try ctl(daemon, ["sync", "--json"]).stdout.utf8)
            )
            #expect(synced.report?.uploadedActions ?? 0 >= 1, "\(daemon.log)")
            #expect(daemon.stop() == 0)
            // Once: a restart and another sync upload it no more.
            let restarted = try syncingDaemon(server, root: root)
            try restarted.startAndWaitUntilReady()
            #expect(try ctl(restarted, ["sync"]).status == 0, "\(restarted.log)")
            let plays = try actions(server).filter {
                $0["device"] as? String == "home-server" && $0["action"] as? String == "play"
            }
            #expect(plays.count == 1, "\(plays)")
            #expect(plays.first?["episode"] as? String == site.url("/media-b.mp3"))
            #expect(plays.first?["position"] as? Int == 1800)
            #expect(plays.first?["total"] as? Int == 1800)
            #expect(restarted.stop() == 0)
        }
    }
}
