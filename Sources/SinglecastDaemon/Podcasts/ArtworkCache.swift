import Dispatch
import FoundationEssentials
import SinglecastHTTP
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// The artwork directory as a cache with a size limit: it fetches a podcast's image (conditionally when it has it),
/// writes it atomically, and evicts the least recently written files when over its size.
///
/// Made afresh for each use from the current settings, so a reload's new size or deadline applies at once.
package struct ArtworkCache: Sendable {
    package var directory: String
    /// The cache's size in bytes; one image may take at most 20 MiB of it.
    package var limit: Int64
    /// How long one image's fetch may take in all.
    package var deadline: Duration
    package var transfer: TransferOptions
    package var fetch: @Sendable (FetchRequest) async throws(TransferError) -> FetchResult

    package init(
        directory: String,
        limit: Int64,
        deadline: Duration,
        transfer: TransferOptions,
        fetch: @escaping @Sendable (FetchRequest) async throws(TransferError) -> FetchResult
    ) {
        self.directory = directory
        self.limit = limit
        self.deadline = deadline
        self.transfer = transfer
        self.fetch = fetch
    }

    /// The image a podcast has in the cache, with the validators of its fetch.
    package struct Entry: Hashable, Sendable {
        package var path: String
        package var etag: String?
        package var lastModified: String?

        package init(path: String, etag: String?, lastModified: String?) {
            self.path = path
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// What a refresh of a podcast's image came to.
    package enum Refresh: Hashable, Sendable {
        /// The server said it has not changed (304).
        case unchanged
        /// A new image is in the cache; a previous one of another name was removed.
        case stored(Entry)
        /// Not fetched or not written; the reason is for the log (artwork is decoration: nothing else fails).
        case failed(String)
    }

    /// Fetches the image of podcast `id` from `source` into the cache.
    ///
    /// - Parameter cached: What the cache holds for it now, if the file is still there (its validators make the
    ///   request conditional).
    package func refresh(_ id: Int64, from source: String, cached: Entry?) async -> Refresh {
        let request = FetchRequest(
            url: source,
            headers: ["Accept: image/*"],
            ifNoneMatch: cached?.etag,
            ifModifiedSince: cached?.lastModified,
            maxBytes: min(20 << 20, limit),
            options: transfer
        )
        let result: FetchResult
        switch await fetchWithin(deadline, fetch, request) {
        case .success(let fetched)?: result = fetched
        case .failure(let error)?: return .failed(error.message)
        case nil: return .failed("not fetched within \(deadline.components.seconds) s")
        }
        if result.response.status == 304 { return .unchanged }
        guard (200...299).contains(result.response.status), !result.body.isEmpty else {
            return .failed("HTTP \(result.response.status)")
        }
        // Whatever the server calls it, only an image goes into the cache: an image host answering with an HTML page
        // or a script must not leave it under an image's name. libmagic reads the first bytes as the media check
        // does (a few milliseconds, once per new image).
        let detected: String?
        do {
            detected = try MediaSniffer.mimeType(of: ArraySlice(result.body.prefix(MediaSniffer.headSize)))
        } catch let error where error.code == .load || error.code == .open {
            detected = nil  // without libmagic's database nothing is checked, as with downloads
        } catch {
            return .failed("cannot tell whether it is an image: \(error.message)")
        }
        if let detected, !detected.hasPrefix("image/") {
            return .failed("not an image but \(MediaCheck.describe(detected))")
        }
        let ext = Self.imageExtension(detected ?? result.response.contentType, url: source)
        let path = "\(directory)/\(id).\(ext)"
        do {
            try await Self.write(result.body, to: path, in: directory)
        } catch {
            return .failed("cannot write \(path): \(describeFileError(error))")
        }
        if let old = cached?.path, old != path { unlink(old) }
        return .stored(Entry(path: path, etag: result.response.etag, lastModified: result.response.lastModified))
    }

    /// Writes an image atomically, off the cooperative pool: the atomic write syncs the file, milliseconds each, and
    /// the images of 1,000 new subscriptions held one of a two-core machine's two pool threads for most of an OPML
    /// import. Dispatch adds a thread while one blocks.
    private static func write(_ body: Data, to path: String, in directory: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                        try body.write(to: URL(fileURLWithPath: path), options: .atomic)
                    }
                )
            }
        }
    }

    /// Deletes the oldest images until the rest fit in ``limit``.
    ///
    /// - Returns: The paths deleted.
    package func trim() -> [String] { trimmed().deleted }

    /// Deletes the oldest images until the rest fit in ``limit``.
    ///
    /// - Returns: The paths deleted, and the bytes of the images left.
    package func trimmed() -> (deleted: [String], remaining: Int64) {
        let files = Self.files(in: directory)
        let evicted = Self.evictions(files, limit: limit)
        let deleted = evicted.filter { unlink($0.path) == 0 }
        return (deleted.map(\.path), files.reduce(0) { $0 + $1.size } - deleted.reduce(0) { $0 + $1.size })
    }

    /// The size of a file in the cache, if it is there.
    static func size(of path: String) -> Int64? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    /// The file extension of an image: from its content type, else from its URL, else `img`.
    static func imageExtension(_ contentType: String?, url: String) -> String {
        switch contentType?.lowercased().split(separator: ";").first?.trimmingWhitespace() {
        case "image/png": return "png"
        case "image/webp": return "webp"
        case "image/gif": return "gif"
        case "image/jpeg", "image/jpg": return "jpg"
        default:
            let ext = URL(string: url)?.pathExtension.lowercased() ?? ""
            return ["png", "jpg", "jpeg", "webp", "gif"].contains(ext) ? ext : "img"
        }
    }

    package struct File: Hashable, Sendable {
        package var path: String
        package var size: Int64
        /// Last modification, in nanoseconds since 1970.
        package var modified: Int64
    }

    /// The regular files in `directory`, oldest first; empty when it cannot be read.
    package static func files(in directory: String) -> [File] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var files: [File] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            let path = directory + "/" + name
            var info = stat()
            guard name != ".", name != "..", lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            // Saturating: a date past 2262 (ext4 keeps them to 2446) overflowed here at every trim.
            let seconds = Int64(info.st_mtim.tv_sec)
            let modified = seconds.saturatingMultiply(1_000_000_000).saturatingAdd(Int64(info.st_mtim.tv_nsec))
            files.append(File(path: path, size: Int64(info.st_size), modified: modified))
        }
        return files.sorted { ($0.modified, $0.path) < ($1.modified, $1.path) }
    }

    /// The files to delete, oldest first, so that the rest fit in `limit` bytes.
    package static func evictions(_ files: [File], limit: Int64) -> [File] {
        var total = files.reduce(0) { $0 + $1.size }
        var evicted: [File] = []
        for file in files where total > limit {
            evicted.append(file)
            total -= file.size
        }
        return evicted
    }
}
