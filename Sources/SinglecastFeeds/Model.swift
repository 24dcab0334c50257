import FoundationEssentials

/// A podcast feed as ``FeedParser`` reads it: RSS 2.0 (and 0.9x/1.0), Atom, the iTunes namespace and
/// Podcasting 2.0.
///
/// Every URL is absolute: relative references are resolved against `xml:base` or the URL the feed was
/// fetched from. Text fields are trimmed; optional fields are `nil` when the feed leaves them out or
/// gives an empty or invalid value.
package struct Feed: Sendable, Hashable, Codable {
    /// Which syntax the document used.
    package var format: FeedFormat
    /// `channel/title` (Atom `feed/title`), whitespace collapsed; empty when the feed has none.
    package var title: String
    /// The podcast's website: `channel/link`, else the first Atom alternate link with an HTML (or no) type.
    package var link: String?
    /// Plain text: `channel/description`, else `itunes:summary`, else Atom `subtitle`, HTML stripped.
    package var description: String
    /// `itunes:subtitle`.
    package var subtitle: String?
    /// `itunes:author` (RSS), Atom `author/name`.
    package var author: String?
    /// `itunes:image@href`, else `image/url`, else Atom `logo`, else Atom `icon`.
    package var artworkURL: String?
    /// `language`.
    package var language: String?
    /// `itunes:new-feed-url`, else the old `redirect/newLocation`.
    package var newFeedURL: String?
    /// `podcast:guid`.
    package var podcastGUID: String?
    /// `itunes:complete` is `yes`: the podcast will publish no more episodes.
    package var isComplete: Bool
    /// `podcast:funding` elements in document order.
    package var funding: [Funding]
    /// The episodes (`item`, Atom `entry`) in document order; each ``Episode/identity`` once.
    ///
    /// Empty when the episodes were handed out in batches (``FeedParser/parse(_:url:batchSize:episodes:)``).
    package var episodes: [Episode]
    /// Items left out because an earlier item had the same ``Episode/identity`` (the first one is kept).
    package var duplicateItems: Int
    /// The identities those items repeated, each once, at most ``duplicateIdentityLimit`` of them: enough
    /// for a log line.
    package var duplicateIdentities: [String]

    /// `itunes:type`, lowercased, only when it is `episodic` or `serial`.
    package var showType: String?
    /// `itunes:explicit`: yes/explicit/true, no/clean/false; `nil` for anything else.
    package var explicit: Bool?
    /// `podcast:locked`: `true` when the owner forbids importing the feed into other hosts.
    package var locked: Bool?
    /// `itunes:owner`.
    package var owner: Owner?
    /// One path per top-level `itunes:category`: the category, then its subcategories.
    package var categories: [[String]]
    /// `itunes:keywords`, split on commas.
    package var keywords: [String]
    /// `generator`.
    package var generator: String?
    /// Channel-level `podcast:person` elements.
    package var persons: [Person]
    /// Channel-level `atom:link` elements (RSS) or `link` elements (Atom): self, hub, payment, first/next…
    package var links: [FeedLink]
    /// The base relative URLs were resolved against: the root's `xml:base`, else the feed's URL.
    package var baseURL: String?

    /// How many repeated identities ``duplicateIdentities`` names.
    package static let duplicateIdentityLimit = 10

    /// Creates an empty feed; the parser fills it in.
    package init(format: FeedFormat = .rss, title: String = "") {
        self.format = format
        self.title = title
        self.link = nil
        self.description = ""
        self.subtitle = nil
        self.author = nil
        self.artworkURL = nil
        self.language = nil
        self.newFeedURL = nil
        self.podcastGUID = nil
        self.isComplete = false
        self.funding = []
        self.episodes = []
        self.duplicateItems = 0
        self.duplicateIdentities = []
        self.showType = nil
        self.explicit = nil
        self.locked = nil
        self.owner = nil
        self.categories = []
        self.keywords = []
        self.generator = nil
        self.persons = []
        self.links = []
        self.baseURL = nil
    }
}

