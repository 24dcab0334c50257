import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// Turns the directory's JSON into protocol values. Pure.
///
/// Apple serves UTF-8 JSON with a `text/javascript` content type, so the content type is not checked; the body
/// must parse as JSON of the expected shape. Single malformed entries are skipped rather than failing the whole
/// answer.
package enum DirectoryResponse {
    /// The podcasts of a Search API (`/search` or `/lookup`) answer, in the directory's order.
    ///
    /// - Throws: ``DirectoryError`` (`directory_bad_response`) when the body is not JSON or has no `results` array.
    package static func podcasts(
        _ data: Data,
        contentType: String? = nil,
        url: String
    ) throws(DirectoryError) -> [DirectoryPodcast] {
        let response = try decode(
            SearchAnswer.self,
            data,
            contentType: contentType,
            url: url,
            expected: "a Search API answer with a 'results' array"
        )
        return response.results.compactMap { $0.value?.podcast }
    }

    /// The entries of a top-podcasts chart, in either of Apple's shapes: the current feed
    /// (`feed.results[]`, ids as strings) or the legacy iTunes RSS JSON (`feed.entry[]`, values under `label`, the
    /// id in `id.attributes["im:id"]`).
    ///
    /// - Throws: ``DirectoryError`` (`directory_bad_response`) when the body is not JSON or has no `feed` object.
    package static func chart(
        _ data: Data,
        contentType: String? = nil,
        url: String
    ) throws(DirectoryError) -> [ChartEntry] {
        let document = try decode(
            ChartDocument.self,
            data,
            contentType: contentType,
            url: url,
            expected: "a chart feed with a 'feed' object"
        )
        let entries: [ChartEntry?]
        if let results = document.feed.results {
            entries = results.enumerated().map { $1.value?.entry(rank: $0 + 1) }
        } else {
            entries = (document.feed.entry?.items ?? []).enumerated().map { $1.value?.entry(rank: $0 + 1) }
        }
        return entries.compactMap { $0 }
    }

    private static func decode<T: Decodable>(
        _ type: T.Type,
        _ data: Data,
        contentType: String?,
        url: String,
        expected: String
    ) throws(DirectoryError) -> T {
        guard (try? JSONDecoder().decode(JSONValue.self, from: data)) != nil else {
            let start = String(decoding: data.prefix(40), as: UTF8.self)
                .map { $0.isNewline || $0.unicodeScalars.allSatisfy { $0.value < 0x20 } ? " " : String($0) }.joined()
            let type = contentType.map { "\($0), " } ?? ""
            let what = type + (data.isEmpty ? "an empty body" : "starting \"\(start)\"")
            throw .badResponse("it is not valid JSON (\(what))", url: url)
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw .badResponse("the JSON is not \(expected) (\(describe(error)))", url: url)
        }
    }

    private static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let parts = (codingPath + (key.map { [$0] } ?? [])).map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return parts.isEmpty ? "the top level" : "'" + parts.joined(separator: ".") + "'"
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context): return "\(path(context.codingPath, key)) is missing"
        case DecodingError.typeMismatch(_, let context): return "\(path(context.codingPath)) has the wrong type"
        case DecodingError.valueNotFound(_, let context): return "\(path(context.codingPath)) is null"
        case DecodingError.dataCorrupted(let context): return "\(path(context.codingPath)) is unreadable"
        default: return "\(error)"
        }
    }
}

// MARK: Search API

private struct SearchAnswer: Decodable {
    var results: [Lossy<ITunesPodcast>]
}

/// The fields of a Search API result that singlecast uses.
private struct ITunesPodcast: Decodable {
    var collectionId: Int64?
    var trackId: Int64?
    var collectionName: String?
    var trackName: String?
    var artistName: String?
    var feedUrl: String?
    var artworkUrl600: String?
    var artworkUrl100: String?
    var trackCount: Int?
    var primaryGenreName: String?
    var releaseDate: String?
    var collectionViewUrl: String?

