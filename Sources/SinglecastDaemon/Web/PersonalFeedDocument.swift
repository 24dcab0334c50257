import FoundationEssentials
import SinglecastFeeds
import SinglecastSupport

/// The personal feeds as documents: RSS 2.0 with the iTunes namespace for podcast apps, and an OPML list of them.
/// Pure: the same feed and base URL give the same bytes, so the bytes' hash is the feed's ETag.
package struct PersonalFeedDocument: Sendable {
    /// `scheme://host[:port]` as the client addressed the listener.
    package var baseURL: String

    package init(baseURL: String) {
        // Credentials never go into a document: an address with them keeps only the host.
        var base = Substring(baseURL)
        if let scheme = base.firstRange(of: "://") {
            let authority = base[scheme.upperBound...]
            if let at = authority.lastIndex(of: "@") {
                base = base[..<scheme.upperBound] + authority[authority.index(after: at)...]
            }
        }
        while base.hasSuffix("/") { base = base.dropLast() }
        self.baseURL = String(base)
    }

    package func feedURL(_ podcast: Int64?) -> String {
        baseURL + "/feeds/" + (podcast.map(String.init) ?? "all") + ".xml"
    }

    package func mediaURL(_ episode: PersonalFeedEpisode) -> String { mediaURL(episode.id, episode.file) }

    /// `/media/<episode>/<name>`: the episode's file, or one saved beside it.
    package func mediaURL(_ episode: Int64, _ file: ServableFile) -> String {
        baseURL + "/media/\(episode)/" + file.name.percentEncodedExceptUnreserved()
    }

    package func artworkURL(_ podcast: Int64) -> String { baseURL + "/artwork/\(podcast)" }

    /// The RSS document of `feed`: one podcast's (`podcast` names it) or every podcast's.
    package func rss(_ feed: PersonalFeed, podcast: Int64?) -> [UInt8] {
        let byID = Dictionary(feed.podcasts.map { ($0.id, $0) }) { first, _ in first }
        let channel = podcast.flatMap { byID[$0] }
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" \
            xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:atom="http://www.w3.org/2005/Atom">
            <channel>

            """
        let title = channel?.title ?? "singlecast: every downloaded episode"
        out += element("title", title)
        out += element("link", channel?.link ?? feedURL(podcast))
        out += element("description", channel.map { $0.description.isEmpty ? $0.title : $0.description } ?? title)
        out +=
            "  <atom:link href=\"\(XMLEscape.attribute(feedURL(podcast)))\" rel=\"self\" type=\"application/rss+xml\"/>\n"
        if let language = channel?.language { out += element("language", language) }
        if let author = channel?.author { out += element("itunes:author", author) }
        out += element("generator", "singlecast")
        if let channel, channel.hasArtwork {
            let image = artworkURL(channel.id)
            out += "  <itunes:image href=\"\(XMLEscape.attribute(image))\"/>\n"
            out +=
                "  <image>\n  " + element("url", image) + "  " + element("title", title) + "  "
                + element("link", channel.link ?? feedURL(podcast)) + "  </image>\n"
        }
        for episode in feed.episodes { out += item(episode, podcast: byID[episode.podcastID]) }
        out += "</channel>\n</rss>\n"
        return Array(out.utf8)
    }

    private func item(_ episode: PersonalFeedEpisode, podcast: PersonalFeedPodcast?) -> String {
        var out = "  <item>\n"
        out += "  " + element("title", episode.title)
        if !episode.description.isEmpty { out += "  " + element("description", episode.description) }
        out += "    <guid isPermaLink=\"false\">\(XMLEscape.text(episode.guid))</guid>\n"
        if let link = episode.link { out += "  " + element("link", link) }
        if let published = episode.publishedAt {
            let date = Date(timeIntervalSince1970: TimeInterval(published / 1000))
            out += "  " + element("pubDate", FeedDate.rfc822String(date))
        }
        let type = MediaType.of(name: episode.file.name, announced: episode.file.announcedType)
        out +=
            "    <enclosure url=\"\(XMLEscape.attribute(mediaURL(episode)))\" length=\"\(episode.size)\" "
            + "type=\"\(XMLEscape.attribute(type))\"/>\n"
        if let seconds = episode.durationSeconds { out += "  " + element("itunes:duration", String(seconds)) }
        if let podcast, podcast.hasArtwork {
            out += "    <itunes:image href=\"\(XMLEscape.attribute(artworkURL(podcast.id)))\"/>\n"
        }
        if let podcast { out += "  " + element("itunes:author", podcast.author ?? podcast.title) }
        if let season = episode.season { out += "  " + element("itunes:season", String(season)) }
        if let number = episode.episodeNumber { out += "  " + element("itunes:episode", String(number)) }
        if let type = episode.episodeType { out += "  " + element("itunes:episodeType", type) }
        for sidecar in episode.sidecars {
            let url = XMLEscape.attribute(mediaURL(episode.id, sidecar.file))
            let type = XMLEscape.attribute(sidecar.mimeType)
            switch sidecar.kind {
            case .chapters:
                out += "    <podcast:chapters url=\"\(url)\" type=\"\(type)\"/>\n"
            case .transcript:
                out += "    <podcast:transcript url=\"\(url)\" type=\"\(type)\""
                if let language = sidecar.language { out += " language=\"\(XMLEscape.attribute(language))\"" }
                if let rel = sidecar.rel { out += " rel=\"\(XMLEscape.attribute(rel))\"" }
                out += "/>\n"
            }
        }
        return out + "  </item>\n"
    }

    private func element(_ name: String, _ text: String) -> String {
        "  <\(name)>\(XMLEscape.text(text))</\(name)>\n"
    }

    /// Every personal feed as an OPML list, each podcast's and the one of all episodes. Its date is the latest
    /// subscription's, so the list's bytes (and its ETag) change only when the list does.
    package func opml(_ podcasts: [PersonalFeedPodcast]) -> [UInt8] {
        let created = Date(timeIntervalSince1970: TimeInterval((podcasts.map(\.subscribedAt).max() ?? 0) / 1000))
        let outlines =
            podcasts.map {
                OPMLOutline(title: $0.title.isEmpty ? nil : $0.title, feedURL: feedURL($0.id), htmlURL: $0.link)
            }
            + [OPMLOutline(title: "singlecast: every downloaded episode", feedURL: feedURL(nil))]
        return Array(OPML.document(title: "singlecast personal feeds", outlines: outlines, created: created))
    }
}
