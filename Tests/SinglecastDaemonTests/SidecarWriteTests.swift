import Foundation
import Testing

@testable import SinglecastDaemon

/// How a fetched chapters or transcript file is written beside its episode: atomically, inside the download
/// directory, never over a file that is not the same bytes.
@Suite struct SidecarWriteTests {
    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "sidecar-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/episodes/Show", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: path + "/elsewhere", withIntermediateDirectories: true)
        return path
    }

    @Test func writtenWholeAndNoTemporaryFileLeft() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let body = Data("WEBVTT\n".utf8)
        let path = root + "/episodes/Show/E.en.vtt"
        #expect(SidecarService.write(body, to: path, root: root + "/episodes") == nil)
        #expect(FileManager.default.contents(atPath: path) == body)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/episodes/Show") == ["E.en.vtt"])
        // The same bytes again (written before a crash, not recorded): taken as saved.
        #expect(SidecarService.write(body, to: path, root: root + "/episodes") == nil)
    }

    @Test func anotherFileAtTheNameStays() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/episodes/Show/E.srt"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path))
        let problem = SidecarService.write(Data("theirs".utf8), to: path, root: root + "/episodes")
        #expect(problem == "another file is at \(path)")
        #expect(FileManager.default.contents(atPath: path) == Data("mine".utf8))
    }

    @Test func aLinkedFolderIsNotFollowed() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createSymbolicLink(
            atPath: root + "/episodes/Linked",
            withDestinationPath: root + "/elsewhere"
        )
        let problem = SidecarService.write(
            Data("x".utf8),
            to: root + "/episodes/Linked/E.vtt",
            root: root + "/episodes"
        )
        #expect(problem?.hasPrefix("cannot write") == true, "\(problem ?? "written")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/elsewhere").isEmpty)
    }
}
