import Foundation
import Testing

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// What a rule may delete: only the file the queue wrote, inside the download directory, as it was written.
@Suite struct FileDisposalTests {
    private let now: Int64 = 1_800_000_000_000

    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "disposal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/episodes/Show", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: path + "/elsewhere", withIntermediateDirectories: true)
        return path
    }

    private func write(_ path: String, bytes: Int) throws {
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func theQueuesOwnFileGoesToTheTrash() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Show/a.mp3"
        try write(path, bytes: 100)
        let disposal = FileDisposal(trash: Trash(home: root + "/data/Trash"))
        let result = disposal.dispose(path, size: 100, inside: root + "/episodes", now: now)
        guard case .success(let disposed) = result else {
            Issue.record("refused: \(result)")
            return
        }
        #expect(disposed.trashedTo == root + "/data/Trash/files/a.mp3")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileOutsideTheDownloadDirectoryIsLeftAlone() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let outside = root + "/elsewhere/a.mp3"
        try write(outside, bytes: 100)
        // Also through a path that only looks inside.
        for path in [outside, root + "/episodes/../elsewhere/a.mp3"] {
            let result = FileDisposal(trash: nil).dispose(path, size: 100, inside: root + "/episodes", now: now)
            guard case .failure(let refusal) = result else {
                Issue.record("deleted \(path)")
                continue
            }
            #expect(refusal.reason.contains("not inside the download directory"))
        }
        #expect(FileManager.default.fileExists(atPath: outside))
    }

    @Test func aReplacedOrLinkedFileIsLeftAlone() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let changed = root + "/episodes/Show/changed.mp3"
        try write(changed, bytes: 250)
        let link = root + "/episodes/Show/link.mp3"
        try write(root + "/elsewhere/target.mp3", bytes: 100)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: root + "/elsewhere/target.mp3")
        let disposal = FileDisposal(trash: nil)
        guard case .failure(let replaced) = disposal.dispose(changed, size: 100, inside: root + "/episodes", now: now)
        else {
            Issue.record("deleted a file whose size changed")
            return
        }
        #expect(replaced.reason.contains("it has 250 bytes, not the 100 downloaded"))
        guard case .failure(let linked) = disposal.dispose(link, size: 100, inside: root + "/episodes", now: now) else {
            Issue.record("deleted through a symbolic link")
            return
        }
        #expect(linked.reason.contains("no longer a regular file"))
        #expect(FileManager.default.fileExists(atPath: changed))
        #expect(FileManager.default.fileExists(atPath: root + "/elsewhere/target.mp3"))
    }

    /// `use_trash = true` is a promise to the listener: a Trash that cannot take the file leaves it where it is.
    @Test func aFileTheTrashCannotTakeStaysWhereItIs() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Show/a.mp3"
        try write(path, bytes: 100)
        // The home trash, on the file's own file system, is spoilt: `files` is a plain file.
        try FileManager.default.createDirectory(atPath: root + "/data/Trash/info", withIntermediateDirectories: true)
        try write(root + "/data/Trash/files", bytes: 1)
        let result = FileDisposal(trash: Trash(home: root + "/data/Trash"))
            .dispose(path, size: 100, inside: root + "/episodes", now: now)
        guard case .failure(let refusal) = result else {
            Issue.record("the file went although the Trash could not take it: \(result)")
            return
        }
        #expect(refusal.reason.contains("Trash"), "\(refusal)")
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func nothingIsDeletedThroughAFolderThatIsALink() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A folder below the download directory replaced by a link to another folder in it.
        try FileManager.default.createDirectory(atPath: root + "/episodes/Other", withIntermediateDirectories: true)
        try write(root + "/episodes/Other/a.mp3", bytes: 100)
        try FileManager.default.removeItem(atPath: root + "/episodes/Show")
        #expect(symlink(root + "/episodes/Other", root + "/episodes/Show") == 0)
        let result = FileDisposal(trash: nil).dispose(
            root + "/episodes/Show/a.mp3",
            size: 100,
            inside: root + "/episodes",
            now: now
        )
        guard case .failure = result else {
            Issue.record("deleted through a link: \(result)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: root + "/episodes/Other/a.mp3"))
    }
}
