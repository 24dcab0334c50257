/// An entity tag (RFC 9110 §8.8.3): the validator of a feed's bytes or a file, and the comparisons the conditional
/// headers ask for.
package struct EntityTag: Sendable, Hashable {
    /// Between the quotes.
    package var opaque: String
    package var weak: Bool

    package init(opaque: String, weak: Bool = false) {
        self.opaque = opaque
        self.weak = weak
    }

    /// `"…"` or `W/"…"`; `nil` unless the whole text is one well-formed tag.
    package init?(parsing text: some StringProtocol) {
        var rest = Substring(text)
        weak = rest.hasPrefix("W/")
        if weak { rest = rest.dropFirst(2) }
        guard rest.count >= 2, rest.first == "\"", rest.last == "\"" else { return nil }
        let inside = rest.dropFirst().dropLast()
        // etagc: %x21 / %x23-7E / obs-text; no quote, no space, no control.
        guard inside.utf8.allSatisfy({ $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F) }) else { return nil }
        opaque = String(inside)
    }

    /// The header form.
    package var header: String { (weak ? "W/" : "") + "\"" + opaque + "\"" }

    /// A strong tag of `bytes`: two documents of the same bytes have the same tag, on any run of the daemon.
    package static func hashing(_ bytes: [UInt8]) -> EntityTag {
        // FNV-1a over 128 bits: not a defence against a chosen collision (the bytes are the daemon's own), and
        // wide enough that two versions of a feed never meet by chance.
        var hash: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
        let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B
        for byte in bytes {
            hash ^= UInt128(byte)
            hash &*= prime
        }
        let hex = String(hash, radix: 16)
        return EntityTag(opaque: String(repeating: "0", count: 32 - hex.count) + hex)
    }

    /// Strong comparison: both strong and the same (for `If-Range`).
    package func strongMatch(_ other: EntityTag) -> Bool {
        !weak && !other.weak && opaque == other.opaque
    }

    /// Weak comparison: the same, whether weak or not (for `If-None-Match`).
    package func weakMatch(_ other: EntityTag) -> Bool { opaque == other.opaque }

    /// `If-None-Match` on a GET or HEAD of the representation tagged `current`: `true` when it matches (`*`, or a
    /// tag of the list by weak comparison), so the answer is 304. A malformed header is ignored (`false`).
    package static func noneMatch(_ header: String, current: EntityTag) -> Bool {
        let value = header.trimmingOWS
        if value == "*" { return true }
        guard let tags = list(value) else { return false }
        return tags.contains { $0.weakMatch(current) }
    }

    /// The tags of a `#entity-tag` list; `nil` when an element is not a tag. A comma may sit inside a tag's quotes.
    package static func list(_ text: some StringProtocol) -> [EntityTag]? {
        var tags: [EntityTag] = []
        var element = ""
        var quoted = false
        func finish() -> Bool {
            let trimmed = element.trimmingOWS
            element = ""
            if trimmed.isEmpty { return true }
            guard let tag = EntityTag(parsing: trimmed) else { return false }
            tags.append(tag)
            return true
        }
        for character in text {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                guard finish() else { return nil }
            } else {
                element.append(character)
            }
        }
        guard !quoted, finish(), !tags.isEmpty else { return nil }
        return tags
    }
}
