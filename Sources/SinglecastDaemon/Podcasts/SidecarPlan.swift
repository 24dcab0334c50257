import SinglecastFeeds
import SinglecastStore
import SinglecastSupport

/// Which of an episode's chapters and transcripts are saved beside its file, under which names, and when a failed
/// fetch is tried again. Pure: the feed's links in, offers and names out.
enum SidecarPlan {
    /// The largest chapters or transcript file saved; a bigger one is refused for good (the episode is unaffected).
    static let maxBytes: Int64 = 5 << 20
    /// Fetches of one file before it is given up on.
    static let maxAttempts = 5

    /// The episode's `podcast:chapters` (JSON only) and `podcast:transcript` links (SRT, VTT, JSON, HTML) it can
    /// save, one per kind, format and language, the first of each in document order. Other types (`text/plain`
    /// among them) have no file name of their own here and are left out.
    static func offers(of episode: Episode) -> [SidecarOffer] {
        var offers: [SidecarOffer] = []
        var seen: Set<String> = []
        func add(_ offer: SidecarOffer) {
            guard HTTPURL.isValid(offer.url) else { return }
            let key = "\(offer.kind.rawValue) \(offer.format) \(offer.language ?? "")"
            if seen.insert(key).inserted { offers.append(offer) }
        }
        if let url = episode.chaptersURL {
            let type = mediaType(episode.chaptersType ?? "")
            // The namespace says application/json+chapters; a missing type is taken to mean it.
            if type.isEmpty || type.hasSuffix("json") || type.hasSuffix("+chapters") {
                add(
                    SidecarOffer(
                        kind: .chapters,
                        format: "json",
                        language: nil,
                        mimeType: "application/json+chapters",
                        url: url
                    )
                )
            }
        }
        for transcript in episode.transcripts {
            guard let format = transcriptFormat(type: transcript.type, url: transcript.url) else { continue }
            add(
                SidecarOffer(
                    kind: .transcript,
                    format: format,
                    language: language(transcript.language),
                    mimeType: mimeType(ofFormat: format),
                    url: transcript.url,
                    rel: transcript.rel.flatMap { rel in rel.allSatisfy { !$0.isNewline && $0 != "\t" } ? rel : nil }
                )
            )
        }
        return offers
    }

    /// A transcript's file extension by its MIME type, else (no type given) by its URL's extension.
    static func transcriptFormat(type: String, url: String) -> String? {
        switch mediaType(type) {
        case "text/vtt": return "vtt"
        case "application/srt", "application/x-subrip", "text/srt", "application/x-srt", "text/x-srt": return "srt"
        case "application/json": return "json"
        case "text/html": return "html"
        case "":
            var path = Substring(url)
            if let mark = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<mark] }
            let ext = path.split(separator: "/").last?.split(separator: ".").last?.lowercased() ?? ""
            return ["vtt", "srt", "json", "html"].contains(ext) && path.contains(".") ? ext : nil
        default: return nil
        }
    }

    /// The MIME type a saved file is served with.
    static func mimeType(ofFormat format: String) -> String {
        switch format {
        case "vtt": "text/vtt"
        case "srt": "application/x-subrip"
        case "html": "text/html"
        default: "application/json"
        }
    }

    /// A language tag fit for a file name (`en`, `pt-BR`): letters, digits and `-`, at most 35 characters; anything
    /// else, and `chapters` (which would name the chapters file), counts as no language.
    static func language(_ text: String?) -> String? {
        guard let text = text?.trimmingWhitespace(), !text.isEmpty, text.count <= 35,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
            text.lowercased() != "chapters"
        else { return nil }
        return text
    }

    /// Where an offer is saved beside `episodeFile`: its name without the extension, then `.chapters.json`, or
    /// `.<language>.<format>` (`.<format>` without a language).
    static func path(of offer: SidecarOffer, beside episodeFile: String) -> String {
        let slash = episodeFile.lastIndex(of: "/")
        let nameStart = slash.map { episodeFile.index(after: $0) } ?? episodeFile.startIndex
        var stem = Substring(episodeFile)
        // A leading dot is part of the name, not an extension.
        if let dot = episodeFile[nameStart...].lastIndex(of: "."), dot > nameStart { stem = episodeFile[..<dot] }
        switch offer.kind {
        case .chapters: return stem + ".chapters.json"
        case .transcript: return stem + (offer.language.map { ".\($0)" } ?? "") + "." + offer.format
        }
    }

    /// When a fetch that failed for the `attempts`-th time is tried again: after 1 min, 5 min, 30 min, 2 h; `nil`
    /// once ``maxAttempts`` are used up.
    static func retryAt(afterAttempt attempts: Int, now: Int64) -> Int64? {
        let delays: [Int64] = [60_000, 300_000, 1_800_000, 7_200_000]
        guard attempts < maxAttempts else { return nil }
        return now + delays[min(max(attempts, 1), delays.count) - 1]
    }

    /// The type and subtype of a MIME type, lowercased, without parameters.
    private static func mediaType(_ text: String) -> String {
        String(text.split(separator: ";", maxSplits: 1).first ?? "").trimmingWhitespace().lowercased()
    }
}
