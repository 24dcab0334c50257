import SinglecastFeeds
import Testing

/// Feed autodiscovery on pages as sites write them.
@Suite struct FeedLinksTests {
    private func scan(_ html: String, page: String = "https://example.com/shows/daily/index.html") -> FeedLinks.Page {
        FeedLinks.scan(Array(html.utf8), pageURL: page)
    }

    @Test func relativeLinksResolveAgainstThePageAndTheFirstRSSFeedComesFirst() {
        let page = scan(
            """
            <!DOCTYPE html><html><head><title>Daily</title>
            <link rel="stylesheet" href="/style.css">
            <link rel="alternate" type="text/html" href="/other.html">
            <link rel="alternate" type="application/atom+xml" href="atom.xml" title="Atom">
            <LINK REL="Alternate feed" TYPE="application/rss+xml; charset=utf-8" HREF='../feed.rss?a=1&amp;b=2'>
            <link rel=alternate type=application/rss+xml href=//cdn.example.net/mp3.xml>
            <link rel="alternate" type="application/rss+xml" href="https://example.com/shows/feed.rss?a=1&b=2">
            </head><body></body></html>
            """
        )
        #expect(page.isHTML)
        #expect(
            page.feeds.map(\.url) == [
                "https://example.com/shows/feed.rss?a=1&b=2", "https://example.com/shows/daily/atom.xml",
                "https://cdn.example.net/mp3.xml",
            ]
        )
        #expect(page.feeds.map(\.kind) == [.rss, .atom, .rss])
        #expect(page.feeds[1].title == "Atom")
    }

    @Test func theBaseHrefAppliesToEveryLinkEvenThoseBeforeIt() {
        let page = scan(
            """
            <html><head>
            <link rel="alternate" type="application/rss+xml" href="feed.xml">
            <base href="/podcasts/">
            <base href="https://ignored.example/">
            </head></html>
            """
        )
        #expect(page.feeds.map(\.url) == ["https://example.com/podcasts/feed.xml"])
    }

    @Test func linksInCommentsScriptsAndStylesAreNoTags() {
        let page = scan(
            """
            <html><head>
            <!-- <link rel="alternate" type="application/rss+xml" href="/old.xml"> -->
            <script>var s = '<link rel="alternate" type="application/rss+xml" href="/js.xml">';</script>
            <style>/* <link rel="alternate" type="application/rss+xml" href="/css.xml"> */</style>
            <link rel="alternate" type="application/atom+xml" href="/real.atom" title="a > b">
            </head></html>
            """
        )
        #expect(page.feeds.map(\.url) == ["https://example.com/real.atom"])
        #expect(page.feeds.first?.title == "a > b")
    }

    @Test func aPageWithoutFeedsAndADocumentThatIsNoPage() {
        let none = scan("<!doctype html><html><body><p>No feed here.</p></body></html>")
        #expect(none.isHTML)
        #expect(none.feeds.isEmpty)
        let xml = scan("<?xml version=\"1.0\"?><data><link>https://example.com/</link></data>")
        #expect(!xml.isHTML)
        #expect(xml.feeds.isEmpty)
    }

    @Test func brokenMarkupEndsWithoutTrapping() {
        for text in [
            "<", "<link", "<link rel=", "<link rel='alternate", "<!--", "<script>", "<base href=\"", "<<<>>>",
            "<link rel=alternate type=application/rss+xml href=>", "<a\u{0}b>", "<link rel=\"alternate\" href=x",
        ] {
            _ = scan(text)
        }
        #expect(scan("<link rel=alternate type=application/rss+xml href=>").feeds.isEmpty)
    }
}
