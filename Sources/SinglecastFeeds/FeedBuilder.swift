import FoundationEssentials

/// Turns ``XMLReader`` events into a ``Feed``.
///
/// A stack of contexts (channel, item, image, owner, media group…) says what each element means where
/// it appears; the text of an element that holds a value is collected into one reusable buffer and
/// becomes a `String` only when the element ends. Elements the parser does not use cost no `String`s.
struct FeedBuilder: XMLHandler {
    private enum Context {
        case document
        case rss
        case rdf
        case redirect
        case channel
        case image
        case owner
        case category
        case atomAuthor
        case item
        case itemAtomAuthor
        case enclosure
        case mediaGroup
        case alternateEnclosure(isDefault: Bool)
        case pscChapters
        case capture
        case skip
    }

    /// The value an element's text is collected for.
    private enum Field {
        case feedTitle(isHTML: Bool)
        case feedLink
        case feedDescription
        case feedSummary
        case feedSubtitle
        case atomSubtitle(isHTML: Bool)
        case feedAuthor
        case atomAuthorName
        case language
        case newFeedURL
        case newLocation
        case podcastGUID
        case complete
        case feedExplicit
        case locked
        case showType
        case generator
        case keywords
        case imageURL
        case ownerName
        case ownerEmail
        case atomIcon
        case atomLogo
        /// `podcast:funding`; its URL waits in ``FeedBuilder/fundingURL``.
        case funding
        /// `podcast:person` of the channel; its attributes wait in ``FeedBuilder/person``.
        case feedPerson

        case title(isHTML: Bool)
        case link
        case guid
        case atomID
        case description
        case contentEncoded
        case summary
        case atomContent(isHTML: Bool)
        case atomSummary(isHTML: Bool)
        case subtitle
        case author
        case itemAtomAuthorName
        case pubDate
        case dcDate
        case atomPublished
        case atomUpdated
        case duration
        case season
        case episode
        case podcastSeason
        case podcastEpisode
        case episodeType
        case explicit
        /// `podcast:person` of an item; its attributes wait in ``FeedBuilder/person``.
        case person
    }

    /// What an item's elements said, before the rules that pick an ``Episode``'s values run.
    private struct ItemDraft {
        var episode = Episode()
        var title: String?
        var rssLink: String?
        var atomLink: String?
        var guid: String?
        var base: String?
        /// Plain-text description so far: a later `itunes:summary`/`media:description` replaces it, an
        /// RSS `description` only fills it when empty.
        var text = ""
        var rssHTML: String?
        var contentEncoded: String?
        var atomHTML: String?
        /// Atom `summary`, the description only when the entry has no content.
        var atomSummary: String?
        var atomSummaryIsHTML = false
        var pubDate: String?
        var dcDate: String?
        var atomPublished: String?
        var atomUpdated: String?
        var itunesSeason: Int?
        var podcastSeason: Int?
        var itunesEpisode: Int?
        var podcastEpisode: Int?
        var itunesImage: String?
        var thumbnail: String?
        var itunesAuthor: String?
        var atomAuthor: String?
    }

    static let htmlError = FeedError.notAFeed(
        "The document is an HTML page, not a feed. If it is a podcast's website, use the feed URL it links "
            + "to (<link rel=\"alternate\" type=\"application/rss+xml\" href=…>)."
    )

    /// Takes finished episodes in batches; `nil` collects them into ``Feed/episodes``.
    typealias Consumer = ([Episode]) -> Void

    private var feed = Feed()
    private let batchSize: Int
    private let consumer: Consumer?
    /// Episodes not yet handed to ``consumer``.
    private var batch: [Episode] = []
    /// Every identity kept so far, to leave out later items that repeat one.
    private var identities: Set<String> = []
    private var contexts: [Context] = [.document]
    private var depth = 0
    private var bases: [(depth: Int, url: String?)]

