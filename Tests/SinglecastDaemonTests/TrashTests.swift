import Foundation
import Testing

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The freedesktop.org Trash on real files, read back by trash-cli's `trash-list` (a peer that restores from it).
@Suite struct TrashTests {
    private let now: Int64 = 1_800_000_000_000

    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "trash-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/episodes", withIntermediateDirectories: true)
        return path
    }

    @Test func aFileMovesToTheHomeTrashWithItsInfo() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Talk #1: a&b ü.mp3"
        try Data("audio".utf8).write(to: URL(fileURLWithPath: path))
        let trash = Trash(home: root + "/data/Trash")
        let moved = try trash.trash(path, now: now)
        #expect(moved == root + "/data/Trash/files/Talk #1: a&b ü.mp3")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try String(contentsOfFile: moved, encoding: .utf8) == "audio")
        let info = try String(
            contentsOfFile: root + "/data/Trash/info/Talk #1: a&b ü.mp3.trashinfo",
            encoding: .utf8
        )
        let encoded = Trash.percentEncoded(path)
        #expect(encoded.hasSuffix("/episodes/Talk%20%231%3A%20a%26b%20%C3%BC.mp3"))
        #expect(info == "[Trash Info]\nPath=\(encoded)\nDeletionDate=\(Trash.localDate(now))\n\(Trash.marker)\n")
    }

    /// `max_storage` counts and empties only what singlecast trashed from the download directory: the listener's own
    /// deletions and files from elsewhere are never read as its own, and an emptied file takes its info file along.
    @Test func onlySinglecastsOwnFilesFromTheDownloadDirectoryAreCountedAndEmptied() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true)
        let trash = Trash(home: root + "/data/Trash")
        try Data("12345".utf8).write(to: URL(fileURLWithPath: root + "/episodes/ours ü.mp3"))
        try Data("123".utf8).write(to: URL(fileURLWithPath: root + "/elsewhere/other.mp3"))
        let ours = try trash.trash(root + "/episodes/ours ü.mp3", now: now)
        try trash.trash(root + "/elsewhere/other.mp3", now: now)
        // The listener's own deletion from the download directory, by another trasher: no marker.
        try Data("1".utf8).write(to: URL(fileURLWithPath: root + "/data/Trash/files/theirs.mp3"))
        try Data("[Trash Info]\nPath=\(root)/episodes/theirs.mp3\nDeletionDate=2026-01-01T00:00:00\n".utf8)
            .write(to: URL(fileURLWithPath: root + "/data/Trash/info/theirs.mp3.trashinfo"))

        let found = trash.ownFiles(from: root + "/episodes")
        #expect(found.map(\.path) == [ours])
        #expect(found.first?.size == 5)
        let first = try #require(found.first)
        #expect(trash.purge(first) == nil)
        #expect(!FileManager.default.fileExists(atPath: ours))
        #expect(!FileManager.default.fileExists(atPath: root + "/data/Trash/info/ours ü.mp3.trashinfo"))
        #expect(FileManager.default.fileExists(atPath: root + "/data/Trash/files/theirs.mp3"))
        #expect(FileManager.default.fileExists(atPath: root + "/data/Trash/files/other.mp3"))
        #expect(trash.ownFiles(from: root + "/episodes").isEmpty)
    }

    /// A slash followed by a combining mark is one `Character`, so a `..` before it went unseen by a check that
    /// split the path into `Character`s; the kernel reads the bytes and goes up a folder.
    @Test func anInfoFileCannotHideADotDotBeforeACombiningMark() {
        func info(_ path: String) -> String {
            "[Trash Info]\nPath=\(path)\nDeletionDate=2026-01-01T00:00:00\n\(Trash.marker)\n"
        }
        #expect(Trash.ownOriginal(info: info("/srv/episodes/pod/../%CC%81x.mp3"), top: "/") == nil)
        #expect(Trash.ownOriginal(info: info("/srv/episodes/pod/./%CC%81x.mp3"), top: "/") == nil)
        #expect(
            Trash.ownOriginal(info: info("/srv/episodes/pod/%CC%81x.mp3"), top: "/") == "/srv/episodes/pod/\u{301}x.mp3"
        )
    }

    @Test func aSecondFileOfTheSameNameGetsANumberBeforeItsExtension() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let trash = Trash(home: root + "/data/Trash")
        for _ in 0..<3 {
            try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/episodes/a.mp3"))
            try trash.trash(root + "/episodes/a.mp3", now: now)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: root + "/data/Trash/files").sorted()
        #expect(names == ["a.2.mp3", "a.3.mp3", "a.mp3"])
    }

    @Test func aMissingFileIsAnErrorAndLeavesNoInfoBehind() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let trash = Trash(home: root + "/data/Trash")
        #expect(throws: Trash.Failure.self) { try trash.trash(root + "/episodes/gone.mp3", now: now) }
        let infos = (try? FileManager.default.contentsOfDirectory(atPath: root + "/data/Trash/info")) ?? []
        #expect(infos.isEmpty)
    }

    @Test func aFileInFilesWithoutAnInfoFileIsNeverReplaced() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/data/Trash/files", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/data/Trash/info", withIntermediateDirectories: true)
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: root + "/data/Trash/files/a.mp3"))
        try Data("ours".utf8).write(to: URL(fileURLWithPath: root + "/episodes/a.mp3"))
        let moved = try Trash(home: root + "/data/Trash").trash(root + "/episodes/a.mp3", now: now)
        #expect(moved == root + "/data/Trash/files/a.2.mp3")
        #expect(try String(contentsOfFile: root + "/data/Trash/files/a.mp3", encoding: .utf8) == "someone else's")
        #expect(try String(contentsOfFile: moved, encoding: .utf8) == "ours")
        let infos = try FileManager.default.contentsOfDirectory(atPath: root + "/data/Trash/info")
        #expect(infos == ["a.2.mp3.trashinfo"], "no info file claims the other program's file")
    }

    @Test func aTrashThatIsNotTheUsersOwnIsRefused() throws {
        for spoil in ["owner", "mode", "link"] {
            let root = try scratch()
            defer { try? FileManager.default.removeItem(atPath: root) }
            try FileManager.default.createDirectory(
                atPath: root + "/data/Trash/files",
                withIntermediateDirectories: true
            )
            try FileManager.default.createDirectory(
                atPath: root + "/data/Trash/info",
                withIntermediateDirectories: true
            )
            switch spoil {
            case "owner":
                guard getuid() == 0 else { continue }  // only root can give a directory away
                #expect(chown(root + "/data/Trash/info", 4242, 4242) == 0)
            case "mode":
                #expect(chmod(root + "/data/Trash/files", 0o777) == 0)
            default:
                try FileManager.default.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true)
                #expect(rmdir(root + "/data/Trash/files") == 0)
                #expect(symlink(root + "/elsewhere", root + "/data/Trash/files") == 0)
            }
            let path = root + "/episodes/a.mp3"
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: Trash.Failure.self, "a trash with a spoilt \(spoil)") {
                try Trash(home: root + "/data/Trash").trash(path, now: now)
            }
            #expect(FileManager.default.fileExists(atPath: path), "the file stays where it is")
        }
    }

    @Test func anInfoFileACrashOrphanedIsSweptBeforeTheFirstTrashButNotAnotherTrashers() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let info = root + "/data/Trash/info/"
        try FileManager.default.createDirectory(atPath: info, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/data/Trash/files", withIntermediateDirectories: true)
        // What a daemon killed between the info file and the move left, what another trasher is in the middle of,
        // and a complete entry of ours.
        let ours = "[Trash Info]\nPath=/x/orphan.mp3\nDeletionDate=2027-01-15T08:00:00\n\(Trash.marker)\n"
        try ours.write(toFile: info + "orphan.mp3.trashinfo", atomically: false, encoding: .utf8)
        try ours.write(toFile: info + "kept.mp3.trashinfo", atomically: false, encoding: .utf8)
        try Data("k".utf8).write(to: URL(fileURLWithPath: root + "/data/Trash/files/kept.mp3"))
        try "[Trash Info]\nPath=/x/theirs.mp3\nDeletionDate=2027-01-15T08:00:00\n".write(
            toFile: info + "theirs.mp3.trashinfo",
            atomically: false,
            encoding: .utf8
        )
        try Data("y".utf8).write(to: URL(fileURLWithPath: root + "/episodes/second.mp3"))
        try Trash(home: root + "/data/Trash").trash(root + "/episodes/second.mp3", now: now)
        let infos = try FileManager.default.contentsOfDirectory(atPath: info).sorted()
        #expect(infos == ["kept.mp3.trashinfo", "second.mp3.trashinfo", "theirs.mp3.trashinfo"])
    }

    @Test(
        "trash-list reads what was trashed",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/trash-list"), "trash-cli is not installed")
    )
    func trashCLIListsTheFile() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Episode 7 – Ünïcode.mp3"
        try Data("audio".utf8).write(to: URL(fileURLWithPath: path))
        try Trash(home: root + "/data/Trash").trash(path, now: Int64(Date.now.timeIntervalSince1970 * 1000))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/trash-list")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = root + "/data"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let listed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(listed.contains(" \(path)\n"), "trash-list printed: \(listed)")
    }
}