/// The syntax of a feed document.
package enum FeedFormat: String, Sendable, Hashable, Codable {
    /// RSS 2.0 or 0.9x (`<rss>`), or RSS 1.0 (`<rdf:RDF>`).
    case rss
    /// Atom 1.0 (`<feed xmlns="http://www.w3.org/2005/Atom">`).
    case atom
}

/// One episode of a podcast: an RSS `item` or an Atom `entry`.
package struct Episode: Sendable, Hashable, Codable {
    /// `guid` (RSS) or `id` (Atom), trimmed, verbatim (never resolved).
    package var guid: String?
    /// `false` only when the RSS `guid` says `isPermaLink="false"`, and for Atom ids.
    package var guidIsPermaLink: Bool
    /// `title`, whitespace collapsed; empty when the item has none.
    package var title: String
    /// `link`, else the first Atom alternate link, else a permalink `guid` that is an absolute `http(s)` URL
    /// as written; a guid such as `h-4` is never resolved against the feed's URL into a link.
    package var link: String?
    /// Plain text for display.
    ///
    /// The last non-empty `itunes:summary` or `media:description`, an Atom text `content`, or a `description`
    /// that is not HTML; when none of these exists, ``descriptionHTML`` with its tags stripped; for an Atom
    /// entry without content, its `summary`.
    package var description: String
    /// The HTML body: `content:encoded`, else an HTML `description`, else Atom HTML `content`, else (with no
    /// other description) an Atom HTML `summary`.
    package var descriptionHTML: String?
    /// `itunes:subtitle`.
    package var subtitle: String?
    /// `itunes:author` (RSS) or Atom `author/name`.
    package var author: String?
    /// `pubDate` (else `dc:date`), Atom `published` (else `updated`).
    package var published: Date?
    /// `itunes:duration` in whole seconds.
    package var durationSeconds: Int?
    /// The media file to download: the first audio or video enclosure, else the first of ``enclosures``.
    package var enclosure: Enclosure?
    /// Every `enclosure`, `media:content` (also inside `media:group`) and Atom `link rel="enclosure"`,
    /// in document order, duplicates kept.
    package var enclosures: [Enclosure]
    /// `itunes:season`, else `podcast:season`.
    package var season: Int?
    /// `itunes:episode`, else an integer `podcast:episode`; only values above zero.
    package var episodeNumber: Int?
    /// `itunes:episodeType`, lowercased, only `full`, `trailer` or `bonus`.
    package var episodeType: String?
    /// `itunes:image@href`, else `media:thumbnail@url` (also inside `media:group`).
    package var artworkURL: String?
    /// `podcast:chapters@url`.
    package var chaptersURL: String?
    /// `podcast:chapters@type` (`application/json+chapters` by the namespace; `nil` when missing or empty).
    package var chaptersType: String?
    /// Podlove Simple Chapters (`psc:chapter`) embedded in the item.
    package var chapters: [Chapter]
    /// `podcast:transcript` elements.
    package var transcripts: [Transcript]
    /// `podcast:person` elements.
    package var persons: [Person]
    /// `podcast:integrity` of the item or of its `enclosure`.
    package var integrity: Integrity?
    /// `itunes:explicit`: yes/explicit/true, no/clean/false; `nil` for anything else.
    package var explicit: Bool?
    /// `atom:link rel="payment"` (Flattr and the like).
    package var paymentURL: String?

    /// Creates an empty episode; the parser fills it in.
    package init(title: String = "") {
        self.guid = nil
        self.guidIsPermaLink = true
        self.title = title
        self.link = nil
        self.description = ""
        self.descriptionHTML = nil
        self.subtitle = nil
        self.author = nil
        self.published = nil
        self.durationSeconds = nil
        self.enclosure = nil
        self.enclosures = []
        self.season = nil
        self.episodeNumber = nil
        self.episodeType = nil
        self.artworkURL = nil
        self.chaptersURL = nil
        self.chaptersType = nil
        self.chapters = []
        self.transcripts = []
        self.persons = []
        self.integrity = nil
        self.explicit = nil
        self.paymentURL = nil
    }

    /// Stable identity within the podcast: the guid, else the link, else the enclosure URL without its
    /// query string, a newline, and the title.
    ///
    /// Hosts change query strings (tracking tokens, signatures) between fetches, so the query is not
    /// part of the fallback identity; the title keeps two episodes apart that share one file URL.
    package var identity: String {
        if let guid, !guid.isEmpty { return guid }
        if let link, !link.isEmpty { return link }
        var url = enclosure?.url ?? ""
        if let mark = url.firstIndex(where: { $0 == "?" || $0 == "#" }) { url = String(url[..<mark]) }
        return url + "\n" + title
    }
}