    /// Kept free of payloads that need reference counting: it is copied at every event inside a captured element.
    private var field: Field?
    /// The attribute values of the `podcast:person` or `podcast:funding` being captured, for its text to complete.
    private var person = Person(name: "")
    private var fundingURL = ""
    private var captureDepth = 0
    private var captureMarkup = false
    private var buffer: [UInt8] = []
    /// Where ``PlainText`` writes each description before it becomes a `String`.
    private var plainTextScratch: [UInt8] = []
    private var item: ItemDraft?
    /// Where the current item starts and how long the document is, to size the episode list (see ``keep``).
    private var itemOffset = 0
    private var documentSize = 0
    private var sized = false

    private var rssLink: String?
    private var channelDescription: String?
    private var itunesSummary: String?
    private var atomSubtitle: String?
    private var atomAuthor: String?
    private var itunesAuthor: String?
    private var itunesImage: String?
    private var imageURL: String?
    private var atomIcon: String?
    private var atomLogo: String?
    private var itunesNewFeedURL: String?
    private var newLocation: String?
    private var owner: Owner?

    init(url: String?, batchSize: Int = 0, consumer: Consumer? = nil) {
        self.batchSize = max(batchSize, 1)
        self.consumer = consumer
        bases = [(0, url)]
        feed.baseURL = url
        buffer.reserveCapacity(4096)
    }

    private var base: String? { bases[bases.count - 1].url }

    // MARK: - Events

    mutating func startElement(_ tag: StartTag) throws(FeedError) {
        depth += 1
        if field != nil {
            if captureMarkup { buffer.append(contentsOf: tag.raw) }
            return
        }
        if let xmlBase = tag.attribute("base", .xml) {
            let resolved = URLResolver.resolve(xmlBase, against: base)
            bases.append((depth, resolved))
            if depth == 1 { feed.baseURL = resolved }
        }
        let context: Context
        switch contexts[contexts.count - 1] {
        case .document: context = try root(tag)
        case .rss: context = inRSS(tag)
        case .rdf: context = inRDF(tag)
        case .redirect: context = tag.name == "newLocation" ? capture(.newLocation) : .skip
        case .channel: context = inChannel(tag)
        case .image: context = tag.namespace == .none && tag.name == "url" ? capture(.imageURL) : .skip
        case .owner: context = inOwner(tag)
        case .category: context = inCategory(tag)
        case .atomAuthor: context = isAtom(tag, "name") ? capture(.atomAuthorName) : .skip
        case .item: context = inItem(tag)
        case .itemAtomAuthor: context = isAtom(tag, "name") ? capture(.itemAtomAuthorName) : .skip
        case .enclosure: context = inEnclosure(tag, isDefault: true)
        case .alternateEnclosure(let isDefault): context = inEnclosure(tag, isDefault: isDefault)
        case .mediaGroup: context = inMediaGroup(tag)
        case .pscChapters: context = inPSCChapters(tag)
        case .capture, .skip: context = .skip
        }
        contexts.append(context)
    }

    mutating func endElement(raw: UnsafeBufferPointer<UInt8>) throws(FeedError) {
        defer { depth -= 1 }
        if let field {
            if depth > captureDepth {
                if captureMarkup { buffer.append(contentsOf: raw) }
                return
            }
            self.field = nil
            let value = String(decoding: buffer, as: UTF8.self)
            buffer.removeAll(keepingCapacity: true)
            store(field, value)
        }
        let context = contexts.removeLast()
        // Moved out, not copied: a copy would retain and release every string of the item once more.
        if case .item = context, var draft = item.take() {
            keep(FeedBuilder.finish(&draft, scratch: &plainTextScratch))
        }
        if bases.count > 1 && bases[bases.count - 1].depth == depth { bases.removeLast() }
    }

    mutating func text(_ raw: UnsafeBufferPointer<UInt8>) {
        guard field != nil else { return }
        XMLText.appendDecoded(raw, to: &buffer, isAttribute: false)
    }

    mutating func cdata(_ content: UnsafeBufferPointer<UInt8>) {
        guard field != nil else { return }
        buffer.append(contentsOf: content)
    }

    // MARK: - Contexts

    private mutating func capture(_ field: Field, markup: Bool = false) -> Context {
        self.field = field
        captureDepth = depth
        captureMarkup = markup
        return .capture
    }

