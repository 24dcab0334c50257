import CPosix
import SinglecastStore

#if canImport(Glibc)
import Glibc
#endif

/// The mark a download's complete body carries: an extended attribute naming the download, written before the
/// file's last sync so that it is on disk with the bytes.
///
/// It spares a small download one store transaction. Without it, the final name and size are saved before the
/// rename: a crash between the rename and the commit of the completion must still find the file complete under
/// the row's name. With it, start-up recognises the file under the name the row already has by its mark
/// (``DownloadQueueStateMachine/recover(_:partialExists:finalSize:finalMarked:now:)``), and the name and size are
/// saved with the completion only. A file system that keeps no user attributes (FAT, some network ones) gets the
/// save before the rename, as does any download whose name changes on completion.
///
/// The mark stays on the completed file: `getfattr -n user.singlecast.download FILE` shows which download made it.
enum CompletionMark {
    static let attribute = "user.singlecast.download"

    /// The download's id and the time it was added: ids are not reused within a store, and the time keeps a copy
    /// from another store (a restored backup) from passing for this one's.
    static func value(of record: DownloadRecord) -> String { "\(record.id):\(record.addedAt)" }

    /// Marks the open file. Returns whether the mark was written; any failure only means the save before the rename.
    static func write(_ value: String, to fd: Int32) -> Bool {
        var bytes = Array(value.utf8)
        return cposix_set_file_attribute(fd, attribute, &bytes, bytes.count) == 0
    }

    /// Whether the file at `path` (not a symbolic link there) carries exactly `value`.
    static func isOn(_ path: String, value: String) -> Bool {
        let expected = Array(value.utf8)
        // One byte more than expected: a longer mark reads whole, and then differs.
        var read = [UInt8](repeating: 0, count: expected.count + 1)
        let size = cposix_read_link_attribute(path, attribute, &read, read.count)
        return size == expected.count && read.prefix(size).elementsEqual(expected)
    }
}
