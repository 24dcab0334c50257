import SinglecastSupport

/// Whether a completed download is the media it was announced as, judged from libmagic's MIME type of its first
/// bytes.
///
/// Pure, so every combination is a unit test without libmagic. Only one thing fails a download: media announced and
/// text received (an HTML error page, a JSON or XML error document saved as `.mp3`). A wrong but plausible type is
/// accepted with a note, since feeds and servers often name the type loosely and libmagic does not know every stream.
package enum MediaCheck {
    /// What a download was announced as: its podcast episode's enclosure `type`, else the response's
    /// `Content-Type`, and the extension of its URL or file name.
    package struct Announcement: Equatable, Sendable {
        /// A MIME type, lower-cased and without parameters; `nil` when none was given.
        package var type: String?
        /// A media extension (`mp3`, `m4a`…) of the URL's path or the file name, lower-cased; `nil` when neither has
        /// one.
        package var mediaExtension: String?

        /// - Parameters:
        ///   - enclosureType: The `type` of the episode's enclosure, when the download came from a podcast episode.
        ///   - contentType: The response's `Content-Type`, used when no enclosure type is known.
        ///   - url: The URL downloaded (the query and fragment are ignored).
        ///   - fileName: The download's file name.
        package init(enclosureType: String?, contentType: String?, url: String, fileName: String) {
            type = Self.normalized(enclosureType) ?? Self.normalized(contentType)
            let path = url.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            mediaExtension = [Self.fileExtension(Substring(path)), Self.fileExtension(Substring(fileName))].lazy
                .compactMap { $0 }.first { MediaCheck.mediaExtensions[$0] != nil }
        }

        /// Whether audio or video was announced; only then is the file checked.
        package var isMedia: Bool {
            type.map(MediaCheck.isMediaType) == true || mediaExtension != nil
        }

        /// The announcement as messages show it: the media type, else the extension (`.mp3`), else the type.
        var shown: String {
            if let type, MediaCheck.isMediaType(type) { return type }
            if let mediaExtension { return "." + mediaExtension }
            return type ?? "nothing"
        }

        /// The family of media expected (``MediaCheck/family(_:)``), `nil` when none was announced.
        var family: String? {
            if let type, MediaCheck.isMediaType(type) { return MediaCheck.family(type) }
            return mediaExtension.flatMap { MediaCheck.mediaExtensions[$0] }
        }

        package static func normalized(_ type: String?) -> String? {
            guard var type else { return nil }
            if let bare = type.withUTF8(normalizedASCII) { return bare.isEmpty ? nil : bare }
            return normalizedText(type)
        }

        /// ``normalized(_:)`` for any text: the first non-empty `;`-separated part, trimmed and lower-cased.
        package static func normalizedText(_ type: String) -> String? {
            let bare = type.split(separator: ";", maxSplits: 1).first.map { $0.trimmingWhitespace() } ?? ""
            return bare.isEmpty ? nil : bare.lowercased()
        }

        /// What ``normalizedText(_:)`` makes of ASCII text, read as bytes; `nil` for other text. Each completed
        /// download asks twice, and splitting, trimming and lower-casing `Character`s cost about 6 k instructions a
        /// time.
        private static func normalizedASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            // `split` skips the empty parts before the first one that holds anything, even spaces.
            var start = bytes.firstIndex { $0 != UInt8(ascii: ";") } ?? bytes.endIndex
            var end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
            // The ASCII white space of Unicode: tab, line feed, vertical tab, form feed, carriage return, space.
            func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || (0x09...0x0D).contains(byte) }
            while start < end, isSpace(bytes[start]) { start += 1 }
            while end > start, isSpace(bytes[end - 1]) { end -= 1 }
            let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
            return String(unsafeUninitializedCapacity: part.count) { buffer in
                for (index, byte) in part.enumerated() {
                    buffer[index] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                }
                return part.count
            }
        }

        /// The extension of the last non-empty component of `path`. Read as bytes: every completed download asks,
        /// and splitting its URL and file name into `Character`s cost about 25 k instructions per download.
        private static func fileExtension(_ path: Substring) -> String? {
            let bytes = path.utf8
            var end = bytes.endIndex
            while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") {
                end = bytes.index(before: end)
            }
            let name = bytes[..<end]
            guard let dot = name.lastIndex(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "/") }),
                name[dot] == UInt8(ascii: "."), name.index(after: dot) != name.endIndex
            else { return nil }
            return Substring(name[name.index(after: dot)...]).lowercased()
        }
    }

    package enum Verdict: Equatable, Sendable {
        case accept
        /// Accepted, but not quite what was announced: the note is logged.
        case acceptWithNote(String)
        /// Text arrived where media was announced: the download fails.
        case reject(DownloadFailure)
    }

    /// Judges the MIME type libmagic `detected` (`MAGIC_MIME_TYPE`) against the announcement.
    package static func verdict(_ announced: Announcement, detected: String) -> Verdict {
        guard announced.isMedia else { return .accept }
        let detected = detected.lowercased()
        if isText(detected) { return .reject(.notMedia(announced: announced.shown, received: detected)) }
        let note = "announced \(announced.type ?? announced.shown) but received \(describe(detected))"
        // libmagic says octet-stream for streams it has no rule for (an MP3 that starts mid-frame): no news.
        guard detected != "application/octet-stream" else { return .accept }
        guard isMediaType(detected), family(detected) == announced.family else { return .acceptWithNote(note) }
        // The extension was right, but the type said something vaguer (application/octet-stream).
        if let type = announced.type, !isMediaType(type) { return .acceptWithNote(note) }
        return .accept
    }

    /// What libmagic's MIME type means to a reader: "an HTML page (text/html)".
    package static func describe(_ detected: String) -> String {
        switch detected {
        case "text/html", "application/xhtml+xml": "an HTML page (\(detected))"
        case "application/json": "a JSON document (\(detected))"
        case "text/xml", "application/xml": "an XML document (\(detected))"
        case "text/plain": "a text file (\(detected))"
        case "application/x-empty", "inode/x-empty": "an empty file (\(detected))"
        case _ where detected.hasPrefix("text/"): "text (\(detected))"
        default: detected
        }
    }

    static func isMediaType(_ type: String) -> Bool {
        type.hasPrefix("audio/") || type.hasPrefix("video/") || type == "application/ogg"
    }

    /// Text, as error pages are: libmagic names every text `text/…` except these.
    static func isText(_ type: String) -> Bool {
        type.hasPrefix("text/") || textApplicationTypes.contains(type)
    }

    private static let textApplicationTypes: Set<String> = [
        "application/xhtml+xml", "application/json", "application/xml", "application/javascript",
        "application/x-javascript", "application/rss+xml", "application/atom+xml",
    ]

    /// Types that are one kind of file under several names (an M4A is video/mp4 to some, audio/x-m4a to libmagic).
    static func family(_ type: String) -> String {
        switch type {
        case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg", "audio/x-mp3", "audio/x-mpeg-3", "audio/mpa":
            "mp3"
        case "audio/mp4", "audio/m4a", "audio/x-m4a", "audio/x-m4b", "audio/x-m4p", "video/mp4", "video/x-m4v",
            "video/quicktime", "audio/mp4a-latm":
            "mp4"
        case "audio/ogg", "video/ogg", "application/ogg", "audio/opus", "audio/vorbis", "audio/x-vorbis+ogg",
            "audio/x-opus+ogg", "audio/x-ogg":
            "ogg"
        case "audio/aac", "audio/aacp", "audio/x-aac", "audio/x-hx-aac-adts": "aac"
        case "audio/flac", "audio/x-flac": "flac"
        case "audio/wav", "audio/wave", "audio/x-wav", "audio/vnd.wave": "wav"
        case "video/webm", "audio/webm", "video/x-matroska", "audio/x-matroska": "webm"
        default: type
        }
    }

    /// Media file extensions and the family (``family(_:)``) each stands for.
    static let mediaExtensions: [String: String] = [
        "mp3": "mp3", "m4a": "mp4", "m4b": "mp4", "mp4": "mp4", "m4v": "mp4", "mov": "mp4", "ogg": "ogg",
        "oga": "ogg", "ogv": "ogg", "opus": "ogg", "aac": "aac", "flac": "flac", "wav": "wav", "webm": "webm",
        "mka": "webm", "mkv": "webm",
    ]
}