    private mutating func root(_ tag: StartTag) throws(FeedError) -> Context {
        switch (tag.namespace, tag.localName) {
        case (.none, "rss"), (.other, "rss"):
            feed.format = .rss
            return .rss
        case (.atom, "feed"):
            feed.format = .atom
            return .channel
        case (.rdf, "RDF"):
            feed.format = .rss
            return .rdf
        case (_, let name) where name.lowercased() == "html":
            throw FeedBuilder.htmlError
        case (_, "opml"):
            throw .notAFeed(
                "The document is an OPML subscription list, not a feed; import it as OPML to subscribe to the "
                    + "feeds it lists."
            )
        case (_, "feed"):
            throw .notAFeed(
                "The root element <feed> is not in the Atom namespace (xmlns=\"http://www.w3.org/2005/Atom\"), "
                    + "so this is not an Atom feed."
            )
        case (_, let name):
            throw .notAFeed(
                "The root element is <\(name)>, but a feed's root is <rss> (RSS) or <feed> (Atom): this "
                    + "document is not a podcast feed."
            )
        }
    }

    private mutating func inRSS(_ tag: StartTag) -> Context {
        guard tag.namespace == .none else { return .skip }
        switch tag.name {
        case "channel": return .channel
        case "redirect": return .redirect
        default: return .skip
        }
    }

    private mutating func inRDF(_ tag: StartTag) -> Context {
        guard tag.namespace == .none else { return .skip }
        switch tag.name {
        case "channel": return .channel
        case "image": return .image
        case "item": return startItem(tag)
        default: return .skip
        }
    }

    private mutating func inChannel(_ tag: StartTag) -> Context {
        switch tag.namespace {
        case .none:
            switch tag.name {
            case "item": return startItem(tag)
            case "title": return capture(.feedTitle(isHTML: false))
            case "link": return capture(.feedLink)
            case "description": return capture(.feedDescription, markup: true)
            case "language": return capture(.language)
            case "generator": return capture(.generator)
            case "image": return .image
            default: return .skip
            }
        case .atom:
            switch tag.name {
            case "entry": return startItem(tag)
            case "title": return capture(.feedTitle(isHTML: isHTMLType(tag)))
            case "subtitle": return capture(.atomSubtitle(isHTML: isHTMLType(tag)))
            case "link":
                if let link = feedLink(tag) { feed.links.append(link) }
                return .skip
            case "icon": return capture(.atomIcon)
            case "logo": return capture(.atomLogo)
            case "author": return .atomAuthor
            case "generator": return capture(.generator)
            default: return .skip
            }
        case .itunes:
            switch tag.name {
            case "summary": return capture(.feedSummary, markup: true)
            case "subtitle": return capture(.feedSubtitle)
            case "author": return capture(.feedAuthor)
            case "image":
                if itunesImage == nil, let href = tag.attribute("href")?.trimmedOrNil {
                    itunesImage = URLResolver.resolve(href, against: base)
                }
                return .skip
            case "new-feed-url": return capture(.newFeedURL)
            case "complete": return capture(.complete)
            case "explicit": return capture(.feedExplicit)
            case "type": return capture(.showType)
            case "keywords": return capture(.keywords)
            case "owner":
                if owner == nil { owner = Owner() }
                return .owner
            case "category":
                feed.categories.append([tag.attribute("text") ?? ""])
                return .category
            default: return .skip
            }
        case .podcast:
            switch tag.name {
            case "guid": return capture(.podcastGUID)
            case "locked": return capture(.locked)
            case "funding":
                guard let url = tag.attribute("url")?.trimmedOrNil else { return .skip }
                fundingURL = URLResolver.resolve(url, against: base)
                return capture(.funding)
            case "person":
                person = personAttributes(tag)
                return capture(.feedPerson)
            default: return .skip
            }
        default:
            return .skip
        }
    }

    private mutating func inOwner(_ tag: StartTag) -> Context {
        guard tag.namespace == .itunes else { return .skip }
        switch tag.name {
        case "name": return capture(.ownerName)
        case "email": return capture(.ownerEmail)
        default: return .skip
        }
    }