/// A media file attached to an episode.
package struct Enclosure: Sendable, Hashable, Codable {
    /// Absolute URL; scheme and host lowercased, an empty path written as `/`. Any scheme is kept.
    package var url: String
    /// MIME type as the feed gives it, `nil` when missing or empty.
    package var type: String?
    /// Size in bytes, `nil` when missing, not a number, or zero.
    package var length: Int?

    package init(url: String, type: String? = nil, length: Int? = nil) {
        self.url = url
        self.type = type
        self.length = length
    }
}

/// A `podcast:funding` link.
package struct Funding: Sendable, Hashable, Codable {
    package var url: String
    /// The element's text ("Support the show!"); may be empty.
    package var text: String

    package init(url: String, text: String) {
        self.url = url
        self.text = text
    }
}

/// A `podcast:transcript` link; an element without `url` is left out.
package struct Transcript: Sendable, Hashable, Codable {
    package var url: String
    /// MIME type (`text/vtt`, `application/srt`, `application/x-subrip`, `application/json`, `text/html`…) as the
    /// feed writes it, trimmed; empty when missing.
    package var type: String
    package var language: String?
    /// `rel`, e.g. `captions`.
    package var rel: String?

    package init(url: String, type: String, language: String? = nil, rel: String? = nil) {
        self.url = url
        self.type = type
        self.language = language
        self.rel = rel
    }
}

/// A `podcast:integrity` value for the episode's media file.
package struct Integrity: Sendable, Hashable, Codable {
    /// `sri` (a Subresource Integrity string such as `sha384-…`) or `pgp-signature`.
    package var type: String
    package var value: String

    package init(type: String, value: String) {
        self.type = type
        self.value = value
    }
}

/// One Podlove Simple Chapters mark (`psc:chapter`).
package struct Chapter: Sendable, Hashable, Codable {
    /// Offset from the start of the episode in seconds (`HH:MM:SS.mmm` in the feed).
    package var start: Double
    package var title: String
    package var href: String?
    package var image: String?

    package init(start: Double, title: String, href: String? = nil, image: String? = nil) {
        self.start = start
        self.title = title
        self.href = href
        self.image = image
    }
}

/// A `podcast:person`.
package struct Person: Sendable, Hashable, Codable {
    package var name: String
    /// Lowercased; `host` when the feed gives none.
    package var role: String
    /// Lowercased; `cast` when the feed gives none.
    package var group: String
    package var href: String?
    package var img: String?

    package init(name: String, role: String = "host", group: String = "cast", href: String? = nil, img: String? = nil) {
        self.name = name
        self.role = role
        self.group = group
        self.href = href
        self.img = img
    }
}

/// `itunes:owner`.
package struct Owner: Sendable, Hashable, Codable {
    package var name: String?
    package var email: String?

    package init(name: String? = nil, email: String? = nil) {
        self.name = name
        self.email = email
    }
}

/// A typed link of the feed itself (`atom:link` in RSS, `link` in Atom).
package struct FeedLink: Sendable, Hashable, Codable {
    /// `rel`; Atom's default `alternate` when absent.
    package var rel: String
    package var href: String
    package var type: String?
    package var title: String?

    package init(rel: String, href: String, type: String? = nil, title: String? = nil) {
        self.rel = rel
        self.href = href
        self.type = type
        self.title = title
    }
}
