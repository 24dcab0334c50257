import Testing

@testable import SinglecastDaemon

/// The quick paths the rules take for every episode: they must answer as the full parse and the plain
/// lower-cased search would.
@Suite struct EnclosureAndTitleMatchingTests {
    @Test(
        "the quick URL check never says yes where the full parse says no",
        arguments: [
            "https://cdn.example.com/e1.mp3", "HTTP://CDN.example.com:8080/a/b.mp3?x=1&y=%20#t=10",
            "http://127.0.0.1:18931/stall.mp3", "https://example.com", "https://example.com?x", "https://a.b/c#d",
            "https://a.b/p(1)!$'*+,;=:@~_.mp3", "http:///no-host", "file:///etc/passwd", "javascript:alert(1)",
            "https://bob:hunter2@cdn.example.com/x.mp3", "https://cdn.example.com/a b.mp3", "https://x/%zz",
            "https://x/%4", "https://x/#a#b", "https://[::1]/x.mp3", "https://x:/y", "https://x:123456/y",
            "  https://cdn.example.com/padded.mp3 ", "https://ex_ample.com/x", "ftp://cdn.example.com/x.mp3",
            "https//cdn.example.com", "httpss://x.y/", "https://x.y/ü.mp3", "https://x.y/a\\b", "https://x.y/a|b",
            "https://x.y/{a}", "https://x.y/a\"b", "https://x.y/a<b>", "https://x.y/a^b", "https://x.y/a`b",
        ]
    )
    func quickURLCheckAgreesWithTheParse(text: String) {
        let parsed = (try? HTTPURL(text)) != nil
        if HTTPURL.isPlain(text) { #expect(parsed, "the quick check took \(text)") }
        #expect(HTTPURL.isValid(text) == parsed)
    }

    @Test func titleSearchFoldsCaseForASCIIAndOtherwise() throws {
        let trailer = try TitlePattern("TrAiLeR")
        #expect(trailer.match("Season 2 trailer") == .matched)
        #expect(trailer.match("TRAILER") == .matched)
        #expect(trailer.match("Trail") == .notMatched)
        #expect(trailer.match("") == .notMatched)
        let accented = try TitlePattern("Épisode")
        #expect(accented.match("Un épisode spécial") == .matched)
        #expect((try TitlePattern("straße").match("STRASSE") == .matched) == "STRASSE".lowercased().contains("straße"))
        #expect(try TitlePattern("ab").match("xxAB") == .matched)
        #expect(try TitlePattern("abc").match("ab") == .notMatched)
    }
}
