import SinglecastCLI
import SinglecastProtocol
import SinglecastSupport
import Testing

/// How `singlecastctl trash` prints what singlecast put in the Trash.
@Suite struct TrashCommandRenderTests {
    private func file(_ index: Int) -> TrashedFileInfo {
        TrashedFileInfo(
            id: "0000000\(index % 10)",
            file: "/t/files/\(index).mp3",
            original: "/e/Show/\(index).mp3",
            size: 1000,
            trashedAt: "2026-12-01T10:00:00Z",
            episode: Int64(index),
            episodeTitle: "Talk \(index)",
            podcast: 3,
            podcastTitle: "Show"
        )
    }

    @Test func aLongListIsSummarisedAfterItsFirstRows() {
        let files = (1...53).map(file)
        let text = TrashCommand.render(
            TrashResult(files: files, totalBytes: 53_000, useTrash: true),
            timeZone: .utc
        )
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1 + 50 + 2)
        #expect(lines[0].hasPrefix("ID        DELETED           SIZE    PODCAST  EPISODE     ORIGINAL"))
        #expect(lines[1] == "00000001  2026-12-01 10:00  1.0 kB  Show     1 Talk 1    /e/Show/1.mp3")
        #expect(lines[51] == "… and 3 more ('--json' lists them all)")
        #expect(lines[52] == "53 file(s), 53.0 kB in the Trash.")
    }

    @Test func anEmptyTrashAndUseTrashOffSaySo() {
        #expect(
            TrashCommand.render(TrashResult(files: [], totalBytes: 0, useTrash: true))
                == "singlecast has nothing in the Trash.\n"
        )
        #expect(
            TrashCommand.render(TrashResult(files: [], totalBytes: 0, useTrash: false))
                == "use_trash is off: deleted files are deleted for good, not put in the Trash.\n"
        )
    }
}
