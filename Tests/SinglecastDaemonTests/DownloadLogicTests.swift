import Foundation
import SinglecastDaemon
import SinglecastStore
import Testing

@Suite struct FileNamingTests {
    @Test(arguments: [
        ("https://cdn.example.com/shows/ep%2042.mp3?token=abc&x=.exe", "ep 42.mp3"),
        ("https://example.com/a/b/episode.m4a#frag", "episode.m4a"),
        ("https://example.com/../../.bashrc", "bashrc"),
        ("https://example.com/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", "_.._etc_passwd"),
        ("https://example.com/", "example.com download"),
        ("https://example.com/%00evil%0A.mp3", "_evil_.mp3"),
    ])
    func namesFromURLs(url: String, expected: String) throws {
        #expect(FileNaming.name(for: try #require(URL(string: url))) == expected)
    }

    @Test func sanitizeNeverEscapesTheDirectory() {
        for hostile in ["../../x", "/etc/passwd", ".hidden", "a/b", "...", "\u{0}", "  ", "a\\b"] {
            let name = FileNaming.sanitize(hostile)
            #expect(!name.contains("/"))
            #expect(!name.hasPrefix("."))
            #expect(!name.isEmpty)
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 })
        }
    }

    @Test func longNamesKeepTheirExtensionAndFit() {
        let name = FileNaming.sanitize(String(repeating: "é", count: 4000) + ".mp3")
        #expect(name.utf8.count <= FileNaming.maximumLength - 12)
        #expect(name.hasSuffix(".mp3"))
    }

    @Test func plainNamesComeBackAsTheyAre() {
        for plain in ["Episode 12: The Return (part 1).mp3", "2026-11-27 Friday.m4a", "a_b", "x"] {
            #expect(FileNaming.sanitize(plain) == plain)
        }
        #expect(FileNaming.sanitize(" padded ") == "padded")
        #expect(FileNaming.sanitize("___") == "download")
        #expect(FileNaming.sanitize("___", fallback: "show") == "show")
        #expect(FileNaming.sanitize("..x") == "x")
        #expect(FileNaming.sanitize("tab\there") == "tab_here")
        #expect(
            FileNaming.sanitize(String(repeating: "a", count: 300) + ".mp3").utf8.count == FileNaming.maximumLength - 12
        )
    }

    @Test func collisionsGetANumber() {
        let taken: Set = ["a.mp3", "a (2).mp3", "noext"]
        #expect(FileNaming.unique("a.mp3") { taken.contains($0) } == "a (3).mp3")
        #expect(FileNaming.unique("noext") { taken.contains($0) } == "noext (2)")
        #expect(FileNaming.unique("free.mp3") { taken.contains($0) } == "free.mp3")
    }
}

@Suite struct RetryPolicyTests {
    @Test func backoffDoublesWithJitterUpToTheCap() {
        var policy = RetryPolicy()
        policy.baseDelay = .seconds(2)
        policy.maximumDelay = .seconds(60)
        #expect(policy.backoff(afterAttempts: 1, random: 1) == .seconds(2))
        #expect(policy.backoff(afterAttempts: 1, random: 0) == .seconds(1))
        #expect(policy.backoff(afterAttempts: 3, random: 1) == .seconds(8))
        #expect(policy.backoff(afterAttempts: 30, random: 1) == .seconds(60))
    }

    @Test func retryAfterInBothForms() {
        let now: Int64 = 1_000_000
        #expect(RetryPolicy.retryAfter("120", nowMilliseconds: now) == now + 120_000)
        #expect(RetryPolicy.retryAfter(nil, nowMilliseconds: now) == nil)
        #expect(RetryPolicy.retryAfter("soon", nowMilliseconds: now) == nil)
        // An HTTP-date: 2026-11-29 12:00:10 GMT, ten seconds after "now".
        let noon: Int64 = 1_795_953_600_000
        #expect(RetryPolicy.retryAfter("Sun, 29 Nov 2026 12:00:10 GMT", nowMilliseconds: noon) == noon + 10_000)
        // The obsolete forms HTTP still allows: RFC 850 and asctime.
        #expect(RetryPolicy.retryAfter("Sunday, 29-Nov-26 12:00:10 GMT", nowMilliseconds: noon) == noon + 10_000)
        #expect(RetryPolicy.retryAfter("Sun Nov 29 12:00:10 2026", nowMilliseconds: noon) == noon + 10_000)
        // A date in the past means now.
        #expect(RetryPolicy.retryAfter("Sun, 29 Nov 2026 11:00:00 GMT", nowMilliseconds: noon) == noon)
    }

