import Foundation
import SinglecastHTTP
import SinglecastProtocol
import SinglecastStore
import SinglecastTestServers
import Testing

@testable import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

/// A shared download directory where someone planted links: a download never writes through a link, whether it
/// stands for the partial file or for a folder below `download_dir`.
@Suite struct DownloadDirectoryTests {
    /// Trailing slashes do not change what is inside a root; a sibling that shares its prefix is not inside it.
    @Test(arguments: [
        ("/a/b", "/a", true), ("/a/b//", "/a/", true), ("/a", "/a///", true), ("/", "/", true), ("/x", "/", true),
        ("/ab", "/a", false), ("/a", "/a/b", false), ("//", "/", true), ("/é/b/", "/é", true), ("/é", "/e", false),
    ])
    func insideARootWhateverItsTrailingSlashes(path: String, root: String, inside: Bool) {
        #expect(DownloadDirectory.isInside(path, root: root) == inside)
    }

    private func makeQueue(
        _ home: TemporaryDirectory,
        engine: HTTPEngine,
        settings: QueueSettings = QueueSettings()
    ) throws -> (DownloadQueue, Store) {
        let store = try Store(path: home.file("singlecast.sqlite3"))
        let logger = Logger(level: .error)
        let queue = DownloadQueue(
            store: store,
            engine: engine,
            events: EventBus(logger: logger),
            logger: logger,
            settings: settings,
            defaultDirectory: home.file("episodes"),
            distrustUncheckpointedBytes: false
        )
        return (queue, store)
    }

    private func runUntilDone(_ queue: DownloadQueue, _ id: Int64) async throws -> DownloadSnapshot {
        try await whileRunning(queue) {
            _ = try await eventually { [.completed, .failed].contains(try await queue.show(id).state) }
            return try await queue.show(id)
        }
    }

