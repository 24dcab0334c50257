import Testing

@testable import SinglecastDaemon

/// `HTTPURL` answers scheme and host questions through `URLText`, as the engine and the fetch limiter do.
@Suite struct HTTPURLTests {
    /// Two URLs without a host used to be "on one host" (both read as an empty host), which would hand a feed's
    /// credentials to an enclosure that names no host.
    @Test func urlsWithoutAHostAreNeverOnOneHost() {
        #expect(!HTTPURL.sameHost("http:///a.mp3", "http:///feed.xml"))
        #expect(HTTPURL.sameHost(" https://CDN.example.com/a.mp3", "http://cdn.example.COM/feed.xml"))
        #expect(!HTTPURL.sameHost("https://cdn.example.com/a.mp3", "https://example.com/feed.xml"))
    }

    /// The download queue checked `require_https` with its own `hasPrefix("https:")`; it asks `isHTTPS` now.
    @Test func httpsIsReadFromTheScheme() {
        #expect(HTTPURL.isHTTPS("HTTPS://host/a"))
        #expect(!HTTPURL.isHTTPS("http://host/a"))
        #expect(!HTTPURL.isHTTPS("https\u{1A}//host/a"))
    }

    /// A completion stores the request's URL as its final URL, unparsed, when libcurl reports it unchanged: that is
    /// right only because the form `HTTPURL` stores is one it leaves as it is.
    @Test(arguments: [
        "http://example.com", "HTTPS://Example.COM:8443/a/b?c=d#e", " https://user:pa%40ss@host/x.mp3 ",
        "http://h/a%20b.mp3", "https://h/ä ö.mp3", "http://[::1]:8080/x", "http://h/a?b=c&d=e;f",
        "https://xn--bcher-kva.example/", "http://h:80/", "https://h/path/../x/./y", "http://user@h/", "http://h/?",
        "http://h/#", "http://h/a#b#c", "http://h/%zz", "https://h/a?q=ä&r=%C3%A4", "http://H/A.MP3",
    ])
    func theStoredFormIsItsOwnParse(text: String) throws {
        let stored = try HTTPURL(text).string
        #expect(try HTTPURL(stored).string == stored)
        #expect(try HTTPURL(stored).user == nil)
    }
}
