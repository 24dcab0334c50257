import Foundation
import SinglecastCLI
import SinglecastProtocol
import Testing

/// Units, ETAs, long names and enqueue answers as a new user reads them.
@Suite struct OutputPolishTests {
    typealias Fixtures = DownloadFixtures

    // MARK: one unit system

    @Test(
        arguments: [
            (316_900, "316.9 kB/s"), (999.4, "999 B/s"), (999.6, "1.0 kB/s"), (1023.4, "1.0 kB/s"),
            (2_097_152, "2.1 MB/s"), (2_000_000, "2.0 MB/s"), (3e9, "3.0 GB/s"),
        ] as [(Double, String)]
    )
    func ratesUseTheDecimalUnitsOfSizes(_ rate: Double, _ expected: String) {
        #expect(Formatting.rate(rate) == expected)
    }

    @Test func aSizeAndItsRateReadAlike() {
        #expect(Formatting.byteCount(311_300) == "311.3 kB")
        #expect(Formatting.rate(311_300) == "311.3 kB/s")
    }

    // MARK: ETA

    static var almostDone: DownloadInfo {
        var download = Fixtures.active
        download.bytesDone = 25_700_000
        download.etaSeconds = 0.4
        return download
    }

    @Test func anETAUnderASecondReadsLessThanOneSecond() {
        #expect(DownloadText.eta(Self.almostDone, now: Fixtures.now) == "<1s")
        var zero = Self.almostDone
        zero.etaSeconds = 0
        #expect(DownloadText.eta(zero, now: Fixtures.now) == "<1s")
        #expect(
            DownloadsCommand.render([Self.almostDone], now: Fixtures.now) == """
                ID  STATE   PROGRESS  SIZE               SPEED     ETA  NAME
                12  active  93%       25.7 MB / 27.6 MB  1.3 MB/s  <1s  episode-12.mp3

                """
        )
        #expect(ShowCommand.render(Self.almostDone, now: Fixtures.now).contains("ETA          <1s\n"))
        #expect(ProgressRenderer.liveLine(Self.almostDone, now: Fixtures.now).contains("  ETA <1s  "))
        var later = Self.almostDone
        later.etaSeconds = 1.2
        #expect(DownloadText.eta(later, now: Fixtures.now) == "1s")
    }

    // MARK: long names

    static let longName = String(repeating: "a", count: 99_996) + ".mp3"

    @Test func aHugeFileNameIsCutInTheTableAndWholeInShow() {
        var download = Fixtures.queued
        download.file = "/home/me/Podcasts/" + Self.longName
        let table = DownloadsCommand.render([download], now: Fixtures.now)
        let cell = String(repeating: "a", count: Formatting.maximumCellWidth - 1) + "…"
        #expect(
            table == """
                ID  STATE   PROGRESS  SIZE  SPEED  ETA  NAME
                8   queued  -         -     -      -    \(cell)

                """
        )
        #expect(
            ShowCommand.render(download, now: Fixtures.now).contains(
                "File         /home/me/Podcasts/\(Self.longName)\n"
            )
        )
    }

    @Test func cellsAtTheWidthStayWholeAndPaddingFollowsTheCutCell() {
        let fits = String(repeating: "b", count: Formatting.maximumCellWidth)
        let long = String(repeating: "c", count: Formatting.maximumCellWidth + 1)
        let cut = String(repeating: "c", count: Formatting.maximumCellWidth - 1) + "…"
        #expect(
            Formatting.columns([["A", "B"], [fits, "1"], [long, "2"]])
                == "A" + String(repeating: " ", count: Formatting.maximumCellWidth + 1) + "B\n"
                + fits + "  1\n" + cut + "  2\n"
        )
    }

    @Test func aHugeEpisodeTitleIsCutInTheTable() {
        let result = EpisodesResult(
            podcast: PodcastFixtures.daily,
            episodes: [PodcastFixtures.episode(815, Self.longName, new: true)]
        )
        let text = EpisodesCommand.render(result, timeZone: PodcastFixtures.utc)
        #expect(text.split(separator: "\n").allSatisfy { $0.count < 120 })
        #expect(text.contains("…\n"))
    }

    @Test func jsonKeepsTheWholeName() async throws {
        var download = Fixtures.queued
        download.file = "/home/me/Podcasts/" + Self.longName
        let run = try await withTemporaryDirectory { directory in
            let server = try TestServer(
                directory: directory,
                behavior: .reply([Fixtures.resultLine(DownloadsResult(downloads: [download]))])
            )
            return await runCLI(["downloads", "--json", "--socket", server.path])
        }
        #expect(run.status == 0)
        #expect(run.stdout.contains(Self.longName))
    }

    // MARK: enqueue answers

    @Test func anExistingDownloadSaysWhatStateItIsIn() {
        let url = "https://a.example/2.mp3"
        func line(_ state: DownloadState?) -> String {
            EnqueueCommand.render(
                EnqueueResult(downloads: [.init(id: 13, url: url, existing: true, file: "/music/2.mp3", state: state)])
            )
        }
        #expect(line(nil) == "Already queued 13  \(url)\n")
        #expect(line(.queued) == "Already queued 13  \(url)\n")
        #expect(line(.active) == "Already downloading 13  \(url)\n")
        #expect(line(.paused) == "Already added 13  \(url)  paused; resume it with 'singlecastctl resume 13'\n")
        #expect(line(.failed) == "Already added 13  \(url)  failed; retry it with 'singlecastctl retry 13'\n")
        #expect(
            line(.completed)
                == "Already downloaded 13  \(url)  → /music/2.mp3; to fetch it again, give another --name "
                + "(or 'singlecastctl redownload' an episode)\n"
        )
    }

    @Test func enqueueStateIsAnOptionalField() throws {
        let entry = EnqueueResult.Entry(id: 13, url: "u", existing: true, file: "f", state: .failed)
        let line = String(decoding: try WireCoding.encoder().encode(entry), as: UTF8.self)
        #expect(line == #"{"existing":true,"file":"f","id":13,"state":"failed","url":"u"}"#)
        let old = try JSONDecoder().decode(
            EnqueueResult.Entry.self,
            from: Data(#"{"existing":true,"file":"f","id":13,"url":"u"}"#.utf8)
        )
        #expect(old.state == nil)
    }
}
