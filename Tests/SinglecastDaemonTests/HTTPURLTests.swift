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

    /// A plain URL is taken as written, in one parse: what the full parse makes of it, to the byte.
    @Test(arguments: [
        "http://host", "http://host/", "https://cdn.example.com/a.mp3", "http://Example.COM/Path/A.MP3",
        "http://h:80/x", "http://h:080/x", "http://h:0080/x", "http://h:0/x", "http://h:00/x", "http://h:65535/x",
        "http://h:99999/x", "http://h:/x",
        "http://127.0.0.1:8080/f00001.bin", "http://a..b/x", "http://-h-/x", "http://h./x", "http://1.2.3.4.5/x",
        "http://h/a%2Fb%20c?x=1&y=%41#frag", "http://h/?", "http://h/#", "http://h?q", "http://h#f", "http://h/a;b=c",
        "http://h/~user/a+b,c!d$e'f(g)h*i=j@k:l", "http://h/%e2%82%ac", "http://h//double//slash", "http://h/./a/../b",
        "HTTP://host/a", "Https://host/a", "http://h/a?b?c/d", "http://xn--bcher-kva.example/a",
    ])
    func aPlainURLIsTakenAsTheFullParseWritesIt(text: String) throws {
        let full = try? HTTPURL(parsing: text)
        let quick = try? HTTPURL(text)
        #expect(quick?.string == full?.string)
        #expect(quick?.url == full?.url)
        #expect(quick?.user == full?.user && quick?.password == full?.password)
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