    private mutating func inCategory(_ tag: StartTag) -> Context {
        guard tag.namespace == .itunes, tag.name == "category" else { return .skip }
        if let text = tag.attribute("text"), !feed.categories.isEmpty {
            feed.categories[feed.categories.count - 1].append(text)
        }
        return .category
    }

    private mutating func startItem(_ tag: StartTag) -> Context {
        itemOffset = tag.offset
        documentSize = tag.document.count
        var draft = ItemDraft()
        draft.base = base
        item = draft
        return .item
    }

    private mutating func inItem(_ tag: StartTag) -> Context {
        let base = self.base
        switch tag.namespace {
        case .none:
            switch tag.name {
            case "title": return capture(.title(isHTML: false))
            case "link": return capture(.link)
            case "guid":
                let permalink = tag.attribute("isPermaLink")?.trimmed.lowercased()
                item?.episode.guidIsPermaLink = permalink == nil || permalink == "true"
                return capture(.guid)
            case "description": return capture(.description, markup: true)
            case "pubDate": return capture(.pubDate)
            case "enclosure":
                if let enclosure = enclosure(tag, urlKey: "url", lengthKey: "length") {
                    item?.episode.enclosures.append(enclosure)
                }
                return .enclosure
            default: return .skip
            }
        case .atom:
            switch tag.name {
            case "title": return capture(.title(isHTML: isHTMLType(tag)))
            case "id": return capture(.atomID)
            case "link":
                entryLink(tag)
                return .skip
            case "content":
                guard let kind = atomTextKind(tag) else { return .skip }
                return capture(.atomContent(isHTML: kind.isHTML), markup: kind.markup)
            case "summary":
                guard let kind = atomTextKind(tag) else { return .skip }
                return capture(.atomSummary(isHTML: kind.isHTML), markup: kind.markup)
            case "published": return capture(.atomPublished)
            case "updated": return capture(.atomUpdated)
            case "author": return .itemAtomAuthor
            default: return .skip
            }
        case .itunes:
            switch tag.name {
            case "summary": return capture(.summary, markup: true)
            case "subtitle": return capture(.subtitle)
            case "author": return capture(.author)
            case "duration": return capture(.duration)
            case "season": return capture(.season)
            case "episode": return capture(.episode)
            case "episodeType": return capture(.episodeType)
            case "explicit": return capture(.explicit)
            case "image":
                if item?.itunesImage == nil, let href = tag.attribute("href")?.trimmedOrNil {
                    item?.itunesImage = URLResolver.resolve(href, against: base)
                }
                return .skip
            default: return .skip
            }
        case .content:
            return tag.name == "encoded" ? capture(.contentEncoded, markup: true) : .skip
        case .media:
            return inMediaGroup(tag)
        case .dc:
            return tag.name == "date" ? capture(.dcDate) : .skip
        case .psc:
            return tag.name == "chapters" ? .pscChapters : .skip
        case .podcast:
            switch tag.name {
            case "chapters":
                // As before the type was read, a later element with a URL replaces an earlier one, type and all.
                if let url = tag.attribute("url")?.trimmedOrNil {
                    item?.episode.chaptersURL = URLResolver.resolve(url, against: base)
                    item?.episode.chaptersType = tag.attribute("type")?.trimmedOrNil
                }
                return .skip
            case "transcript":
                if let url = tag.attribute("url")?.trimmedOrNil {
                    item?.episode.transcripts.append(
                        Transcript(
                            url: URLResolver.resolve(url, against: base),
                            type: tag.attribute("type")?.trimmed ?? "",
                            language: tag.attribute("language")?.trimmedOrNil,
                            rel: tag.attribute("rel")?.trimmedOrNil
                        )
                    )
                }
                return .skip
            case "person":
                person = personAttributes(tag)
                return capture(.person)
            case "integrity":
                integrity(tag)
                return .skip
            case "season": return capture(.podcastSeason)
            case "episode": return capture(.podcastEpisode)
            case "alternateEnclosure":
                let isDefault = tag.attribute("default")?.trimmed.lowercased() == "true"
                return .alternateEnclosure(isDefault: isDefault)
            default: return .skip
            }
        default:
            return .skip
        }
    }

