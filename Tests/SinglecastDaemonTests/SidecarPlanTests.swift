import Foundation
import SinglecastFeeds
import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// Which chapters and transcripts are saved beside an episode, and their names.
@Suite struct SidecarPlanTests {
    @Test func oneFilePerKindFormatAndLanguageOfTheTypesItCanName() {
        var episode = Episode(title: "E")
        episode.chaptersURL = "https://a/c.json"
        episode.chaptersType = "application/json+chapters"
        episode.transcripts = [
            Transcript(url: "https://a/t.vtt", type: "text/vtt", language: "en", rel: "captions"),
            Transcript(url: "https://a/other.vtt", type: "TEXT/VTT; charset=utf-8", language: "en"),
            Transcript(url: "https://a/t.de.srt", type: "application/x-subrip", language: "de"),
            Transcript(url: "https://a/t.srt", type: "application/srt"),
            Transcript(url: "https://a/t.json", type: "application/json", language: "pt-BR"),
            Transcript(url: "https://a/t.html", type: "text/html", language: "../x"),
            Transcript(url: "https://a/t.txt", type: "text/plain", language: "en"),
            Transcript(url: "https://a/untyped.vtt?sig=1", type: ""),
            Transcript(url: "file:///etc/passwd", type: "text/vtt", language: "fr"),
        ]
        let offers = SidecarPlan.offers(of: episode)
        #expect(
            offers.map(\.url) == [
                "https://a/c.json", "https://a/t.vtt", "https://a/t.de.srt", "https://a/t.srt",
                "https://a/t.json", "https://a/t.html", "https://a/untyped.vtt?sig=1",
            ]
        )
        #expect(offers.map(\.format) == ["json", "vtt", "srt", "srt", "json", "html", "vtt"])
        #expect(offers.map(\.rel) == [nil, "captions", nil, nil, nil, nil, nil])
        #expect(offers.map(\.language) == [nil, "en", "de", nil, "pt-BR", nil, nil])
        #expect(
            offers.map(\.mimeType) == [
                "application/json+chapters", "text/vtt", "application/x-subrip",
                "application/x-subrip", "application/json", "text/html", "text/vtt",
            ]
        )
    }

    @Test func chaptersOnlyAsJSON() {
        var episode = Episode(title: "E")
        episode.chaptersURL = "https://a/c.txt"
        episode.chaptersType = "text/plain"
        #expect(SidecarPlan.offers(of: episode).isEmpty)
        episode.chaptersType = nil
        #expect(SidecarPlan.offers(of: episode).map(\.kind) == [.chapters])
    }

    @Test func namesBesideTheEpisodesFile() {
        func path(_ kind: SidecarOffer.Kind, _ format: String, _ language: String?, _ file: String) -> String {
            SidecarPlan.path(
                of: SidecarOffer(kind: kind, format: format, language: language, mimeType: "", url: ""),
                beside: file
            )
        }
        #expect(path(.chapters, "json", nil, "/d/P/2026-11-27 E.mp3") == "/d/P/2026-11-27 E.chapters.json")
        #expect(path(.transcript, "vtt", "en", "/d/P/E.mp3") == "/d/P/E.en.vtt")
        #expect(path(.transcript, "srt", nil, "/d/P/E.v2.m4a") == "/d/P/E.v2.srt")
        #expect(path(.transcript, "html", "de", "/d/P/E") == "/d/P/E.de.html")
        #expect(path(.transcript, "json", nil, "/d.x/P/.hidden") == "/d.x/P/.hidden.json")
        #expect(SidecarPlan.language("chapters") == nil, "it would name the chapters file")
    }

    @Test func retriesBackOffAndEnd() {
        #expect(SidecarPlan.retryAt(afterAttempt: 1, now: 0) == 60_000)
        #expect(SidecarPlan.retryAt(afterAttempt: 2, now: 0) == 300_000)
        #expect(SidecarPlan.retryAt(afterAttempt: 4, now: 0) == 7_200_000)
        #expect(SidecarPlan.retryAt(afterAttempt: SidecarPlan.maxAttempts, now: 0) == nil)
    }
}