    @Test func aLinkPlantedAsThePartialFileIsNotWrittenThrough() async throws {
        let nginx = try NginxServer()
        let url = try nginx.serve(Data(repeating: 0x41, count: 65_536), as: "a.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let engine = try HTTPEngine()
        engine.start()
        let (queue, store) = try makeQueue(home, engine: engine)
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: home.file("episodes/pod"))])
        let victim = home.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, home.file("episodes/pod/a.bin.part")) == 0)

        let done = try await runUntilDone(queue, queued[0].id)
        await engine.stop()
        try await store.close()

        #expect(done.state == .failed, "\(done)")
        #expect(sameBytes(FileManager.default.contents(atPath: victim), Data("precious".utf8)))
    }

    @Test func aFolderReplacedByALinkIsNotWrittenThrough() async throws {
        let nginx = try NginxServer()
        let url = try nginx.serve(Data(repeating: 0x42, count: 65_536), as: "b.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let engine = try HTTPEngine()
        engine.start()
        let (queue, store) = try makeQueue(home, engine: engine)
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: home.file("episodes/pod"))])
        let outside = home.file("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        #expect(rmdir(home.file("episodes/pod")) == 0)
        #expect(symlink(outside, home.file("episodes/pod")) == 0)

        let done = try await runUntilDone(queue, queued[0].id)
        await engine.stop()
        try await store.close()

        #expect(done.state == .failed, "\(done)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == [])
    }

    /// A slash followed by a combining mark is one `Character`: a name that begins with one is still cut at its
    /// slash, so its file is created, renamed and removed in its own folder.
    @Test func aNameBeginningWithACombiningMarkIsCutAtItsSlash() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let root = home.file("episodes")
        let folder = root + "/pod"
        let partial = folder + "/\u{301}x.mp3.part"
        let final = folder + "/\u{301}x.mp3"
        let (created, _) = DownloadDirectory.open(folder, root: root, create: true)
        #expect(created >= 0)
        if created >= 0 { close(created) }
        let (fd, code) = DownloadDirectory.openFile(partial, root: root)
        #expect(fd >= 0, "errno \(code)")
        if fd >= 0 { close(fd) }
        #expect(DownloadDirectory.renameNoReplace(partial, to: final, root: root) == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["\u{301}x.mp3"])
        #expect(DownloadDirectory.remove(final, root: root) == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])

        // Its folder is checked for a link like any other: cut at the wrong slash, the folder was handed to the
        // kernel inside the name, where a link is followed.
        try FileManager.default.createDirectory(atPath: home.file("outside"), withIntermediateDirectories: true)
        #expect(symlink(home.file("outside"), root + "/linked") == 0)
        let (linked, linkCode) = DownloadDirectory.openFile(root + "/linked/\u{301}y.part", root: root)
        #expect(linked < 0 && (linkCode == ELOOP || linkCode == ENOTDIR))
        if linked >= 0 { close(linked) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.file("outside")) == [])
    }

    /// The listener serves a file whose name begins with a combining mark: it is below its root by its bytes.
    @Test func aFileNamedWithALeadingCombiningMarkIsServed() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let root = home.file("episodes")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let path = root + "/\u{301}x.mp3"
        try Data("audio".utf8).write(to: URL(fileURLWithPath: path))
        let opened = ServedFile.open(ServableFile(path: path, root: root, announcedType: nil))
        #expect(opened?.facts.size == 5)
        if let opened { close(opened.descriptor) }
        #expect(ServedFile.open(ServableFile(path: home.file("elsewhere.mp3"), root: root, announcedType: nil)) == nil)
    }

    @Test func aLinkAtTheLastNameIsRefusedAndRemovingItLeavesItsTarget() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let root = home.file("episodes")
        try FileManager.default.createDirectory(atPath: root + "/pod", withIntermediateDirectories: true)
        let victim = home.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, root + "/pod/x.part") == 0)

        let (fd, code) = DownloadDirectory.openFile(root + "/pod/x.part", root: root)
        #expect(fd < 0 && code == ELOOP)
        #expect(DownloadDirectory.status(root + "/pod/x.part", root: root).map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(DownloadDirectory.remove(root + "/pod/x.part", root: root) == 0)
        #expect(sameBytes(FileManager.default.contents(atPath: victim), Data("precious".utf8)))
    }

    @Test func aFolderLinkBelowTheRootIsRefusedButTheRootItselfMayBeALink() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let real = home.file("real")
        try FileManager.default.createDirectory(atPath: real + "/inside", withIntermediateDirectories: true)
        #expect(symlink(real, home.file("episodes")) == 0)
        #expect(symlink(real + "/inside", real + "/linked") == 0)
        let root = home.file("episodes")

        let (fd, code) = DownloadDirectory.openFile(root + "/linked/y.part", root: root)
        #expect(fd < 0 && (code == ELOOP || code == ENOTDIR))
        #expect(DownloadDirectory.remove(root + "/linked/y.part", root: root) != 0)
        let (inside, _) = DownloadDirectory.openFile(root + "/inside/y.part", root: root)
        #expect(inside >= 0)
        if inside >= 0 { close(inside) }
        #expect(FileManager.default.fileExists(atPath: real + "/inside/y.part"))
        #expect(DownloadDirectory.open(root + "/inside/../linked", root: root).errno == EINVAL)
    }

    @Test func missingFoldersBelowTheRootAreMadeWithoutFollowingALink() throws {
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        let root = home.file("episodes")
        let (fd, _) = DownloadDirectory.open(root + "/a/b", root: root, create: true)
        #expect(fd >= 0)
        if fd >= 0 { close(fd) }
        #expect(FileManager.default.fileExists(atPath: root + "/a/b"))
        try FileManager.default.createDirectory(atPath: home.file("outside"), withIntermediateDirectories: true)
        #expect(symlink(home.file("outside"), root + "/c") == 0)
        #expect(DownloadDirectory.open(root + "/c/d", root: root, create: true).fd < 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.file("outside")) == [])
    }

    /// `use_trash = true` and a Trash that cannot take the file: the file stays, and so does its download, in the
    /// queue's table and in the store (it is there after a restart).
    @Test func aFileTheTrashRefusesKeepsItsDownload() async throws {
        let nginx = try NginxServer()
        let data = Data(repeating: 0x43, count: 4096)
        let url = try nginx.serve(data, as: "c.bin")
        let home = try TemporaryDirectory(prefix: "singlecast-dir-test")
        // The home trash, on the file's file system, cannot be used: its `files` is a plain file.
        try FileManager.default.createDirectory(atPath: home.file("data/Trash/info"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: home.file("data/Trash/files")))
        var settings = QueueSettings()
        settings.disposal = FileDisposal(trash: Trash(home: home.file("data/Trash")))
        let engine = try HTTPEngine()
        engine.start()
        let (queue, store) = try makeQueue(home, engine: engine, settings: settings)
        let queued = try await queue.enqueue([DownloadRequest(url: url, directory: home.file("episodes"))])
        let id = queued[0].id
        let done = try await runUntilDone(queue, id)
        #expect(done.state == .completed)

        let outcome = try await queue.discard([id], deleteFiles: true, reason: "played")
        await engine.stop()
        #expect(outcome.deleted.isEmpty && outcome.refused[id]?.contains("Trash") == true, "\(outcome)")
        #expect(sameBytes(FileManager.default.contents(atPath: done.file), data))
        #expect(try await queue.show(id).state == .completed)
        #expect(try await store.downloads(in: .completed).map(\.id) == [id])
        try await store.close()
    }
}
