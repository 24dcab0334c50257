/// Our ``Feed`` in the dictionary shape of podcastparser (gPodder's Python feed parser).
///
/// This exists so the conformance corpus (podcastparser's own test feeds and expected results) can
/// check our parser against a mature one; nothing else uses it. podcastparser's policies live here,
/// not in ``Feed``: titles taken from the URL or the enclosure's file name, permalink guids resolved as
/// URLs, episodes without a usable guid dropped, newest-first sorting and `max_episodes`.
package enum PodcastparserMapping {
    /// The dictionary podcastparser's `parse(url, stream, max_episodes)` returns for the same feed.
    ///
    /// - Parameters:
    ///   - feed: the result of ``FeedParser/parse(_:url:)`` with the same `url`.
    ///   - url: the URL the feed was parsed with (podcastparser's title fallback uses it).
    ///   - maxEpisodes: keep the first N episodes after sorting; 0 keeps all.
    package static func document(_ feed: Feed, url: String, maxEpisodes: Int = 0) -> JSONValue {
        var podcast: [String: JSONValue] = [:]
        podcast["title"] = .string(feed.title.isEmpty ? titleFromURL(url) : feed.title)
        let htmlLink = feed.links.first { link in
            (link.rel == "self" || link.rel == "alternate") && link.type?.lowercased() == "text/html"
        }
        if let link = (feed.format == .rss ? feed.link : nil) ?? htmlLink?.href { podcast["link"] = .string(link) }
        if !feed.description.isEmpty { podcast["description"] = .string(feed.description) }
        if let cover = feed.artworkURL { podcast["cover_url"] = .string(cover) }
        if let type = feed.showType { podcast["type"] = .string(type) }
        if let newURL = feed.newFeedURL { podcast["new_url"] = .string(newURL) }
        for (rel, key) in [("payment", "payment_url"), ("first", "paged_feed_first"), ("next", "paged_feed_next")] {
            if let link = feed.links.first(where: { $0.rel == rel }) { podcast[key] = .string(link.href) }
        }
        if let funding = feed.funding.first { podcast["funding_url"] = .string(funding.url) }
        if let locked = feed.locked { podcast["import_prohibited"] = .bool(locked) }
        if let explicit = feed.explicit { podcast["explicit"] = .bool(explicit) }
        if feed.format == .rss, let author = feed.author { podcast["itunes_author"] = .string(author) }
        if let owner = feed.owner {
            var value: [String: JSONValue] = [:]
            if let name = owner.name { value["name"] = .string(name) }
            if let email = owner.email { value["email"] = .string(email) }
            podcast["itunes_owner"] = .object(value)
        }
        if !feed.categories.isEmpty {
            podcast["itunes_categories"] = .array(feed.categories.map { .array($0.map { .string($0) }) })
        }
        if !feed.keywords.isEmpty { podcast["itunes_keywords"] = .array(feed.keywords.map { .string($0) }) }
        if let generator = feed.generator { podcast["generator"] = .string(generator) }
        if let language = feed.language { podcast["language"] = .string(language) }

        var episodes = feed.episodes.compactMap { episode(from: $0, in: feed) }
        // A stable sort: equal dates (all the missing ones) keep document order.
        let serial = feed.showType == "serial"
        episodes = episodes.enumerated().sorted { a, b in
            if a.element.published != b.element.published {
                return serial ? a.element.published < b.element.published : a.element.published > b.element.published
            }
            return a.offset < b.offset
        }.map(\.element)
        if maxEpisodes > 0 && episodes.count > maxEpisodes { episodes = Array(episodes.prefix(maxEpisodes)) }
        podcast["episodes"] = .array(episodes.map { .object($0.fields) })
        return .object(podcast)
    }

    private struct Mapped {
        var published: Int
        var fields: [String: JSONValue]
    }

    private static func episode(from episode: Episode, in feed: Feed) -> Mapped? {
        var title = episode.title
        if title.isEmpty {
            guard episode.enclosures.count == 1 else { return nil }
            title = fileStem(episode.enclosures[0].url)
        }
        let permalink = episode.guid.flatMap { guid in
            episode.guidIsPermaLink ? URLResolver.resolve(guid, against: feed.baseURL) : nil
        }
        let guid: String
        if let value = permalink ?? episode.guid {
            guid = value
        } else if let link = episode.link {
            guid = link
        } else if let first = episode.enclosures.first, episode.enclosures.allSatisfy({ $0.url == first.url }) {
            guid = first.url
        } else {
            return nil
        }
        let published = episode.published.map { Int($0.timeIntervalSince1970) } ?? 0
        var fields: [String: JSONValue] = [
            "title": .string(title),
            "guid": .string(guid),
            "link": .string(episode.link ?? permalink ?? ""),
            "description": .string(episode.description),
            "published": .int(published),
            "total_time": .int(episode.durationSeconds ?? 0),
            "payment_url": episode.paymentURL.map { .string($0) } ?? .null,
            "enclosures": .array(
                episode.enclosures.map { enclosure in
                    let type = enclosure.type.flatMap { $0.contains("/") ? $0 : nil } ?? "application/octet-stream"
                    return .object([
                        "url": .string(enclosure.url),
                        "file_size": .int(enclosure.length ?? -1),
                        "mime_type": .string(type),
                    ])
                }
            ),
        ]
        if let html = episode.descriptionHTML { fields["description_html"] = .string(html) }
        if let subtitle = episode.subtitle { fields["subtitle"] = .string(subtitle) }
        if !episode.chapters.isEmpty {
            fields["chapters"] = .array(
                episode.chapters.map { chapter in
                    var value: [String: JSONValue] = [
                        "start": .int(Int(chapter.start)), "title": .string(chapter.title),
                    ]
                    if let href = chapter.href { value["href"] = .string(href) }
                    if let image = chapter.image { value["image"] = .string(image) }
                    return .object(value)
                }
            )
        }
        if let art = episode.artworkURL { fields["episode_art_url"] = .string(art) }
        if feed.format == .rss, let author = episode.author { fields["itunes_author"] = .string(author) }
        if let explicit = episode.explicit { fields["explicit"] = .bool(explicit) }
        if let season = episode.season { fields["season"] = .int(season) }
        if let number = episode.episodeNumber { fields["number"] = .int(number) }
        if let type = episode.episodeType { fields["type"] = .string(type) }
        if let transcript = episode.transcripts.first { fields["transcript_url"] = .string(transcript.url) }
        if let chapters = episode.chaptersURL { fields["chapters_json_url"] = .string(chapters) }
        if !episode.persons.isEmpty {
            fields["persons"] = .array(
                episode.persons.map { person in
                    .object([
                        "name": .string(person.name),
                        "role": .string(person.role),
                        "group": .string(person.group),
                        "href": person.href.map { .string($0) } ?? .null,
                        "img": person.img.map { .string($0) } ?? .null,
                    ])
                }
            )
        }
        return Mapped(published: published, fields: fields)
    }

    /// The last path segment of the URL without its extension (`file://tests/data/empty.rss` → `empty`).
    static func titleFromURL(_ url: String) -> String {
        fileStem(url)
    }

    private static func fileStem(_ url: String) -> String {
        var path = Substring(url)
        if let mark = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<mark] }
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return String(name) }
        return String(name[..<dot])
    }
}