    private mutating func inEnclosure(_ tag: StartTag, isDefault: Bool) -> Context {
        if isDefault && tag.namespace == .podcast && tag.name == "integrity" { integrity(tag) }
        return .skip
    }

    /// `media:` elements, directly in an item or inside `media:group`.
    private mutating func inMediaGroup(_ tag: StartTag) -> Context {
        guard tag.namespace == .media else { return .skip }
        let base = self.base
        switch tag.name {
        case "content":
            if let enclosure = enclosure(tag, urlKey: "url", lengthKey: "fileSize") {
                item?.episode.enclosures.append(enclosure)
            }
            return .skip
        case "thumbnail":
            if item?.thumbnail == nil, let url = tag.attribute("url")?.trimmedOrNil {
                item?.thumbnail = URLResolver.resolve(url, against: base)
            }
            return .skip
        case "description": return capture(.summary)
        case "group": return .mediaGroup
        default: return .skip
        }
    }

    private mutating func inPSCChapters(_ tag: StartTag) -> Context {
        guard tag.namespace == .psc, tag.name == "chapter" else { return .skip }
        if let start = tag.attribute("start").flatMap(FeedDuration.exactSeconds) {
            item?.episode.chapters.append(
                Chapter(
                    start: start,
                    title: tag.attribute("title") ?? "",
                    href: tag.attribute("href")?.trimmedOrNil,
                    image: tag.attribute("image")?.trimmedOrNil
                )
            )
        }
        return .skip
    }

    // MARK: - Attribute values

    private func isAtom(_ tag: StartTag, _ name: StaticString) -> Bool {
        tag.namespace == .atom && tag.name == name
    }

    private func isHTMLType(_ tag: StartTag) -> Bool {
        guard let type = tag.attribute("type")?.trimmed.lowercased() else { return false }
        return type == "html" || type == "xhtml"
    }

    /// How to read an Atom text construct by its `type`: HTML or not, and whether its child elements are the
    /// value (`xhtml`); `nil` for content of a media type that is not text.
    private func atomTextKind(_ tag: StartTag) -> (isHTML: Bool, markup: Bool)? {
        let type = (tag.attribute("type") ?? "text").trimmed.lowercased()
        if type == "xhtml" { return (true, true) }
        if type.contains("html") { return (true, false) }
        if type == "text" || type.hasPrefix("text/") { return (false, false) }
        return nil
    }

    private func feedLink(_ tag: StartTag) -> FeedLink? {
        guard let href = tag.attribute("href")?.trimmedOrNil else { return nil }
        return FeedLink(
            rel: tag.attribute("rel")?.trimmedOrNil ?? "alternate",
            href: URLResolver.resolve(href, against: base),
            type: tag.attribute("type")?.trimmedOrNil,
            title: tag.attribute("title")?.trimmedOrNil
        )
    }

    private mutating func entryLink(_ tag: StartTag) {
        guard let link = feedLink(tag) else { return }
        switch link.rel.lowercased() {
        case "enclosure":
            item?.episode.enclosures.append(
                Enclosure(
                    url: URLResolver.normalized(link.href),
                    type: link.type,
                    length: tag.attribute("length").flatMap(FeedBuilder.positiveInt)
                )
            )
        case "payment":
            if item?.episode.paymentURL == nil { item?.episode.paymentURL = link.href }
        case "alternate":
            if item?.atomLink == nil && (link.type == nil || link.type!.lowercased().contains("html")) {
                item?.atomLink = link.href
            }
        default:
            break
        }
    }

    private func enclosure(_ tag: StartTag, urlKey: StaticString, lengthKey: StaticString) -> Enclosure? {
        guard let url = tag.attribute(urlKey)?.trimmedOrNil else { return nil }
        return Enclosure(
            url: URLResolver.normalized(URLResolver.resolve(url, against: base)),
            type: tag.attribute("type")?.trimmedOrNil,
            length: tag.attribute(lengthKey).flatMap(FeedBuilder.positiveInt)
        )
    }

