import Foundation
import SinglecastDaemon
import SinglecastTestServers
import Testing

/// `MediaCheck`: what the announced type and libmagic's MIME type make of a completed download, without libmagic.
@Suite struct MediaCheckTests {
    private func announced(
        enclosure: String? = nil,
        contentType: String? = nil,
        url: String = "http://cdn.example/episode",
        fileName: String = "episode"
    ) -> MediaCheck.Announcement {
        MediaCheck.Announcement(enclosureType: enclosure, contentType: contentType, url: url, fileName: fileName)
    }

    @Test(arguments: ["text/html", "application/xhtml+xml", "text/plain", "text/xml", "application/json"])
    func textWhereAudioWasAnnouncedIsRejected(detected: String) {
        let verdict = MediaCheck.verdict(announced(contentType: "audio/mpeg"), detected: detected)
        #expect(verdict == .reject(.notMedia(announced: "audio/mpeg", received: detected)))
    }

    /// The bytewise reading of an ASCII type gives what the reading of any text gives.
    @Test(arguments: [
        "audio/mpeg", "Audio/MPEG", " audio/mpeg ", "\taudio/mpeg\r\n", "audio/mpeg; charset=binary", ";audio/mpeg",
        ";;Audio/Mp4;x", " ;audio/mpeg", ";", ";;", "", " ", "\u{0B}\u{0C}video/MP4\u{0B}", "audio/mpeg;", "a b ; c",
        "\u{1F}audio/mpeg\u{1C}", "AUDIO/X-M4A ;codecs=\"mp4a\"", "\"audio/mpeg\"",
    ])
    func anASCIITypeIsNormalizedAsAnyTextIs(type: String) {
        #expect(MediaCheck.Announcement.normalized(type) == MediaCheck.Announcement.normalizedText(type))
    }

    @Test func aTypeBeyondASCIIIsNormalizedAsText() {
        #expect(MediaCheck.Announcement.normalized("\u{A0}Audio/MPEG\u{200B}; x") == "audio/mpeg")
        #expect(MediaCheck.Announcement.normalized("AUDIO/ÉTÉ") == "audio/été")
    }

    @Test func theMessageSaysWhatWasAnnouncedAndWhatArrived() {
        let html = DownloadFailure.notMedia(announced: "audio/mpeg", received: "text/html")
        #expect(html.info.message == "announced audio/mpeg but received an HTML page (text/html)")
        let json = DownloadFailure.notMedia(announced: ".m4a", received: "application/json")
        #expect(json.info.message == "announced .m4a but received a JSON document (application/json)")
    }

    @Test func theEnclosureTypeWinsOverTheResponsesContentType() {
        let both = announced(enclosure: "video/mp4", contentType: "text/html; charset=utf-8")
        #expect(both.type == "video/mp4")
        #expect(announced(enclosure: "", contentType: "Audio/MPEG; charset=x").type == "audio/mpeg")
        let verdict = MediaCheck.verdict(both, detected: "text/html")
        #expect(verdict == .reject(.notMedia(announced: "video/mp4", received: "text/html")))
    }

    @Test(arguments: [
        ("http://cdn.example/e.mp3?x=1.html", "e.mp3"), ("http://cdn.example/e.M4A#t", "x"),
        ("http://cdn.example/e", "Episode 1.opus"), ("http://cdn.example/a.b/feed.ogg", "x"),
        ("http://cdn.example/e.mp3/", "x"), ("http://cdn.example/e.mp3//", "e"),
    ])
    func aMediaExtensionAnnouncesMediaWhateverTheType(url: String, fileName: String) {
        let plain = announced(contentType: "application/octet-stream", url: url, fileName: fileName)
        #expect(plain.isMedia)
        guard case .reject = MediaCheck.verdict(plain, detected: "text/html") else {
            Issue.record("an HTML page was kept as \(fileName)")
            return
        }
    }

