import FoundationEssentials
import SinglecastFeeds
import SinglecastSupport

/// Where an episode's file goes: the configured template (`name_template`, default
/// `{podcast}/{date} {title}.{ext}`) filled in and every path component sanitized.
///
/// Pure, so the rules are unit-tested: `/` in the template separates folders below the download directory;
/// a `/` or `..` coming from a feed never does, because placeholders are sanitized one by one.
package struct EpisodeNaming: Sendable, Hashable {
    package static let defaultTemplate = "{podcast}/{date} {title}.{ext}"
    package static let placeholders = ["podcast", "title", "date", "ext", "season", "episode", "guid", "id"]

    package let template: String
    /// Names that FAT and exFAT accept too (``FileNaming/portable(_:)``), for files copied to players and SD cards.
    package let portable: Bool
    /// The template's path components, parsed once: an enqueue of 10,000 episodes names each of them.
    private let components: [[Segment]]

    private enum Segment: Sendable, Hashable {
        case text(String)
        case placeholder(String)
    }

    package init(template: String = EpisodeNaming.defaultTemplate, portable: Bool = false) {
        self.template = template
        self.portable = portable
        components = template.split(separator: "/", omittingEmptySubsequences: true).map(Self.segments)
    }

    private static func segments(_ part: Substring) -> [Segment] {
        var segments: [Segment] = []
        var rest = part
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            if open > rest.startIndex { segments.append(.text(String(rest[..<open]))) }
            segments.append(.placeholder(String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { segments.append(.text(String(rest))) }
        return segments
    }

    /// The facts a template may use.
    package struct Episode: Sendable {
        package var podcastTitle: String
        package var title: String
        package var published: Date?
        package var enclosureURL: URL
        package var enclosureType: String?
        package var season: Int?
        package var episode: Int?
        package var guid: String?
        package var id: Int64

        package init(
            podcastTitle: String,
            title: String,
            published: Date?,
            enclosureURL: URL,
            enclosureType: String?,
            season: Int?,
            episode: Int?,
            guid: String?,
            id: Int64
        ) {
            self.podcastTitle = podcastTitle
            self.title = title
            self.published = published
            self.enclosureURL = enclosureURL
            self.enclosureType = enclosureType
            self.season = season
            self.episode = episode
            self.guid = guid
            self.id = id
        }
    }

    /// Checks a template: at least a file name, known placeholders only, no absolute path.
    ///
    /// - Returns: `nil` when valid, else what is wrong.
    package static func problem(in template: String) -> String? {
        if template.hasPrefix("/") { return "it must be relative to the download directory" }
        if template.hasSuffix("/")
            || template.split(separator: "/").last.map({ $0.trimmingWhitespace().isEmpty }) ?? true
        {
            return "it must end with a file name"
        }
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { return "a '{' is not closed" }
            let name = String(rest[rest.index(after: open)..<close])
            if !placeholders.contains(name) {
                return "unknown placeholder {\(name)}; known: "
                    + placeholders.map { "{\($0)}" }.joined(separator: ", ")
            }
            rest = rest[rest.index(after: close)...]
        }
        return nil
    }

    /// The folders below the download directory and the file name for `episode`.
    package func place(_ episode: Episode) -> (folders: [String], fileName: String) {
        var folders = components.map { segments in
            var text = ""
            for segment in segments {
                switch segment {
                case .text(let literal): text += literal
                case .placeholder(let name):
                    // A feed's value never adds a folder: sanitize(_:) below turns its `/` into `_`.
                    text += Self.value(of: name, for: episode)
                }
            }
            let name = FileNaming.sanitize(text, fallback: "episode \(episode.id)")
            return portable ? FileNaming.portable(name) : name
        }
        let fileName = folders.popLast() ?? "episode \(episode.id)"
        return (folders, fileName)
    }

    private static func value(of placeholder: String, for episode: Episode) -> String {
        switch placeholder {
        case "podcast": episode.podcastTitle
        case "title": episode.title
        case "date": episode.published.map(day) ?? "undated"
        case "ext": fileExtension(url: episode.enclosureURL, type: episode.enclosureType)
        case "season": episode.season.map(String.init) ?? ""
        case "episode": episode.episode.map(String.init) ?? ""
        case "guid": episode.guid ?? ""
        case "id": String(episode.id)
        default: ""
        }
    }

    /// `2024-03-07`, the UTC day of `date`, by arithmetic: a calendar per episode was a tenth of an enqueue of
    /// 10,000 episodes, and even a shared one cost microseconds each.
    package static func day(_ date: Date) -> String {
        let (year, month, day) = FeedDate.civil(fromDays: Int((date.timeIntervalSince1970 / 86_400).rounded(.down)))
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2)
    }

    /// The enclosure's extension (without the query string), else one for its MIME type, else `mp3`.
    package static func fileExtension(url: URL, type: String?) -> String {
        let fromPath = url.pathExtension.lowercased()
        if !fromPath.isEmpty, fromPath.count <= 5, fromPath.allSatisfy({ $0.isLetter || $0.isNumber }) {
            return fromPath
        }
        switch type?.lowercased().split(separator: ";").first?.trimmingWhitespace() {
        case "audio/mpeg", "audio/mp3": return "mp3"
        case "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/aac": return "m4a"
        case "video/mp4": return "mp4"
        case "audio/ogg", "application/ogg": return "ogg"
        case "audio/opus": return "opus"
        case "audio/flac", "audio/x-flac": return "flac"
        case "audio/wav", "audio/x-wav": return "wav"
        case "video/quicktime": return "mov"
        case "application/pdf": return "pdf"
        default: return "mp3"
        }
    }
}