    private mutating func integrity(_ tag: StartTag) {
        guard item?.episode.integrity == nil,
            let type = tag.attribute("type")?.trimmedOrNil,
            let value = tag.attribute("value")?.trimmedOrNil
        else { return }
        item?.episode.integrity = Integrity(type: type, value: value)
    }

    private func personAttributes(_ tag: StartTag) -> Person {
        Person(
            name: "",
            role: tag.attribute("role")?.trimmedOrNil?.lowercased() ?? "host",
            group: tag.attribute("group")?.trimmedOrNil?.lowercased() ?? "cast",
            href: tag.attribute("href")?.trimmedOrNil,
            img: tag.attribute("img")?.trimmedOrNil
        )
    }

    /// Whether a MIME type starts with `audio/` or `video/`, in any case.
    static func isAudioOrVideo(_ type: String) -> Bool {
        var prefix: UInt64 = 0
        var count = 0
        for byte in type.utf8.prefix(7) {
            // Past ASCII, what is a character (a "/" with a combining mark is not "/") and what lowercases to
            // what are Unicode's questions: the general comparison answers them.
            guard byte < 0x80 else {
                let lowercased = type.lowercased()
                return lowercased.hasPrefix("audio/") || lowercased.hasPrefix("video/")
            }
            if count < 6 { prefix = prefix << 8 | UInt64(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) }
            count += 1
        }
        return count >= 6 && (prefix == 0x61_7564_696F_2F || prefix == 0x76_6964_656F_2F)  // "audio/", "video/"
    }

    static func isAbsoluteHTTP(_ text: String) -> Bool {
        let scheme = text.prefix(8).lowercased()
        return scheme.hasPrefix("http://") || scheme.hasPrefix("https://")
    }

    static func positiveInt(_ text: String) -> Int? {
        guard let value = Int(text.trimmed), value > 0 else { return nil }
        return value
    }

    static func flag(_ text: String) -> Bool? {
        switch text.trimmed.lowercased() {
        case "yes", "explicit", "true": true
        case "no", "clean", "false": false
        default: nil
        }
    }

    // MARK: - Values

    private mutating func store(_ field: Field, _ value: String) {
        switch field {
        case .feedTitle(let isHTML): feed.title = isHTML ? PlainText.fromHTML(value) : value
        case .feedLink: rssLink = value.trimmedOrNil
        case .feedDescription: channelDescription = value
        case .feedSummary: itunesSummary = value
        case .feedSubtitle: feed.subtitle = value.trimmedOrNil
        case .atomSubtitle(let isHTML): atomSubtitle = isHTML ? PlainText.fromHTML(value) : value
        case .feedAuthor: itunesAuthor = value.trimmedOrNil
        case .atomAuthorName: atomAuthor = value.trimmedOrNil
        case .language: feed.language = value.trimmedOrNil
        case .newFeedURL: itunesNewFeedURL = value.trimmedOrNil
        case .newLocation: newLocation = value.trimmedOrNil
        case .podcastGUID: feed.podcastGUID = value.trimmedOrNil
        case .complete: feed.isComplete = value.trimmed.lowercased() == "yes"
        case .feedExplicit: feed.explicit = FeedBuilder.flag(value)
        case .locked: feed.locked = FeedBuilder.flag(value)
        case .showType:
            let type = value.trimmed.lowercased()
            if type == "episodic" || type == "serial" { feed.showType = type }
        case .generator: feed.generator = value.trimmedOrNil
        case .keywords:
            feed.keywords = value.split(separator: ",").compactMap { String($0).trimmedOrNil }
        case .imageURL: imageURL = value.trimmedOrNil
        case .ownerName: owner?.name = value.trimmedOrNil
        case .ownerEmail: owner?.email = value.trimmedOrNil
        case .atomIcon: atomIcon = value.trimmedOrNil
        case .atomLogo: atomLogo = value.trimmedOrNil
        case .funding: feed.funding.append(Funding(url: fundingURL, text: value.trimmed))
        case .feedPerson:
            var person = self.person
            person.name = value.trimmed
            feed.persons.append(person)
        default: storeItem(field, value)
        }
    }