    @Test(arguments: ["file.pdf", "archive.zip", "notes.txt", "page.html", "noextension"])
    func nothingIsCheckedWhenNothingMediaLikeWasAnnounced(name: String) {
        let plain = announced(contentType: "application/octet-stream", url: "http://h/" + name, fileName: name)
        #expect(!plain.isMedia)
        #expect(MediaCheck.verdict(plain, detected: "text/html") == .accept)
        let typed = announced(contentType: "text/html", url: "http://h/" + name, fileName: name)
        #expect(MediaCheck.verdict(typed, detected: "text/html") == .accept)
    }

    @Test(arguments: [
        ("audio/mpeg", "audio/mpeg"), ("audio/mp3", "audio/mpeg"), ("audio/x-m4a", "video/mp4"),
        ("video/mp4", "audio/x-m4a"), ("audio/ogg", "audio/ogg"), ("audio/opus", "audio/ogg"),
        ("audio/mpeg", "application/octet-stream"),
    ])
    func theAnnouncedMediaIsAccepted(type: String, detected: String) {
        #expect(MediaCheck.verdict(announced(enclosure: type), detected: detected) == .accept)
    }

    @Test func plausibleButWrongMediaIsAcceptedWithANote() {
        let mp4 = MediaCheck.verdict(announced(enclosure: "video/mp4"), detected: "audio/mpeg")
        #expect(mp4 == .acceptWithNote("announced video/mp4 but received audio/mpeg"))
        let octets = announced(contentType: "application/octet-stream", url: "http://h/e.mp3", fileName: "e.mp3")
        #expect(
            MediaCheck.verdict(octets, detected: "audio/mpeg")
                == .acceptWithNote("announced application/octet-stream but received audio/mpeg")
        )
        let image = MediaCheck.verdict(announced(enclosure: "audio/mpeg"), detected: "image/jpeg")
        #expect(image == .acceptWithNote("announced audio/mpeg but received image/jpeg"))
        let byExtension = announced(url: "http://h/e.mp3", fileName: "e.mp3")
        #expect(byExtension.type == nil)
        #expect(MediaCheck.verdict(byExtension, detected: "audio/mpeg") == .accept)
        #expect(
            MediaCheck.verdict(byExtension, detected: "video/mp4")
                == .acceptWithNote("announced .mp3 but received video/mp4")
        )
    }
}

/// libmagic itself, on real bytes: what `MediaCheck` is fed.
@Suite struct MediaSnifferTests {
    private func mimeType(_ bytes: [UInt8]) throws -> String {
        try MediaSniffer.mimeType(of: bytes[...])
    }

    @Test func anHTMLPageIsTextHTML() throws {
        let page = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>Gone</body></html>\n"
        #expect(try mimeType(Array(page.utf8)) == "text/html")
    }

    @Test func anMPEGFrameHeaderIsAudioMPEG() throws {
        #expect(try mimeType(Array(TestContent.mp3(count: 4096, filler: UInt8(ascii: "a")))) == "audio/mpeg")
    }

    @Test func anID3TagBeforeTheFramesIsAudioMPEG() throws {
        let tag: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10)
        let frame = TestContent.mpegFrameHeader + [UInt8](repeating: 0x55, count: 413)
        #expect(try mimeType(tag + Array((0..<20).map { _ in frame }.joined())) == "audio/mpeg")
    }

    @Test func anMP4FtypBoxIsVideoMP4() throws {
        let box: [UInt8] = [0, 0, 0, 0x20] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2avc1mp41".utf8)
        #expect(try mimeType(box + [UInt8](repeating: 0, count: 4096)) == "video/mp4")
    }

    @Test func aJSONErrorIsApplicationJSON() throws {
        #expect(try mimeType(Array(#"{"error": "NoSuchKey", "message": "not found"}"#.utf8)) == "application/json")
    }

    @Test func theFileIsReadFromItsStart() async throws {
        let home = try TemporaryDirectory(prefix: "singlecast-magic")
        let path = home.file("page.mp3.part")
        try Data("<html><body><p>Moved</p></body></html>\n".utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(try await MediaSniffer.mimeType(ofFile: fd).get() == "text/html")
    }
}
