import SinglecastStore

/// A chapters or transcript file saved beside an episode's file.
package struct SavedSidecar: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case chapters, transcript
    }

    package var kind: Kind
    /// The transcript's language as the feed gave it (file-name safe); `nil` when it gave none, and for chapters.
    package var language: String?
    /// What the file is served as: `application/json+chapters`, `text/vtt`, `application/x-subrip`,
    /// `application/json`, `text/html`.
    package var mimeType: String
    /// Absolute path beside the episode's file.
    package var path: String
    package var bytes: Int64
    /// Where the feed links to it.
    package var url: String
    /// The transcript's `rel` as the feed gives it (`captions`); `nil` for none.
    package var rel: String?
}

/// A chapters or transcript file of an episode as `show-episode` lists it: saved, still wanted, or refused.
package struct EpisodeSidecar: Sendable, Hashable {
    package enum State: String, Sendable, Hashable {
        case saved, wanted, refused
    }

    package var kind: SavedSidecar.Kind
    package var language: String?
    package var mimeType: String
    package var url: String
    package var rel: String?
    package var state: State
    /// The saved file; `nil` until saved.
    package var path: String?
    /// Why the last fetch failed, or why it is refused.
    package var error: String?
}

extension Subscriptions {
    /// The chapters and transcript files saved beside the episode's file, in the order the feed lists them; empty when
    /// the episode has none, or no file, or does not exist.
    ///
    /// The one read of them outside the podcast layer: the personal feeds list and serve these.
    package func savedSidecars(episodeID: Int64) async throws -> [SavedSidecar] {
        try await savedSidecars(episodeIDs: [episodeID])[episodeID] ?? []
    }

    /// ``savedSidecars(episodeID:)`` for many episodes in one read (a feed lists hundreds), by episode; an episode
    /// without any is not among the keys.
    package func savedSidecars(episodeIDs: [Int64]) async throws -> [Int64: [SavedSidecar]] {
        let records: [Int64: [SidecarRecord]]
        do {
            records = try await store.savedSidecars(ofEpisodes: episodeIDs)
        } catch {
            throw PodcastError.store("cannot read the episodes' chapters and transcripts: \(error)")
        }
        return records.mapValues { rows in
            rows.compactMap { record in
                guard let path = record.path else { return nil }
                return SavedSidecar(
                    kind: SavedSidecar.Kind(record.offer.kind),
                    language: record.offer.language,
                    mimeType: record.offer.mimeType,
                    path: path,
                    bytes: record.bytes ?? 0,
                    url: record.offer.url,
                    rel: record.offer.rel
                )
            }
        }
    }

    /// Every chapters and transcript file of the episode's current download, whatever became of it.
    package func episodeSidecars(episodeID: Int64) async throws -> [EpisodeSidecar] {
        try await sidecars(episodeID: episodeID).map { record in
            EpisodeSidecar(
                kind: SavedSidecar.Kind(record.offer.kind),
                language: record.offer.language,
                mimeType: record.offer.mimeType,
                url: record.offer.url,
                rel: record.offer.rel,
                state: EpisodeSidecar.State(rawValue: record.state.rawValue) ?? .wanted,
                path: record.path,
                error: record.error
            )
        }
    }

    /// The rows of the episode's current download: rows of a download it let go of are on their way out.
    private func sidecars(episodeID: Int64) async throws -> [SidecarRecord] {
        do {
            let records = try await store.sidecars(ofEpisode: episodeID)
            guard let current = try await store.episodes(ids: [episodeID], fields: .listing).first?.downloadID else {
                return []
            }
            return records.filter { $0.downloadID == current }
        } catch {
            throw PodcastError.store("cannot read the episode's chapters and transcripts: \(error)")
        }
    }

    /// Removes what was saved beside the files of these downloads, which went (or were found gone), the way the queue
    /// deletes episodes' files (to the Trash with `use_trash`).
    func disposeSidecars(ofDownloads downloads: [Int64]) async {
        await SidecarService.dispose(
            ofDownloads: downloads,
            store: store,
            disposal: await queue.fileDisposal,
            root: downloadDirectory,
            logger: logger,
            now: now()
        )
    }
}

extension SavedSidecar.Kind {
    init(_ kind: SidecarOffer.Kind) {
        switch kind {
        case .chapters: self = .chapters
        case .transcript: self = .transcript
        }
    }
}
