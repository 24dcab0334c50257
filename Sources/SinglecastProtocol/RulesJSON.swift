/// The answer of `rules` written straight into bytes (``JSONByteWritable``), the same bytes `WireCoding`'s encoder
/// writes: a podcast of 5,000 episodes lists thousands as skipped, and `JSONEncoder` took longer over them than the
/// rules did.
extension RulesResult: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) throws {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .podcast: try writer.member(key, podcast)
            case .dryRun: writer.member(key, dryRun)
            // Encoded as its text (``AutoDownload/encode(to:)``).
            case .autoDownload: writer.member(key, autoDownload.description)
            case .keep: writer.member(key, keep)
            case .rules:
                writer.key(key)
                try writer.array(rules)
            case .download:
                writer.key(key)
                try writer.array(download)
            case .delete:
                writer.key(key)
                try writer.array(delete)
            case .skipped:
                writer.key(key)
                try writer.array(skipped)
            }
        }
        writer.endObject()
    }
}

extension RulesResult.Rule: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .key: writer.member(key, self.key)
            case .value: writer.member(key, value)
            case .source: writer.member(key, source)
            }
        }
        writer.endObject()
    }
}

extension RulesResult.Episode: JSONByteWritable {
    private static let keysInWireOrder = JSONKeyTable<CodingKeys>.sorted

    package func write(to writer: inout JSONByteWriter) {
        writer.beginObject()
        for key in Self.keysInWireOrder {
            switch key {
            case .id: writer.member(key, id)
            case .title: writer.member(key, title)
            case .published: writer.member(key, published)
            case .reason: writer.member(key, reason)
            }
        }
        writer.endObject()
    }
}
