/// Downloads and the answer to `enqueue` written straight into bytes (``JSONByteWritable``), the same bytes
/// `WireCoding`'s encoder writes: a `downloads` answer of 300 downloads spent two thirds of its time in `JSONEncoder`,
/// every `download.*` event (several per download of a small file) went through it too, and it took a sixth of the
/// cooperative pool's CPU in an enqueue of 10,000 episodes (`perf record`). Each `switch` over the keys is
/// exhaustive, so a new field cannot be forgotten here.
extension DownloadInfo: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .id: writer.member(key, id)
            case .url: writer.member(key, url)
            case .finalURL: writer.member(key, finalURL)
            case .file: writer.member(key, file)
            case .state: writer.member(key, state.rawValue)
            case .pauseReason: writer.member(key, pauseReason)
            case .resumesAt: writer.member(key, resumesAt)
            case .now: writer.member(key, now)
            case .priority: writer.member(key, priority)
            case .position: writer.member(key, position)
            case .bytesDone: writer.member(key, bytesDone)
            case .bytesTotal: writer.member(key, bytesTotal)
            case .speed: try writer.member(key, speed)
            case .etaSeconds: try writer.member(key, etaSeconds)
            case .stalledSince: writer.member(key, stalledSince)
            case .attempts: writer.member(key, attempts)
            case .lastError: try writer.member(key, lastError)
            case .nextRetryAt: writer.member(key, nextRetryAt)
            case .addedAt: writer.member(key, addedAt)
            case .completedAt: writer.member(key, completedAt)
            case .headerNames:
                writer.key(key)
                writer.strings(headerNames)
            case .hasCredentials: writer.member(key, hasCredentials)
            case .episode: try writer.member(key, episode)
            case .waitingForHost: writer.member(key, waitingForHost)
            }
        }
        writer.endObject()
    }
}

extension DownloadErrorInfo: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .code: writer.member(key, code)
            case .message: writer.member(key, message)
            case .httpStatus: writer.member(key, httpStatus)
            }
        }
        writer.endObject()
    }
}

extension DownloadEpisode: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .id: writer.member(key, id)
            case .title: writer.member(key, title)
            case .podcastID: writer.member(key, podcastID)
            case .podcast: writer.member(key, podcast)
            }
        }
        writer.endObject()
    }
}

extension DownloadsResult: JSONByteWritable {
    /// The one key of its synthesized coding keys, which are private to its declaration.
    private enum Key: String, CodingKey { case downloads }

    package func write(to writer: inout JSONByteWriter) throws {
        try writer.object(Key.downloads, array: downloads)
    }
}

extension DownloadEventParams: JSONByteWritable {
    private enum Key: String, CodingKey { case download }

    package func write(to writer: inout JSONByteWriter) throws {
        try writer.object(Key.download, download)
    }
}

extension EnqueueResult.Entry: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .id: writer.member(key, id)
            case .url: writer.member(key, url)
            case .existing: writer.member(key, existing)
            case .file: writer.member(key, file)
            case .state: writer.member(key, state?.rawValue)
            case .pauseReason: writer.member(key, pauseReason)
            case .episode:
                guard let episode else { continue }
                writer.key(key)
                episode.write(to: &writer)
            }
        }
        writer.endObject()
    }
}

extension EnqueueResult: JSONByteWritable {
    /// The one key of its synthesized coding keys, which are private to its declaration.
    private enum Key: String, CodingKey { case downloads }

    package func write(to writer: inout JSONByteWriter) throws {
        try writer.object(Key.downloads, array: downloads)
    }
}