    @Test func retryableStatuses() {
        for status in [408, 429, 500, 502, 503, 504] { #expect(RetryPolicy.isRetryable(httpStatus: status)) }
        for status in [400, 401, 403, 404, 410, 416] { #expect(!RetryPolicy.isRetryable(httpStatus: status)) }
    }
}

@Suite struct QueueSchedulerTests {
    private func record(_ id: Int64, _ host: String, notBefore: Int64? = nil) -> DownloadRecord {
        var record = DownloadRecord(
            id: id,
            url: "https://\(host)/\(id).mp3",
            directory: "/d",
            fileName: "\(id).mp3",
            position: id,
            addedAt: 0
        )
        record.nextAttemptAt = notBefore
        return record
    }

    @Test func respectsTotalAndPerHostLimitsInQueueOrder() {
        var scheduler = QueueScheduler()
        scheduler.maximumConcurrent = 3
        scheduler.maximumPerHost = 2
        var machine = DownloadQueueStateMachine()
        machine.load([record(1, "a"), record(2, "a"), record(3, "a"), record(4, "b"), record(5, "c")])
        #expect(machine.startDue(scheduler, now: 0) == [.startTransfer(1), .startTransfer(2), .startTransfer(4)])
        // 4's transfer ends: its slot frees, a's two stay taken, so 5 starts and 3 waits.
        _ = machine.began(4)
        _ = machine.transferEnded(4)
        #expect(machine.startDue(scheduler, now: 0) == [.startTransfer(5)])
    }

    @Test func waitsForRetryTimesAndSaysWhenToLookAgain() {
        var machine = DownloadQueueStateMachine()
        machine.load([record(1, "a", notBefore: 5000), record(2, "b", notBefore: 3000), record(3, "c")])
        #expect(machine.startDue(QueueScheduler(), now: 1000) == [.startTransfer(3), .wake(at: 3000)])
        #expect(machine.startDue(QueueScheduler(), now: 3000) == [.startTransfer(2), .wake(at: 5000)])
    }
}

@Suite("Download table indexes")
struct DownloadTableTests {
    private func record(_ id: Int64, _ name: String, host: String = "a.example", position: Int64 = 0) -> DownloadRecord
    {
        DownloadRecord(
            id: id,
            url: "https://\(host)/\(name)",
            directory: "/d",
            fileName: name,
            position: position == 0 ? id : position,
            addedAt: 0
        )
    }

    @Test func claimedPathsFollowEveryChange() {
        var table = DownloadTable()
        table[1] = record(1, "a.mp3")
        table[2] = record(2, "a.mp3")
        #expect(table.isClaimed("/d/a.mp3", byOtherThan: 1))
        #expect(table.isClaimed("/d/a.mp3", byOtherThan: nil))
        #expect(!table.isClaimed("/d/b.mp3", byOtherThan: nil))

        table[2]?.state = .completed
        #expect(!table.isClaimed("/d/a.mp3", byOtherThan: 1), "only download 1 still wants the name")
        #expect(table.isClaimed("/d/a.mp3", byOtherThan: 2))

        table[1]?.fileName = "a (2).mp3"
        #expect(!table.isClaimed("/d/a.mp3", byOtherThan: nil))
        #expect(table.isClaimed("/d/a (2).mp3", byOtherThan: nil))
        table[1] = nil
        #expect(!table.isClaimed("/d/a (2).mp3", byOtherThan: nil))
    }

    /// Whatever changes a download goes through (another name, directory, URL, state, progress, leaving), the claimed
    /// paths and the downloads of each URL are those a count over every download gives: changes that keep a claim or
    /// a URL as it was skip its bookkeeping.
    @Test(arguments: [UInt64(1), 2, 3, 4]) func indexesMatchARecountAfterAnyChanges(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = DownloadTable()
        var shadow: [Int64: DownloadRecord] = [:]
        let names = ["a.mp3", "b.mp3", "a (2).mp3"]
        let directories = ["/d", "/e"]
        let urls = ["https://a.example/1.mp3", "https://a.example/2.mp3", "https://b.example/1.mp3"]
        let states: [DownloadRecord.State] = [.queued, .active, .paused, .failed, .completed, .cancelled]
        for _ in 0..<2_000 {
            let id = Int64.random(in: 1...6, using: &random)
            var changed = shadow[id] ?? record(id, names.randomElement(using: &random)!)
            switch Int.random(in: 0..<7, using: &random) {
            case 0: changed.fileName = names.randomElement(using: &random)!
            case 1: changed.directory = directories.randomElement(using: &random)!
            case 2, 3: changed.state = states.randomElement(using: &random)!
            case 4: changed.bytesDone += 1
            case 5: changed.url = urls.randomElement(using: &random)!
            default:
                table[id] = nil
                shadow[id] = nil
                continue
            }
            table[id] = changed
            shadow[id] = changed
            for path in directories.flatMap({ directory in names.map { "\(directory)/\($0)" } }) {
                let claimants = shadow.values.filter { $0.state != .completed && $0.path == path }.map(\.id)
                #expect(table.isClaimed(path, byOtherThan: nil) == !claimants.isEmpty)
                for other in Int64(1)...6 {
                    #expect(table.isClaimed(path, byOtherThan: other) == claimants.contains { $0 != other })
                }
            }
            for url in urls + ["https://a.example/\(id).mp3"] {
                #expect(
                    Set(table.downloads(of: url).map(\.id)) == Set(shadow.values.filter { $0.url == url }.map(\.id))
                )
                #expect(table.downloads(of: url).allSatisfy { shadow[$0.id] == $0 })
            }
        }
    }

    @Test func aCancelledDownloadClaimsItsPathUntilItLeavesTheTable() {
        var table = DownloadTable()
        table[1] = record(1, "a.mp3")
        // Cancelled while its transfer winds down: the partial file is still written, then perhaps deleted.
        table[1]?.state = .cancelled
        #expect(table.isClaimed("/d/a.mp3", byOtherThan: nil))
        #expect(!table.isClaimed("/d/a.mp3", byOtherThan: 1))
        table[1] = nil
        #expect(!table.isClaimed("/d/a.mp3", byOtherThan: nil))
    }

    /// Every queued download in the order a pass offers them, retry times ignored.
    private func queued(_ table: inout DownloadTable) -> [DownloadTable.QueuedEntry] {
        _ = table.beginDuePass(now: .max)
        var examined = 0
        var entries: [DownloadTable.QueuedEntry] = []
        while let entry = table.nextDue(examined: &examined) {
            entries.append(entry)
            table.passOver(entry)
        }
        _ = table.endDuePass(examined: &examined)
        return entries
    }

    @Test func queueOrderFollowsPriorityPositionAndState() {
        var table = DownloadTable()
        for id in Int64(1)...4 { table[id] = record(id, "\(id).mp3", host: id == 4 ? "b.example" : "a.example") }
        #expect(queued(&table).map(\.id) == [1, 2, 3, 4])
        #expect(queued(&table).last?.host == "b.example")

        table[3]?.priority = 5
        #expect(queued(&table).map(\.id) == [3, 1, 2, 4])
        table[1]?.state = .active
        #expect(queued(&table).map(\.id) == [3, 2, 4])
        table[2]?.position = 100
        #expect(queued(&table).map(\.id) == [3, 4, 2])
        table[1]?.state = .queued
        table[1]?.nextAttemptAt = 42
        #expect(queued(&table).map(\.id) == [3, 1, 4, 2])
        #expect(queued(&table).first { $0.id == 1 }?.notBefore == 42)
        table[3] = nil
        #expect(queued(&table).map(\.id) == [1, 4, 2])
    }

    @Test func staleEntriesDoNotOutgrowTheQueue() {
        var table = DownloadTable()
        for id in Int64(1)...1000 { table[id] = record(id, "\(id).mp3") }
        // Pausing and resuming everything many times leaves an old entry behind for each download each time.
        for _ in 0..<20 {
            for id in Int64(1)...1000 { table[id]?.state = .paused }
            for id in Int64(1)...1000 { table[id]?.state = .queued }
        }
        #expect(table.queueEntries <= 2 * 1000 + 64)
        #expect(queued(&table).map(\.id) == Array(1...1000))
    }
}

@Suite("Episode file names")
struct EpisodeNamingTests {
    private func episode(
        title: String,
        podcast: String = "Show",
        url: String = "https://cdn.example.com/e.mp3?x=1",
        type: String? = nil
    ) -> EpisodeNaming.Episode {
        EpisodeNaming.Episode(
            podcastTitle: podcast,
            title: title,
            published: Date(timeIntervalSince1970: 1_795_000_000),
            enclosureURL: URL(string: url)!,
            enclosureType: type,
            season: 2,
            episode: 7,
            guid: "g/1",
            id: 42
        )
    }

