import Testing

@testable import SinglecastFeeds

@Suite struct PlainTextTests {
    @Test(arguments: [
        ("<h1>This is a <em>test</em></h1>", "This is a test"),
        ("<p>One</p><p>Two</p>", "One\n\nTwo"),
        ("Line<br>break<br/>again", "Line\nbreak\nagain"),
        ("<ul><li>a</li><li>b</li></ul>", "• a\n• b"),
        ("  lots   of\n\n  space\t here ", "lots of space here"),
        ("Fish &amp; chips &lt;3 &eacute;t&eacute; &#8217;s &#x1F600; &nbsp;x", "Fish & chips <3 été ’s 😀 \u{A0}x"),
        ("a<!-- hidden -->b<script>alert('<p>')</script>c<style>p { }</style>d", "abcd"),
        ("<div><p>Nested</p></div><p></p><p></p><p>Far</p>", "Nested\n\nFar"),
        ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
        ("<a href=\"x>y\">link</a> text", "link text"),
        ("", ""),
    ])
    func fromHTML(html: String, text: String) {
        #expect(PlainText.fromHTML(html) == text)
    }

    @Test(arguments: [
        ("<p>x</p>", true),
        ("a<br/>b", true),
        ("<a href='x'>y</a>", true),
        ("1 < 2", false),
        ("<3 you", false),
        ("plain", false),
        ("<notclosed", false),
    ])
    func looksLikeHTML(text: String, expected: Bool) {
        #expect(PlainText.looksLikeHTML(text) == expected)
    }

    /// Titles that need no change come back as they are; every other one is trimmed and collapsed.
    @Test(arguments: [
        ("Episode 12: Parsing & more", "Episode 12: Parsing & more"),
        (" leading", "leading"),
        ("trailing ", "trailing"),
        ("two  spaces", "two spaces"),
        ("a\ttab", "a tab"),
        ("a\nline", "a line"),
        ("a \n b", "a b"),
        (" ", ""),
        ("x", "x"),
        ("", ""),
    ])
    func collapsingWhitespace(text: String, expected: String) {
        #expect(PlainText.collapsingWhitespace(text) == expected)
    }

    @Test(arguments: [
        ("plain text", "plain text"),
        (" leading", "leading"),
        ("trailing\n", "trailing"),
        ("two  spaces", "two spaces"),
        ("a\ttab", "a tab"),
        ("line \n break", "line\nbreak"),
        ("kept\n\nbreaks", "kept\n\nbreaks"),
        ("crlf\r\nline", "crlf\n\nline"),
        ("é  ü", "é ü"),
        (" ", ""),
        ("", ""),
    ])
    func normalizingSpaces(text: String, expected: String) {
        #expect(PlainText.normalizingSpaces(text) == expected)
    }

    /// The shortcut for text that needs nothing agrees with the rule on every short string of the bytes that matter.
    @Test func normalizingSpacesAgreesWithItsRuleOnEveryShortString() {
        let alphabet: [Character] = ["a", " ", "\t", "\n", "\r", "é"]
        var strings = [""]
        var checked = 0
        for _ in 1...5 {
            strings = strings.flatMap { prefix in alphabet.map { prefix + String($0) } }
            for text in strings {
                #expect(
                    PlainText.normalizingSpaces(text) == PlainText.spacesNormalizedByteByByte(text),
                    "\(Array(text.utf8))"
                )
                checked += 1
            }
        }
        #expect(checked == 6 + 36 + 216 + 1296 + 7776)
    }
}

@Suite struct URLResolverTests {
    @Test(arguments: [
        ("example.mp3", "file://tests/data/x.rss", "file://tests/data/example.mp3"),
        ("/favicon.ico", "file://tests/data/x.rss", "file://tests/favicon.ico"),
        ("../a/./b.mp3", "https://e.com/x/y/feed", "https://e.com/x/a/b.mp3"),
        ("//cdn.e.com/a", "https://e.com/feed", "https://cdn.e.com/a"),
        ("?page=2", "https://e.com/feed?page=1", "https://e.com/feed?page=2"),
        ("#frag", "https://e.com/feed", "https://e.com/feed#frag"),
        ("a.mp3", "https://e.com", "https://e.com/a.mp3"),
        ("  https://e.com/a b.mp3\n", "https://x.org/", "https://e.com/a b.mp3"),
        ("episode::x", "https://e.com/", "episode::x"),
        ("mailto:a@e.com", nil, "mailto:a@e.com"),
        ("relative", nil, "relative"),
    ])
    func resolves(reference: String, base: String?, expected: String) {
        #expect(URLResolver.resolve(reference, against: base) == expected)
    }

    @Test func normalizesSchemeHostAndEmptyPath() {
        #expect(URLResolver.normalized("HTTP://User@Example.COM") == "http://User@example.com/")
        #expect(URLResolver.normalized("https://example.com/A?B") == "https://example.com/A?B")
        #expect(URLResolver.normalized("ftp://Example.com/x") == "ftp://example.com/x")
        #expect(URLResolver.normalized("urn:x:y") == "urn:x:y")
    }
}
