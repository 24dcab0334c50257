import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Episode rules end to end: the real daemon, feeds and files served by a real nginx, the Trash read back with
/// trash-cli.
@Suite struct EpisodeRulesTests {
    struct Item {
        var guid: String
        var title: String
        var day: Int
        var minutes = 30
        var type: String?
    }

    /// An RSS document, newest first, each enclosure `media-<guid>.mp3` on `site`.
    private static func feed(_ title: String, _ items: [Item], site: NginxServer) -> Data {
        let entries = items.map { item in
            """
            <item><title>\(item.title)</title><guid isPermaLink="false">\(item.guid)</guid>
            <pubDate>\(String(format: "%02d", item.day)) Nov 2026 10:00:00 GMT</pubDate>
            <itunes:duration>\(item.minutes):00</itunes:duration>
            \(item.type.map { "<itunes:episodeType>\($0)</itunes:episodeType>" } ?? "")
            <enclosure url="\(site.url("/media-\(item.guid).mp3"))" type="audio/mpeg" length="4096"/>
            </item>
            """
        }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>\(title)</title><link>https://example.com/</link><description>d</description>
            \(entries.joined(separator: "\n"))
            </channel></rss>
            """.utf8
        )
    }

    private func serveMedia(_ site: NginxServer, _ guids: [String], size: Int = 4096) throws {
        for guid in guids {
            _ = try site.serve(
                TestContent.mp3(count: size, filler: Character(guid).asciiValue ?? 0),
                as: "media-\(guid).mp3"
            )
        }
    }

    private func error(_ client: LineClient, _ method: String, _ params: String) throws -> RPCError {
        switch try client.call(method, params: params) {
        case .error(_, let error): return error
        case .result(_, let value): throw HarnessError("\(method) succeeded unexpectedly: \(value)")
        case .notification: throw HarnessError("unexpected notification")
        }
    }

    @Test func filtersChooseWhatARefreshDownloadsAndEpisodesSayWhy() throws {
        let site = try NginxServer()
        try serveMedia(site, ["a", "b", "c", "d", "e", "f"])
        let first = [Item(guid: "a", title: "Episode 1", day: 20)]
        let feedURL = try site.serve(Self.feed("Rules Radio", first, site: site), as: "feed.xml")
        let daemon = DaemonProcess()
        // The configured rules, which the podcast's own override rule by rule.
        try daemon.writeConfig("title_exclude = trailer\nmin_duration = 10m\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"all-new"}"#
        )
        let id = subscribed.podcast.id

        // A refresh finds five episodes; the rules let two through.
        usleep(1_100_000)
        let second =
            [
                Item(guid: "f", title: "Episode 3", day: 26), Item(guid: "e", title: "Season 2 Trailer", day: 25),
                Item(guid: "d", title: "Quick update", day: 24, minutes: 3),
                Item(guid: "c", title: "Bonus: outtakes", day: 23, type: "bonus"),
                Item(guid: "b", title: "Episode 2", day: 22),
            ] + first
        _ = try site.serve(Self.feed("Rules Radio", second, site: site), as: "feed.xml")
        // The podcast's own rule: no bonus episodes.
        _ = try client.result(
            "set",
            as: PodcastResult.self,
            params: #"{"podcast":"\#(id)","rules":{"episode_types":"full,trailer"}}"#
        )
        let refreshed = try client.result("refresh", as: RefreshResult.self, params: #"{"podcast":"\#(id)"}"#)
        let entry = try #require(refreshed.refreshed.first)
        #expect(entry.newEpisodes == 5)
        #expect(entry.queued.count == 2)
        _ = try client.finished(entry.queued)

        let episodes = try client.result("episodes", as: EpisodesResult.self, params: #"{"podcast":"\#(id)"}"#)
        let byGUID = Dictionary(uniqueKeysWithValues: episodes.episodes.map { ($0.guid ?? "", $0) })
        #expect(byGUID["f"]?.downloadState == .completed)
        #expect(byGUID["b"]?.downloadState == .completed)
        #expect(byGUID["e"]?.skipped == #"title excludes "trailer""#)
        #expect(byGUID["d"]?.skipped == "shorter than 10m")
        #expect(byGUID["c"]?.skipped == "episode type bonus")
        #expect(byGUID["c"]?.episodeType == "bonus")
        #expect(subscribed.podcast.rules == nil)

        // The table says the same.
        let table = try runProgram(Binaries.client.path, ["episodes", "\(id)", "--socket", daemon.socketPath])
        #expect(table.stdout.contains(#"skipped: title excludes "trailer""#), "\(table.stdout)")

        // rules: what applies and where from, and the same lists; a dry run changes nothing.
        let rules = try client.result("rules", as: RulesResult.self, params: #"{"podcast":"\#(id)"}"#)
        #expect(!rules.dryRun)
        #expect(
            rules.rules.map { "\($0.key)=\($0.value) (\($0.source))" } == [
                "title_exclude=trailer (configuration)", "min_duration=10m (configuration)",
                "episode_types=full,trailer (podcast)",
            ]
        )
        #expect(rules.download.isEmpty)
        #expect(Set(rules.skipped.map(\.id)) == Set(["e", "d", "c"].compactMap { byGUID[$0]?.id }))
        let tried = try client.result(
            "rules",
            as: RulesResult.self,
            params:
                #"{"podcast":"\#(id)","auto_download":"latest:6","changes":{"title_exclude":"none","min_duration":""}}"#
        )
        #expect(tried.dryRun)
        // title_exclude turned off for this podcast; min_duration back to the configured 10m; bonus still out.
        #expect(Set(tried.download.map(\.id)) == Set(["e", "a"].compactMap { byGUID[$0]?.id }))
        #expect(tried.rules.first { $0.key == "title_exclude" }?.value == "none")
        let after = try client.result("podcasts", as: PodcastsResult.self).podcasts.first
        #expect(after?.autoDownload.description == "all-new", "a dry run stores nothing")

        // Wrong rules are refused with what is wrong, and the stored ones stay.
        let regex = try error(client, "set", #"{"podcast":"\#(id)","rules":{"title_include":"/(news/"}}"#)
        #expect(regex.data?.reason == "invalid_params")
        #expect(regex.message.contains("missing closing parenthesis at character 7"), "\(regex.message)")
        let contradiction = try error(
            client,
            "set",
            #"{"podcast":"\#(id)","rules":{"max_duration":"5m"}}"#
        )
        #expect(
            contradiction.message.contains("min_duration 10m is longer than max_duration 5m"),
            "\(contradiction.message)"
        )
        let unknown = try error(client, "set", #"{"podcast":"\#(id)","rules":{"title_exlude":"x"}}"#)
        #expect(unknown.message.contains("there is no rule 'title_exlude'"))
        #expect(daemon.stop() == 0)
    }

    @Test(
        "played files go to the Trash after the delay; pinned ones stay; trash-list reads them back",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/trash-list"), "trash-cli is not installed")
    )
    func playedFilesGoToTheTrash() throws {
        let site = try NginxServer()
        try serveMedia(site, ["a", "b", "c"])
        let items = [
            Item(guid: "c", title: "Three", day: 23), Item(guid: "b", title: "Two", day: 22),
            Item(guid: "a", title: "One", day: 21),
        ]
        let feedURL = try site.serve(Self.feed("Played Radio", items, site: site), as: "feed.xml")
        let daemon = DaemonProcess()
        try daemon.writeConfig("delete_played_after = 2s\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        let watcher = try EventWatcher(path: daemon.socketPath, topics: ["episodes"])
        let subscribed = try client.result(
            "subscribe",
            as: SubscribeResult.self,
            params: #"{"url":"\#(feedURL)","auto_download":"latest:3"}"#
        )
        let finished = try client.finished(subscribed.queued)
        #expect(finished.allSatisfy { $0.state == .completed })
        let episodes = try client.result(
            "episodes",
            as: EpisodesResult.self,
            params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
        ).episodes
        let ids = episodes.map(\.id)
        let files = Dictionary(uniqueKeysWithValues: episodes.map { ($0.id, $0.file ?? "") })

        _ = try client.result("pin", as: EpisodeMarkResult.self, params: #"{"episodes":[\#(ids[1])]}"#)
        let marked = try client.result(
            "played",
            as: EpisodeMarkResult.self,
            params: #"{"podcast":"\#(subscribed.podcast.id)","all":true}"#
        )
        #expect(Set(marked.changed) == Set(ids))
        // Played 2 s ago: the unpinned files go, to the Trash (each deletion an event with its reason); the pinned
        // one stays.
        let deleted = try watcher.deleted([ids[0], ids[2]])
        #expect(deleted.allSatisfy { $0.reason == "played more than 2s ago" && $0.trashedTo != nil })
        #expect(!FileManager.default.fileExists(atPath: files[ids[0]] ?? ""))
        #expect(!FileManager.default.fileExists(atPath: files[ids[2]] ?? ""))
        usleep(500_000)  // nothing more goes
        #expect(FileManager.default.fileExists(atPath: files[ids[1]] ?? ""))
        let trashed = try FileManager.default.contentsOfDirectory(atPath: daemon.root.file("data/Trash/files"))
        #expect(Set(trashed) == Set([ids[0], ids[2]].map { ((files[$0] ?? "") as NSString).lastPathComponent }))

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = daemon.root.file("data")
        let listed = try runProgram("/usr/bin/trash-list", [], environment: environment)
        #expect(listed.stdout.contains(" \(files[ids[0]] ?? "")\n"), "\(listed.stdout)")
        #expect(listed.stdout.contains(" \(files[ids[2]] ?? "")\n"), "\(listed.stdout)")

        // The episode says why it is not fetched again.
        let after = try client.result(
            "episodes",
            as: EpisodesResult.self,
            params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
        ).episodes
        #expect(after.first { $0.id == ids[0] }?.downloadID == nil)
        #expect(after.first { $0.id == ids[0] }?.skipped == "file deleted (played more than 2s ago)")
        #expect(after.first { $0.id == ids[1] }?.pinned == true)
        #expect(daemon.stop() == 0)
    }

    @Test func aStorageBudgetDeletesPlayedThenOldestAcrossPodcastsButNotPinnedOrRunningOnes() throws {
        let site = try NginxServer()
        let size = 400 << 10
        try serveMedia(site, ["a", "b", "c", "x", "y", "z"], size: size)
        let one = [
            Item(guid: "c", title: "One C", day: 13), Item(guid: "b", title: "One B", day: 12),
            Item(guid: "a", title: "One A", day: 11),
        ]
        let two = [
            Item(guid: "z", title: "Two Z", day: 23), Item(guid: "y", title: "Two Y", day: 22),
            Item(guid: "x", title: "Two X", day: 21),
        ]
        let oneURL = try site.serve(Self.feed("Podcast One", one, site: site), as: "one.xml")
        let twoURL = try site.serve(Self.feed("Podcast Two", two, site: site), as: "two.xml")
        let faults = try FaultServer()
        let daemon = DaemonProcess()
        try daemon.writeConfig("use_trash = false\n")
        try daemon.startAndWaitUntilReady()
        let client = try LineClient(path: daemon.socketPath)
        var files: [String: String] = [:]
        var ids: [String: Int64] = [:]
        for url in [oneURL, twoURL] {
            let subscribed = try client.result(
                "subscribe",
                as: SubscribeResult.self,
                params: #"{"url":"\#(url)","auto_download":"latest:3"}"#
            )
            _ = try client.finished(subscribed.queued)
            for episode in try client.result(
                "episodes",
                as: EpisodesResult.self,
                params: #"{"podcast":"\#(subscribed.podcast.id)"}"#
            ).episodes {
                files[episode.guid ?? ""] = episode.file
                ids[episode.guid ?? ""] = episode.id
            }
        }
        #expect(files.values.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        // Two X played, One A pinned, and a download that stays running (the server stalls after 64 KiB).
        _ = try client.result("played", as: EpisodeMarkResult.self, params: #"{"episodes":[\#(ids["x"] ?? 0)]}"#)
        _ = try client.result("pin", as: EpisodeMarkResult.self, params: #"{"episodes":[\#(ids["a"] ?? 0)]}"#)
        let running = try client.result(
            "enqueue",
            as: EnqueueResult.self,
            params: #"{"urls":["\#(faults.url("/stall/4194304/65536"))"]}"#
        ).downloads[0]

        // 2.4 MiB of episodes against a 1.3 MiB budget: x (played) goes first, then the oldest unplayed ones,
        // b and c (a is pinned), until what is left fits: a, y, z.
        let deletions = try EventWatcher(path: daemon.socketPath, topics: ["episodes"])
        try daemon.writeConfig("use_trash = false\nmax_storage = 1331K\n")
        daemon.signal(SIGHUP)
        let deleted = try deletions.deleted(["x", "b", "c"].map { ids[$0] ?? 0 })
        #expect(deleted.map(\.file) == ["x", "b", "c"].map { files[$0] })
        usleep(500_000)  // nothing more goes
        let kept = files.filter { FileManager.default.fileExists(atPath: $0.value) }.keys.sorted()
        #expect(kept == ["a", "y", "z"])
        #expect(try client.result("show", as: DownloadInfo.self, params: #"{"id":\#(running.id)}"#).state == .active)
        // Deleted without the Trash.
        #expect(!FileManager.default.fileExists(atPath: daemon.root.file("data/Trash/files")))
        #expect(daemon.stop() == 0)
    }

    @Test func aWrongRuleInTheConfigurationStopsTheStartWithItsLine() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("log_level = info\ntitle_include = /a(b/\n")
        try daemon.start()
        #expect(daemon.waitForExit() == 78)
        #expect(
            daemon.log.contains(
                "singlecast.conf:2: title_include '/a(b/' is not a usable pattern: missing closing parenthesis at character 5"
            ),
            "\(daemon.log)"
        )
        let contradiction = DaemonProcess()
        try contradiction.writeConfig("max_age = 30d\ndelete_older_than = 7d\n")
        try contradiction.start()
        #expect(contradiction.waitForExit() == 78)
        #expect(contradiction.log.contains("singlecast.conf:2: delete_older_than 7d is shorter than max_age 30d"))
    }
}