    @Test func defaultTemplateMakesAFolderPerPodcast() {
        let place = EpisodeNaming().place(episode(title: "Hello: World"))
        #expect(place.folders == ["Show"])
        #expect(place.fileName == "2026-11-18 Hello: World.mp3")
    }

    /// `portable_file_names`: what FAT and exFAT (players, SD cards) refuse or silently change never reaches a name.
    @Test func portableNamesAreOnesFATAndExFATAccept() {
        #expect(FileNaming.portable(#"Ep 1: "Why?" <live> | a*b.mp3"#) == "Ep 1_ _Why__ _live_ _ a_b.mp3")
        #expect(FileNaming.portable("Trailing dots. . .") == "Trailing dots")
        #expect(FileNaming.portable("con.mp3") == "_con.mp3")
        #expect(FileNaming.portable("LPT9") == "_LPT9")
        #expect(FileNaming.portable("Console.mp3") == "Console.mp3")
        #expect(FileNaming.portable("...") == "_")
        let place = EpisodeNaming(portable: true).place(episode(title: "Hello: World?"))
        #expect(place.fileName == "2026-11-18 Hello_ World_.mp3")
        var show = episode(title: "t")
        show.podcastTitle = "Radio: Live"
        #expect(EpisodeNaming(portable: true).place(show).folders == ["Radio_ Live"])
        #expect(EpisodeNaming().place(show).folders == ["Radio: Live"], "Linux names stay as they were")
    }

