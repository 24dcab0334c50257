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
}
