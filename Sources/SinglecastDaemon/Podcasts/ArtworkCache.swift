#if canImport(Glibc)
import Glibc
#endif

/// The artwork directory as a cache with a size limit: the least recently written files go first.
package enum ArtworkCache {
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
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
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
