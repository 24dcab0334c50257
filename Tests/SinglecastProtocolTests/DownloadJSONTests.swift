import FoundationEssentials
import SinglecastProtocol
import Testing

/// Downloads and their events write themselves (``JSONByteWritable``): the bytes must be the ones `WireCoding`'s
/// `JSONEncoder` writes, byte for byte, or clients that compare or cache lines would see a change.
@Suite struct DownloadJSONTests {
    static let full = DownloadInfo(
        id: 42,
        url: "https://example.com/a b/episode.mp3?x=1&y=\"2\"",
        finalURL: "https://cdn.example.com/épisode.mp3",
        file: "/home/u/Podcasts/Show/\u{1}tab\there.mp3",
        state: .paused,
        pauseReason: "disk_full",
        priority: -3,
        position: 9_007_199_254_740_993,
        bytesDone: 1_234_567,
        bytesTotal: 9_876_543_210,
        speed: 1_048_576,
        etaSeconds: 8,
        attempts: 2,
        lastError: DownloadErrorInfo(code: "http_status", message: "the server answered HTTP 503", httpStatus: 503),
        nextRetryAt: "2026-12-05T07:00:00Z",
        addedAt: "2026-12-05T06:00:00Z",
        completedAt: nil,
        headerNames: ["Authorization", "X-Token \\ \"quoted\""],
        hasCredentials: true,
        stalledSince: "2026-12-05T06:59:00Z",
        resumesAt: "2026-12-06T01:00:00Z",
        now: true,
        episode: DownloadEpisode(id: 7, title: "Épisode 1: \"Hello\"\n", podcastID: 3, podcast: "Show 😀"),
        waitingForHost: "cdn.example.com"
    )

    static let bare = DownloadInfo(
        id: 1,
        url: "http://h/f",
        finalURL: nil,
        file: "/f",
        state: .queued,
        pauseReason: nil,
        priority: 0,
        position: 0,
        bytesDone: 0,
        bytesTotal: nil,
        speed: nil,
        etaSeconds: nil,
        attempts: 0,
        lastError: nil,
        nextRetryAt: nil,
        addedAt: "2026-12-05T06:00:00Z",
        completedAt: nil,
        headerNames: [],
        hasCredentials: false
    )

    @Test func writesADownloadAsJSONEncoderDoes() throws {
        for download in [Self.full, Self.bare] {
            var writer = JSONByteWriter()
            try download.write(to: &writer)
            #expect(Data(writer.bytes) == (try WireCoding.encoder().encode(download)))
        }
        let listing = DownloadsResult(downloads: [Self.full, Self.bare, Self.full])
        #expect(try WireCoding.encoded(listing).data == WireCoding.encoder().encode(listing))
        let empty = DownloadsResult(downloads: [])
        #expect(try WireCoding.encoded(empty).data == WireCoding.encoder().encode(empty))
    }

    @Test(arguments: [0, 1, 1_048_576, 0.5, 1.25, 1e-7, 123_456_789.125, 1e16, 1e21, 9_007_199_254_740_993, -2.5])
    func writesANumberAsJSONEncoderWritesADouble(_ speed: Double) throws {
        var download = Self.bare
        download.speed = speed
        download.etaSeconds = speed / 3
        var writer = JSONByteWriter()
        try download.write(to: &writer)
        #expect(Data(writer.bytes) == (try WireCoding.encoder().encode(download)))
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func refusesANumberJSONCannotHold(_ speed: Double) {
        var download = Self.bare
        download.speed = speed
        var writer = JSONByteWriter()
        #expect(throws: JSONByteError.self) { try download.write(to: &writer) }
        #expect(throws: (any Error).self) { try WireCoding.encoder().encode(download) }
    }

    /// The envelope `notificationLine` writes for params that write themselves, against the encoder's.
    @Test func writesAnEventLineAsJSONEncoderDoes() throws {
        struct Envelope: Encodable {
            let jsonrpc = "2.0"
            var method: String
            var params: DownloadEventParams
        }
        for download in [Self.full, Self.bare] {
            let params = DownloadEventParams(download: download)
            let method = DownloadEvent.progress.rawValue
            let expected = try WireCoding.line(for: Envelope(method: method, params: params))
            #expect(try WireCoding.notificationLine(method: method, params: params) == expected)
        }
    }
}