    private mutating func storeItem(_ field: Field, _ value: String) {
        // Mutate the draft in place: a copy would make every array in it copy on write.
        guard item != nil else { return }
        if case .person = field {
            var person = self.person
            person.name = value.trimmed
            item!.episode.persons.append(person)
            return
        }
        FeedBuilder.store(field, value, into: &item!)
    }

    private static func store(_ field: Field, _ value: String, into draft: inout ItemDraft) {
        switch field {
        case .title(let isHTML): draft.title = isHTML ? PlainText.fromHTML(value) : value
        case .link: draft.rssLink = value.trimmedOrNil
        case .guid, .atomID:
            draft.guid = value.trimmedOrNil
            if case .atomID = field { draft.episode.guidIsPermaLink = false }
        case .description:
            if PlainText.looksLikeHTML(value) {
                draft.rssHTML = value.trimmedOrNil
            } else if draft.text.isEmpty {
                draft.text = value
            }
        case .contentEncoded: draft.contentEncoded = value.trimmedOrNil
        case .summary, .atomContent(isHTML: false):
            if value.trimmedOrNil != nil { draft.text = value }
        case .atomContent(isHTML: true): draft.atomHTML = value.trimmedOrNil == nil ? nil : value
        case .atomSummary(let isHTML):
            if draft.atomSummary == nil && value.trimmedOrNil != nil {
                draft.atomSummary = value
                draft.atomSummaryIsHTML = isHTML
            }
        case .subtitle: draft.episode.subtitle = value.trimmedOrNil
        case .author: draft.itunesAuthor = value.trimmedOrNil
        case .itemAtomAuthorName: draft.atomAuthor = value.trimmedOrNil
        case .pubDate: draft.pubDate = value
        case .dcDate: draft.dcDate = value
        case .atomPublished: draft.atomPublished = value
        case .atomUpdated: draft.atomUpdated = value
        case .duration: draft.episode.durationSeconds = FeedDuration.seconds(value)
        case .season: draft.itunesSeason = Int(value.trimmed)
        case .episode: draft.itunesEpisode = FeedBuilder.positiveInt(value)
        case .podcastSeason: draft.podcastSeason = Int(value.trimmed)
        case .podcastEpisode: draft.podcastEpisode = FeedBuilder.positiveInt(value)
        case .episodeType:
            let type = value.trimmed.lowercased()
            if type == "full" || type == "trailer" || type == "bonus" { draft.episode.episodeType = type }
        case .explicit: draft.episode.explicit = FeedBuilder.flag(value)
        default: break
        }
    }

    // MARK: - Results

