import Foundation
import SinglecastDaemon
import Testing

@Suite struct ArtworkCacheTests {
    @Test func listsRegularFilesOldestFirstWithTheirSizes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("artwork-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = Date()
        for (name, size, age) in [("new.jpg", 300_000, 10.0), ("old.png", 400_000, 300.0), ("mid.jpg", 500_000, 60.0)] {
            let path = directory + "/" + name
            FileManager.default.createFile(atPath: path, contents: Data(count: size))
            try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-age)], ofItemAtPath: path)
        }
        try FileManager.default.createDirectory(atPath: directory + "/subdirectory", withIntermediateDirectories: false)

        let files = ArtworkCache.files(in: directory)
        #expect(files.map { ($0.path as NSString).lastPathComponent } == ["old.png", "mid.jpg", "new.jpg"])
        #expect(files.map(\.size) == [400_000, 500_000, 300_000])

        #expect(ArtworkCache.evictions(files, limit: 1_200_000).isEmpty)
        #expect(ArtworkCache.evictions(files, limit: 1_000_000).map(\.size) == [400_000])
        #expect(ArtworkCache.evictions(files, limit: 500_000).map(\.size) == [400_000, 500_000])
        #expect(ArtworkCache.evictions(files, limit: 0).count == 3)
        #expect(ArtworkCache.files(in: directory + "/missing").isEmpty)
    }
}
