import FoundationEssentials
import SinglecastFeeds

/// How a GET or HEAD of an opened file is answered: status, headers and which bytes, decided from the request's
/// conditional and range headers and the file's facts. The route opens the file and sends what this says.
package struct FileAnswer: Sendable {
    /// What the route learnt of the open file with `fstat`.
    package struct Facts: Sendable, Hashable {
        package var size: UInt64
        /// Seconds since 1970.
        package var modified: Int64
        package var modifiedNanoseconds: Int64
        package var device: UInt64
        package var inode: UInt64

        package init(size: UInt64, modified: Int64, modifiedNanoseconds: Int64 = 0, device: UInt64, inode: UInt64) {
            self.size = size
            self.modified = modified
            self.modifiedNanoseconds = modifiedNanoseconds
            self.device = device
            self.inode = inode
        }

        /// Changes whenever the file is replaced or rewritten (another inode, size or modification time).
        package var etag: EntityTag {
            EntityTag(
                opaque: [device, inode, size].map { String($0, radix: 16) }.joined(separator: "-") + "-"
                    + String(modified, radix: 16) + "." + String(modifiedNanoseconds, radix: 16)
            )
        }

        package var lastModified: String {
            FeedDate.rfc822String(Date(timeIntervalSince1970: TimeInterval(modified)))
        }
    }

    package var status: Int
    package var headers: [(name: String, value: String)]
    /// The bytes to send, or `nil` for none (304, 416).
    package var bytes: (offset: UInt64, length: UInt64)?

    /// The answer to a GET (`isGet`) or HEAD of a file described by `facts`, of media type `contentType`.
    package init(isGet: Bool, headers request: [String: String], facts: Facts, contentType: String) {
        let etag = facts.etag
        let lastModified = facts.lastModified
        var headers: [(name: String, value: String)] = [
            ("Content-Type", contentType),
            ("Accept-Ranges", "bytes"),
            ("ETag", etag.header),
            ("Last-Modified", lastModified),
            // The files are a stranger's bytes served from the web view's origin: never run as a page of it.
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", "sandbox"),
        ]
        if let condition = request["if-none-match"], EntityTag.noneMatch(condition, current: etag) {
            self.init(status: 304, headers: headers.filter { $0.name != "Content-Type" }, bytes: nil)
            return
        }
        // A HEAD is answered as its GET would be without ranges (RFC 9110 §14.2: only GET has them).
        let outcome = ByteRanges.decide(
            range: isGet ? request["range"] : nil,
            ifRange: request["if-range"],
            length: facts.size,
            etag: etag,
            lastModified: lastModified
        )
        switch outcome {
        case .full:
            self.init(status: 200, headers: headers, bytes: (0, facts.size))
        case .partial(let offset, let length):
            headers.append(
                ("Content-Range", ByteRanges.contentRange(offset: offset, length: length, of: facts.size))
            )
            self.init(status: 206, headers: headers, bytes: (offset, length))
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(facts.size)"))
            self.init(status: 416, headers: headers.filter { $0.name != "Content-Type" }, bytes: nil)
        }
    }

    private init(status: Int, headers: [(name: String, value: String)], bytes: (offset: UInt64, length: UInt64)?) {
        self.status = status
        self.headers = headers
        self.bytes = bytes
    }
}

/// The `Content-Type` of a served file: the type its feed announced when that is a well-formed audio, video or image
/// type, else one known for its extension, else `application/octet-stream`. No feed makes a file `text/html`.
package enum MediaType {
    package static func of(name: String, announced: String?) -> String {
        if let announced = announced.map({ String($0.trimmingOWS) }), isWellFormed(announced) {
            return announced
        }
        let ext = name.lastIndex(of: ".").map { name[name.index(after: $0)...].lowercased() } ?? ""
        return byExtension[ext] ?? "application/octet-stream"
    }

    private static let byExtension: [String: String] = [
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "m4b": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg",
        "oga": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac", "wav": "audio/wav", "mp4": "video/mp4",
        "m4v": "video/x-m4v", "mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska",
        "pdf": "application/pdf", "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
        "webp": "image/webp", "gif": "image/gif", "json": "application/json", "vtt": "text/vtt",
        "srt": "application/x-subrip",
    ]

    /// `audio|video|image/subtype`, tokens only, no parameters: an announced type is a feed's text and becomes a header.
    private static func isWellFormed(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, text.utf8.count <= 127, ["audio", "video", "image"].contains(parts[0].lowercased())
        else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty
                && part.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                        || "!#$&-^_.+".utf8.contains(byte)
                }
        }
    }
}
