import Foundation
import Testing

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// `trash restore` on real files in a real Trash directory, checked against trash-cli, a peer that reads and writes
/// the same directory.
@Suite struct TrashRestoreTests {
    private let now: Int64 = 1_800_000_000_000
    private static let hasTrashCLI = FileManager.default.isExecutableFile(atPath: "/usr/bin/trash-list")

    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "trash-restore-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/episodes/Show", withIntermediateDirectories: true)
        return path
    }

    private func trashCLI(_ program: String, _ arguments: [String], data: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + program)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }

    @Test(.enabled(if: hasTrashCLI, "trash-cli is not installed"))
    func aFileGoesBackWhereItWasAndLeavesTheTrashAsTrashListSeesIt() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Show/2026-11-27 Friday ü.mp3"
        try Data("audio".utf8).write(to: URL(fileURLWithPath: path))
        let trash = Trash(home: root + "/data/Trash")
        try trash.trash(path, now: now, episode: 815)
        // The podcast's folder went too (unsubscribe --delete-files removes emptied ones): it is made again.
        try FileManager.default.removeItem(atPath: root + "/episodes/Show")
        #expect(try trashCLI("trash-list", [], data: root + "/data").contains(" \(path)\n"))

        let found = try #require(trash.ownFiles(from: root + "/episodes").first)
        #expect(found.original == path)
        #expect(found.episode == 815)
        #expect(found.id.count == 8)
        #expect(trash.restore(found, root: root + "/episodes") == nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "audio")
        #expect(trash.ownFiles(from: root + "/episodes").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/data/Trash/info").isEmpty)
        #expect(!(try trashCLI("trash-list", [], data: root + "/data").contains(path)))
    }

    @Test func aTakenPlaceOrAPathOutsideTheDownloadDirectoryKeepsTheFileInTheTrash() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Show/a.mp3"
        try Data("ours".utf8).write(to: URL(fileURLWithPath: path))
        let trash = Trash(home: root + "/data/Trash")
        let inTrash = try trash.trash(path, now: now, episode: 7)
        try Data("new".utf8).write(to: URL(fileURLWithPath: path))
        let found = try #require(trash.ownFiles(from: root + "/episodes").first)

        guard let taken = trash.restore(found, root: root + "/episodes") else {
            Issue.record("a restore over a file succeeded")
            return
        }
        #expect(taken.message == "something is at \(path) now; move it away first")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        #expect(try String(contentsOfFile: inTrash, encoding: .utf8) == "ours")

        guard let outside = trash.restore(found, root: root + "/elsewhere") else {
            Issue.record("a restore outside the download directory succeeded")
            return
        }
        #expect(outside.message.contains("is outside the download directory \(root)/elsewhere"))
        #expect(trash.ownFiles(from: root + "/episodes").map(\.path) == [inTrash])
    }

    @Test(.enabled(if: hasTrashCLI, "trash-cli is not installed"))
    func whatTheListenerTrashedWithTrashPutIsNeverSinglecasts() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Show/mine.mp3"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path))
        _ = try trashCLI("trash-put", [path], data: root + "/data")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(Trash(home: root + "/data/Trash").ownFiles(from: root + "/episodes").isEmpty)
    }

    @Test func anEpisodeKeyThatIsNotAPositiveNumberIsNone() {
        let head = "[Trash Info]\nPath=/a.mp3\n\(Trash.marker)\n"
        #expect(Trash.ownEpisode(info: head + "X-Singlecast-Episode=12\n") == 12)
        for value in ["-3", "0", "x", "99999999999999999999", ""] {
            #expect(Trash.ownEpisode(info: head + "X-Singlecast-Episode=\(value)\n") == nil, "\(value)")
        }
        #expect(Trash.ownEpisode(info: head) == nil)
    }
}
