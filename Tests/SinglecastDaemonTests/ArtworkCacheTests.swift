import Foundation
import SinglecastDaemon
import SinglecastHTTP
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ArtworkCacheTests {
    @Test func listsRegularFilesOldestFirstWithTheirSizes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("artwork-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = Date()
        for (name, size, age) in [("new.jpg", 300_000, 10.0), ("old.png", 400_000, 300.0), ("mid.jpg", 500_000, 60.0)] {
            let path = directory + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data(count: size)))
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

    /// A file dated past 2262 (ext4 keeps dates to 2446) overflowed its nanoseconds and trapped the daemon at
    /// every trim of the cache: it sorts as the newest instead.
    @Test(
        .enabled(if: ArtworkCacheTests.fileSystemKeepsDatesPast2262(), "the temporary file system keeps no such date")
    )
    func aFileFromTheFarFutureSortsLastInsteadOfTrapping() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("artwork-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["future.jpg", "today.jpg"] {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(count: 10)))
        }
        #expect(Self.setFarFutureDate(directory + "/future.jpg"))
        let files = ArtworkCache.files(in: directory)
        #expect(files.map { ($0.path as NSString).lastPathComponent } == ["today.jpg", "future.jpg"])
        #expect(files.last?.modified == .max)
    }

    private static func setFarFutureDate(_ path: String) -> Bool {
        var times = [timespec(tv_sec: 15_000_000_000, tv_nsec: 0), timespec(tv_sec: 15_000_000_000, tv_nsec: 0)]
        var info = stat()
        return utimensat(AT_FDCWD, path, &times, 0) == 0 && stat(path, &info) == 0
            && info.st_mtim.tv_sec > 9_300_000_000
    }

    static func fileSystemKeepsDatesPast2262() -> Bool {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("artwork-probe-\(UUID())").path
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return false }
        defer { try? FileManager.default.removeItem(atPath: path) }
        return setFarFutureDate(path)
    }
}

/// ``ArtworkCache`` fetching for itself, with the network replaced by answers given here and real files.
@Suite struct ArtworkCacheRefreshTests {
    private func cache(_ directory: String, limit: Int64 = 1 << 20, answer: FetchResult) -> ArtworkCache {
        ArtworkCache(
            directory: directory,
            limit: limit,
            deadline: .seconds(5),
            transfer: TransferOptions(),
            fetch: { _ in answer }
        )
    }

    private func image(
        _ status: Int,
        type: String? = "image/png",
        body: Data = ArtworkCacheRefreshTests.png
    ) -> FetchResult {
        FetchResult(
            response: TransferResponse(
                status: status,
                finalURL: "http://img.example/a",
                etag: "\"i1\"",
                contentType: type
            ),
            body: body
        )
    }

    @Test func storesTheImageUnderItsTypeAndRemovesTheOldOne() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-artwork")
        let old = home.file("art/7.jpg")
        try FileManager.default.createDirectory(atPath: home.file("art"), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: old, contents: Data([1])))
        let outcome = await cache(home.file("art"), answer: image(200)).refresh(
            7,
            from: "http://img.example/a.jpg",
            cached: ArtworkCache.Entry(path: old, etag: "\"i0\"", lastModified: nil)
        )
        #expect(outcome == .stored(ArtworkCache.Entry(path: home.file("art/7.png"), etag: "\"i1\"", lastModified: nil)))
        #expect(sameBytes(FileManager.default.contents(atPath: home.file("art/7.png")), Self.png))
        #expect(!FileManager.default.fileExists(atPath: old))
    }

    /// The start of a PNG file: its signature and header chunk (1×1 pixels).
    static let png = Data(
        [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]
            + [0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89]
    )

    /// The start of a JPEG file: its marker and JFIF header.
    static let jpeg = Data([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00])

    /// Servers call anything an image; libmagic decides. An HTML page and a shell script were cached as `16.jpg` and
    /// `17.png`.
    @Test(arguments: [
        ("image/jpeg", "<!DOCTYPE html>\n<html><head><title>Not Found</title></head><body>gone</body></html>\n"),
        ("image/png", "#!/bin/sh\nrm -rf \"$HOME\"\n"),
    ])
    func aBodyThatIsNoImageIsNotCached(type: String, body: String) async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-artwork")
        let outcome = await cache(home.file("art"), answer: image(200, type: type, body: Data(body.utf8))).refresh(
            16,
            from: "http://img.example/cover.jpg",
            cached: nil
        )
        guard case .failed(let reason) = outcome else {
            Issue.record("cached: \(outcome)")
            return
        }
        #expect(reason.contains("not an image"), "\(reason)")
        #expect(ArtworkCache.files(in: home.file("art")).isEmpty)
    }

    @Test func notModifiedAndFailuresLeaveTheCacheAlone() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-artwork")
        let directory = home.file("art")
        #expect(
            await cache(directory, answer: image(304, body: Data())).refresh(
                1,
                from: "http://img.example/a",
                cached: nil
            ) == .unchanged
        )
        #expect(
            await cache(directory, answer: image(404)).refresh(1, from: "http://img.example/a", cached: nil)
                == .failed("HTTP 404")
        )
        #expect(
            await cache(directory, answer: image(200, body: Data())).refresh(
                1,
                from: "http://img.example/a",
                cached: nil
            ) == .failed("HTTP 200")
        )
        #expect(ArtworkCache.files(in: directory).isEmpty)
    }

    @Test func trimmingDeletesTheOldestImagesOverTheLimit() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-artwork")
        let directory = home.file("art")
        let big = Self.png + Data(count: 600 - Self.png.count)
        let first = await cache(directory, limit: 1000, answer: image(200, body: big)).refresh(
            1,
            from: "http://i/a",
            cached: nil
        )
        try await Task.sleep(for: .milliseconds(20))
        let second = cache(directory, limit: 1000, answer: image(200, type: "image/jpeg", body: Self.jpeg + big))
        _ = await second.refresh(2, from: "http://i/b", cached: nil)
        #expect(first == .stored(ArtworkCache.Entry(path: directory + "/1.png", etag: "\"i1\"", lastModified: nil)))
        #expect(second.trim() == [directory + "/1.png"])
        #expect(ArtworkCache.files(in: directory).map(\.path) == [directory + "/2.jpg"])
    }
}
