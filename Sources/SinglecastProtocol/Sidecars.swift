/// A chapters or transcript file of an episode, as `episode` reports it: saved beside the episode's file, still to be
/// fetched, or refused.
package struct EpisodeSidecarInfo: Codable, Hashable, Sendable {
    /// `chapters` or `transcript`.
    package var kind: String
    /// The transcript's language; absent when the feed gives none.
    package var language: String?
    /// `application/json+chapters`, `text/vtt`, `application/x-subrip`, `application/json` or `text/html`.
    package var mimeType: String
    /// Where the feed links to it.
    package var url: String
    /// The transcript's `rel` as the feed gives it (`captions`).
    package var rel: String?
    /// `saved`, `wanted` (to be fetched, or tried again later) or `refused` (too big, or failed for good).
    package var state: String
    /// The saved file, beside the episode's.
    package var file: String?
    /// Why the last fetch failed, or why it is refused.
    package var error: String?

    package init(
        kind: String,
        language: String?,
        mimeType: String,
        url: String,
        state: String,
        file: String?,
        error: String?,
        rel: String? = nil
    ) {
        self.kind = kind
        self.language = language
        self.mimeType = mimeType
        self.url = url
        self.state = state
        self.file = file
        self.error = error
        self.rel = rel
    }

    enum CodingKeys: String, CodingKey {
        case kind, language
        case mimeType = "mime_type"
        case url, rel, state, file, error
    }
}