    /// Keeps the first item of each identity and hands it on; a repeat is only counted.
    private mutating func keep(_ episode: consuming Episode) {
        if !sized && identities.count == FeedBuilder.sizingSample { reserveForRemainingItems() }
        let identity = episode.identity
        guard identities.insert(identity).inserted else {
            feed.duplicateItems += 1
            if feed.duplicateIdentities.count < Feed.duplicateIdentityLimit
                && !feed.duplicateIdentities.contains(identity)
            {
                feed.duplicateIdentities.append(identity)
            }
            return
        }
        guard let consumer else {
            feed.episodes.append(episode)
            return
        }
        batch.append(episode)
        if batch.count >= batchSize {
            consumer(batch)
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Items seen before the episode list and the identity set are sized for the whole document.
    private static let sizingSample = 64

    /// Sizes the episode list and the identity set for the items the document likely holds, judged by how
    /// far into it the first ``sizingSample`` items reach: growing them by doubling would copy (and rehash)
    /// every episode again each time and leave up to half of the last buffer unused.
    private mutating func reserveForRemainingItems() {
        sized = true
        guard itemOffset > 0 else { return }
        let (scaled, overflow) = identities.count.multipliedReportingOverflow(by: documentSize)
        guard !overflow else { return }
        // Capped at one item per KiB: a document that starts with 64 tiny items and goes on with 200 MB of
        // something else must not reserve gigabytes. Smaller items only grow the list past this by doubling.
        let estimate = min(scaled / itemOffset, documentSize / 1024)
        let capacity = estimate + estimate / 32 + 16
        identities.reserveCapacity(capacity)
        if consumer == nil { feed.episodes.reserveCapacity(capacity) }
    }

    private static func finish(_ draft: inout ItemDraft, scratch: inout [UInt8]) -> Episode {
        // Swapped out, not copied: a copy would retain every string and array of the episode, and destroying the
        // draft would release them again.
        var episode = Episode()
        swap(&episode, &draft.episode)
        episode.title = PlainText.collapsingWhitespace(draft.title ?? "")
        episode.guid = draft.guid
        episode.link = draft.rssLink.map { URLResolver.resolve($0, against: draft.base) } ?? draft.atomLink
        // A guid identifies; only a permalink that is already an absolute web URL may also serve as the link.
        // Resolving "h-4" against the feed's URL would invent a page that does not exist.
        if episode.link == nil, episode.guidIsPermaLink, let guid = draft.guid, FeedBuilder.isAbsoluteHTTP(guid) {
            episode.link = guid
        }
        episode.published =
            draft.pubDate.flatMap(FeedDate.parse) ?? draft.dcDate.flatMap(FeedDate.parse)
            ?? draft.atomPublished.flatMap(FeedDate.parse) ?? draft.atomUpdated.flatMap(FeedDate.parse)

        var html = draft.contentEncoded ?? draft.rssHTML ?? draft.atomHTML
        var text = PlainText.normalizingSpaces(draft.text)
        if text.isEmpty && html == nil, let summary = draft.atomSummary {
            // An entry without content describes itself in its summary (feedparser reads it the same way).
            if draft.atomSummaryIsHTML { html = summary } else { text = PlainText.normalizingSpaces(summary) }
        }
        if PlainText.looksLikeHTML(text) {
            if html == nil { html = text }
            text = ""
        }
        if text.isEmpty, let html { text = PlainText.fromHTML(html, scratch: &scratch) }
        episode.description = text
        episode.descriptionHTML = html

        episode.enclosure =
            episode.enclosures.first(where: { enclosure in
                guard let type = enclosure.type else { return false }
                return FeedBuilder.isAudioOrVideo(type)
            }) ?? episode.enclosures.first
        episode.season = draft.itunesSeason ?? draft.podcastSeason
        episode.episodeNumber = draft.itunesEpisode ?? draft.podcastEpisode
        episode.artworkURL = draft.itunesImage ?? draft.thumbnail
        episode.author = draft.itunesAuthor ?? draft.atomAuthor
        return episode
    }

    /// The feed, once the whole document has been read; hands the last batch to the consumer first.
    mutating func finish() throws(FeedError) -> Feed {
        if let consumer, !batch.isEmpty {
            consumer(batch)
            batch = []
        }
        var feed = self.feed
        feed.title = PlainText.collapsingWhitespace(feed.title)
        feed.link =
            rssLink.map { URLResolver.resolve($0, against: feed.baseURL) }
            ?? feed.links.first(where: { link in
                link.rel == "alternate" && (link.type == nil || link.type!.lowercased().contains("html"))
            })?.href
        let description = channelDescription?.trimmedOrNil ?? itunesSummary?.trimmedOrNil ?? atomSubtitle ?? ""
        feed.description =
            PlainText.looksLikeHTML(description)
            ? PlainText.fromHTML(description) : PlainText.normalizingSpaces(description)
        feed.author = itunesAuthor ?? atomAuthor
        feed.artworkURL = (itunesImage ?? imageURL ?? atomLogo ?? atomIcon).map {
            URLResolver.resolve($0, against: feed.baseURL)
        }
        feed.newFeedURL = itunesNewFeedURL ?? newLocation
        feed.owner = owner
        return feed
    }
}