    /// `nil` for a result without an id or a title.
    var podcast: DirectoryPodcast? {
        guard let id = collectionId ?? trackId, let title = nonEmpty(collectionName) ?? nonEmpty(trackName) else {
            return nil
        }
        return DirectoryPodcast(
            id: id,
            title: title,
            author: nonEmpty(artistName),
            feedURL: nonEmpty(feedUrl),
            artworkURL: nonEmpty(artworkUrl600) ?? nonEmpty(artworkUrl100),
            episodeCount: trackCount,
            genre: nonEmpty(primaryGenreName),
            releaseDate: nonEmpty(releaseDate),
            storeURL: nonEmpty(collectionViewUrl)
        )
    }
}

// MARK: Charts

private struct ChartDocument: Decodable {
    var feed: Feed

    struct Feed: Decodable {
        /// The current feed.
        var results: [Lossy<CurrentEntry>]?
        /// The legacy feed; a single entry may come as an object rather than an array.
        var entry: OneOrMany<Lossy<LegacyEntry>>?
    }
}

/// An entry of `https://rss.marketingtools.apple.com/api/v2/<cc>/podcasts/top/<n>/podcasts.json`.
private struct CurrentEntry: Decodable {
    struct Genre: Decodable { var name: String? }

    var id: String
    var name: String
    var artistName: String?
    var artworkUrl100: String?
    var genres: [Lossy<Genre>]?
    var url: String?

    func entry(rank: Int) -> ChartEntry? {
        guard let id = Int64(id) else { return nil }
        return ChartEntry(
            rank: rank,
            id: id,
            title: name,
            author: nonEmpty(artistName),
            genre: genres?.lazy.compactMap { nonEmpty($0.value?.name) }.first,
            artworkURL: nonEmpty(artworkUrl100),
            storeURL: nonEmpty(url)
        )
    }
}

/// An entry of the legacy `https://itunes.apple.com/<cc>/rss/toppodcasts/limit=<n>/json`.
private struct LegacyEntry: Decodable {
    struct Label: Decodable { var label: String? }
    struct Identifier: Decodable {
        struct Attributes: Decodable {
            var id: String?
            enum CodingKeys: String, CodingKey { case id = "im:id" }
        }
        var attributes: Attributes?
    }
    struct Category: Decodable {
        struct Attributes: Decodable { var label: String? }
        var attributes: Attributes?
    }
    struct Link: Decodable {
        struct Attributes: Decodable { var href: String? }
        var attributes: Attributes?
    }

    var name: Label
    var artist: Label?
    var images: [Lossy<Label>]?
    var id: Identifier
    var category: Category?
    var link: OneOrMany<Lossy<Link>>?

    enum CodingKeys: String, CodingKey {
        case name = "im:name"
        case artist = "im:artist"
        case images = "im:image"
        case id
        case category
        case link
    }

    func entry(rank: Int) -> ChartEntry? {
        guard let id = id.attributes?.id.flatMap({ Int64($0) }), let title = nonEmpty(name.label) else { return nil }
        return ChartEntry(
            rank: rank,
            id: id,
            title: title,
            author: nonEmpty(artist?.label),
            genre: nonEmpty(category?.attributes?.label),
            // The images come smallest first.
            artworkURL: images?.compactMap({ nonEmpty($0.value?.label) }).last,
            storeURL: link?.items.lazy.compactMap { nonEmpty($0.value?.attributes?.href) }.first
        )
    }
}

// MARK: Helpers

/// A value that decodes as `nil` instead of failing, so one odd entry does not spoil a list.
private struct Lossy<Wrapped: Decodable>: Decodable {
    var value: Wrapped?

    init(from decoder: any Decoder) throws {
        value = try? Wrapped(from: decoder)
    }
}

/// An array, or a single value standing for an array of one.
private struct OneOrMany<Element: Decodable>: Decodable {
    var items: [Element]

    init(from decoder: any Decoder) throws {
        if let items = try? [Element](from: decoder) {
            self.items = items
        } else {
            items = [try Element(from: decoder)]
        }
    }
}

private func nonEmpty(_ text: String?) -> String? {
    guard let text, !text.trimmingWhitespace().isEmpty else { return nil }
    return text
}
