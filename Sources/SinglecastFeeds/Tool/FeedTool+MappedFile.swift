import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension FeedTool {
    /// A regular file mapped read-only and private, whose pages can be let go once the parser went past them.
    ///
    /// A 54 MB feed mapped whole stays resident as the parser reads it, on top of the model it builds;
    /// dropping the pages behind the reader (`MADV_DONTNEED`) keeps only a few MiB of the document resident.
    /// For a private mapping of a file nobody writes, that is safe: a page read again is faulted back in from
    /// the page cache with the same bytes.
    final class MappedFile {
        let data: Data
        private let start: UInt
        private let length: Int
        private let pageSize: UInt

        /// Maps `path`; `nil` when it is not a non-empty regular file that can be mapped (read it instead).
        init?(path: String) {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0,
                let length = Int(exactly: status.st_size)
            else { return nil }
            guard let address = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, descriptor, 0),
                address != MAP_FAILED
            else { return nil }
            self.start = UInt(bitPattern: address)
            self.length = length
            self.pageSize = UInt(max(sysconf(Int32(_SC_PAGESIZE)), 4096))
            data = Data(
                bytesNoCopy: address,
                count: length,
                deallocator: .custom { pointer, count in
                    _ = munmap(pointer, count)
                }
            )
        }

        /// Lets go of the whole pages of `bytes` when they lie in this mapping (not in a converted copy).
        func dropPages(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress else { return }
            let first = UInt(bitPattern: base)
            let end = UInt(length)
            // Only within the mapping: offsets are computed as integers, never as pointers past it.
            guard first >= start, first - start <= end, UInt(bytes.count) <= end - (first - start) else { return }
            let from = (first - start + pageSize - 1) / pageSize * pageSize
            let to = (first - start + UInt(bytes.count)) / pageSize * pageSize
            guard to > from, let page = UnsafeMutableRawPointer(bitPattern: start + from) else { return }
            _ = madvise(page, Int(to - from), MADV_DONTNEED)
        }
    }
}
