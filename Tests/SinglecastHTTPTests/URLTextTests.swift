import Testing

@testable import SinglecastHTTP

/// `URLText` is the one reading of a URL's scheme and host below the daemon; the fetch limiter, the engine, the
/// redirect check and `HTTPURL` all answer through it.
@Suite struct URLTextTests {
    /// The limiter used to parse the URL as given, so a feed URL with white space around it counted against a host
    /// of its own (the whole text); `HTTPURL` trimmed first. Both now trim.
    @Test func aHostIsReadLowerCasedWithWhiteSpaceAroundTheURLAside() {
        #expect(URLText.host(of: " https://Example.COM/feed.xml\n") == "example.com")
        #expect(FetchLimiter.host(of: " https://Example.COM/feed.xml\n") == "example.com")
        #expect(FetchLimiter.host(of: "https://example.com/a") == FetchLimiter.host(of: "HTTPS://EXAMPLE.com/b"))
    }

    /// An empty host is no host: `HTTPURL.sameHost` used to find two host-less URLs "on one host".
    @Test func anEmptyHostIsNoHost() {
        #expect(URLText.host(of: "http:///a") == nil)
        #expect(URLText.host(of: "not a url") == nil)
        #expect(FetchLimiter.host(of: "http:///a") == "http:///a")
    }

    /// `HTTPURL.isHTTPS` compared the first six bytes with their case bit set, which also took a control byte 0x1A
    /// for the colon; the scheme is now read one way everywhere.
    @Test func httpsIsTheSchemeNotAPrefixOfBytes() {
        #expect(URLText.isHTTPS("HTTPS://host/a"))
        #expect(URLText.isHTTPS("  https://host/a"))
        #expect(!URLText.isHTTPS("https\u{1A}//host/a"))
        #expect(!URLText.isHTTPS("http://host/a"))
        #expect(!URLText.isHTTPS("httpsx://host/a"))
    }

    @Test func onlyHTTPAndHTTPSAreFetched() {
        #expect(URLText.scheme(of: "HTTP://host/") == "http")
        #expect(URLText.scheme(of: "1http://host/") == nil)
        #expect(URLText.scheme(of: "no colon") == nil)
        for scheme in ["http", "https"] { #expect(URLText.isFetched(scheme: scheme)) }
        for scheme in ["file", "ftp", "javascript", "HTTP", ""] { #expect(!URLText.isFetched(scheme: scheme)) }
    }

    @Test func aSchemeIsASCIILettersDigitsPlusMinusAndDots() {
        #expect(URLText.scheme(of: "Svn+SSH://host/") == "svn+ssh")
        #expect(URLText.scheme(of: "a1.b-c:rest") == "a1.b-c")
        #expect(URLText.scheme(of: ":no-scheme") == nil)
        #expect(URLText.scheme(of: "htt p://host/") == nil)
        #expect(URLText.scheme(of: "h\u{E9}ttp://host/") == nil)
        #expect(URLText.scheme(of: "ht@p://host/") == nil)
        #expect(URLText.scheme(of: "ht[p://host/") == nil)
    }

    @Test func theSchemeSeparatorIsFoundAnywhere() {
        #expect(URLText.containsSchemeSeparator("http://host/"))
        #expect(URLText.containsSchemeSeparator("x:/a://b"))
        #expect(!URLText.containsSchemeSeparator("http:/host/"))
        #expect(!URLText.containsSchemeSeparator("mailto:ada@example.com"))
        #expect(!URLText.containsSchemeSeparator(":/"))
        #expect(!URLText.containsSchemeSeparator(""))
    }
}
