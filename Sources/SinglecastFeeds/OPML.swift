import FoundationEssentials

/// One subscription of an OPML list.
package struct OPMLOutline: Sendable, Hashable, Codable {
    /// `title`, else `text`; `nil` when both are missing or empty.
    package var title: String?
    /// `xmlUrl`: the feed.
    package var feedURL: String
    /// `htmlUrl`: the podcast's website.
    package var htmlURL: String?

    package init(title: String?, feedURL: String, htmlURL: String? = nil) {
        self.title = title
        self.feedURL = feedURL
        self.htmlURL = htmlURL
    }
}

/// OPML subscription lists, the format podcast apps import and export.
package enum OPML {
    /// The subscriptions of an OPML document.
    ///
    /// Every `outline` with an `xmlUrl` counts, however deeply it is nested in folders (the attribute name
    /// is matched case-insensitively: exporters write `xmlURL` too); the list comes out flat, in document
    /// order. The same byte-level reader as feeds is used, so entity declarations are refused just the same.
    ///
    /// - Throws: ``FeedError`` with ``FeedError/Code/notOPML`` when the root is not `<opml>`, or the
    ///   reader's errors (`notXML`, `entityRefused`, …).
    package static func parse(_ data: Data) throws(FeedError) -> [OPMLOutline] {
        let limits = FeedParser.Limits.default
        guard data.count <= limits.maxBytes else { throw .tooLarge(data.count, limit: limits.maxBytes) }
        return try DocumentBytes.withUTF8(data) { (bytes) throws(FeedError) -> [OPMLOutline] in
            var handler = OPMLHandler()
            var reader = XMLReader(bytes, maxDepth: limits.maxDepth)
            try reader.run(&handler)
            return handler.outlines
        }
    }

    /// An OPML 2.0 document listing `outlines`, each as `<outline type="rss" …/>`.
    ///
    /// Text and attribute values are escaped by ``XMLEscape``. `parse(document(…))` gives the outlines back.
    package static func document(title: String, outlines: [OPMLOutline], created: Date) -> Data {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0">
              <head>
                <title>\(XMLEscape.text(title))</title>
                <dateCreated>\(FeedDate.rfc822String(created))</dateCreated>
              </head>
              <body>

            """
        for outline in outlines {
            let text = XMLEscape.attribute(outline.title ?? "")
            out += "    <outline type=\"rss\" text=\"\(text)\""
            if outline.title != nil { out += " title=\"\(text)\"" }
            out += " xmlUrl=\"\(XMLEscape.attribute(outline.feedURL))\""
            if let html = outline.htmlURL { out += " htmlUrl=\"\(XMLEscape.attribute(html))\"" }
            out += "/>\n"
        }
        out += "  </body>\n</opml>\n"
        return Data(out.utf8)
    }

}

/// Collects `outline` elements with an `xmlUrl`.
private struct OPMLHandler: XMLHandler {
    var outlines: [OPMLOutline] = []

    mutating func startElement(_ tag: StartTag) throws(FeedError) {
        if tag.depth == 1 {
            guard tag.localName.lowercased() == "opml" else {
                let kind =
                    ["rss", "feed", "RDF"].contains(tag.localName)
                    ? "a feed; subscribe to it directly instead of importing it" : "not an OPML subscription list"
                throw FeedError(
                    code: .notOPML,
                    message: "The document's root element is <\(tag.localName)>, not <opml>: this is \(kind)."
                )
            }
            return
        }
        guard tag.name == "outline", let feedURL = tag.attributeIgnoringCase("xmlUrl")?.trimmedOrNil else {
            return
        }
        let title = tag.attribute("title").flatMap { $0.isEmpty ? nil : $0 } ?? tag.attribute("text")
        outlines.append(
            OPMLOutline(
                title: title.flatMap { $0.isEmpty ? nil : $0 },
                feedURL: feedURL,
                htmlURL: tag.attributeIgnoringCase("htmlUrl")?.trimmedOrNil
            )
        )
    }

    mutating func endElement(raw: UnsafeBufferPointer<UInt8>) throws(FeedError) {}
    mutating func text(_ raw: UnsafeBufferPointer<UInt8>) {}
    mutating func cdata(_ content: UnsafeBufferPointer<UInt8>) {}
}