    @Test func datesAreUTCDays() {
        var late = episode(title: "t")
        late.published = Date(timeIntervalSince1970: 86_399)  // 1970-01-01 23:59:59 UTC, the next day east of it
        #expect(EpisodeNaming(template: "{date}").place(late).fileName == "1970-01-01")
        late.published = nil
        #expect(EpisodeNaming(template: "{date} {guid}").place(late).fileName == "undated g_1")
    }

    @Test func daysMatchTheGregorianCalendarInUTC() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var generator = SystemRandomNumberGenerator()
        // Leap days, century years, the epoch's edges, dates before 1970, and random seconds from 1900 to 2100.
        let fixed: [Double] = [
            -1, 0, 951_782_400, 951_868_799, 4_107_542_399, 4_107_542_400, -2_208_988_800, 68_169_600,
        ]
        let random = (0..<2000).map { _ in Double(Int64.random(in: -2_208_988_800...4_102_444_800, using: &generator)) }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let expected = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(EpisodeNaming.day(date) == expected, "\(seconds)")
        }
    }

    @Test func feedValuesNeverAddFoldersOrEscape() {
        let naming = EpisodeNaming(template: "{podcast}/{season}x{episode} {title}.{ext}")
        let place = naming.place(episode(title: "../../.bashrc", podcast: "../../etc"))
        #expect(place.folders.count == 1)
        #expect(!place.folders[0].hasPrefix(".") && !place.folders[0].contains("/"))
        #expect(!place.fileName.contains("/"))
        #expect(place.fileName.hasPrefix("2x7 "))
        let hidden = EpisodeNaming(template: "{title}").place(episode(title: ".hidden\u{0}name"))
        #expect(!hidden.fileName.hasPrefix(".") && !hidden.fileName.contains("\u{0}"))
    }

    @Test func extensionsComeFromThePathElseTheType() {
        #expect(EpisodeNaming.fileExtension(url: URL(string: "https://x/a.M4A?t=1.exe")!, type: nil) == "m4a")
        #expect(EpisodeNaming.fileExtension(url: URL(string: "https://x/stream")!, type: "audio/mp4") == "m4a")
        #expect(EpisodeNaming.fileExtension(url: URL(string: "https://x/stream")!, type: nil) == "mp3")
    }

    @Test func templatesAreChecked() {
        #expect(EpisodeNaming.problem(in: EpisodeNaming.defaultTemplate) == nil)
        #expect(EpisodeNaming.problem(in: "/abs/{title}") != nil)
        #expect(EpisodeNaming.problem(in: "{podcast}/") != nil)
        #expect(EpisodeNaming.problem(in: "{nope}.mp3")?.contains("unknown placeholder {nope}") == true)
        #expect(EpisodeNaming.problem(in: "{title") != nil)
    }
}

/// A reproducible generator for random walks over the download table (a linear congruential step, Knuth's MMIX
/// constants, with the high bits folded in).
private struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 29)
    }
}
