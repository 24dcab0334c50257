import FoundationEssentials

/// Why a feed or OPML document could not be read.
///
/// The ``code`` is stable and meant for programs; the ``message`` says what failed and how to fix it.
package struct FeedError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// Stable failure kinds.
    package enum Code: String, Sendable, Hashable, Codable {
        /// The bytes are not well-formed XML.
        case notXML = "not_xml"
        /// Well-formed XML (or HTML, JSON…) that is not an RSS or Atom feed.
        case notAFeed = "not_a_feed"
        /// The document is not an OPML subscription list.
        case notOPML = "not_opml"
        /// The document declares DTD entities; they are never expanded or fetched.
        case entityRefused = "entity_refused"
        /// The document is larger than ``FeedParser/Limits/maxBytes``.
        case tooLarge = "too_large"
        /// Elements nest deeper than ``FeedParser/Limits/maxDepth``.
        case tooDeep = "too_deep"
        /// The declared character encoding is not one the parser can decode.
        case unsupportedEncoding = "unsupported_encoding"
    }

    package var code: Code
    package var message: String

    package init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
    package var errorDescription: String? { message }

    static func notXML(_ what: String, at position: TextPosition?) -> FeedError {
        let place = position.map { " at line \($0.line), column \($0.column)" } ?? ""
        return FeedError(
            code: .notXML,
            message: "The document is not well-formed XML: \(what)\(place). Check that the URL serves the feed itself."
        )
    }

    static func notAFeed(_ what: String) -> FeedError {
        FeedError(code: .notAFeed, message: what)
    }

    static let entityRefused = FeedError(
        code: .entityRefused,
        message:
            "The document declares entities in its DOCTYPE (<!ENTITY …>). Entities are never expanded or fetched, "
            + "as a defence against entity-expansion bombs and external-entity reads; the feed's publisher must "
            + "remove the declarations."
    )

    static func tooLarge(_ size: Int, limit: Int) -> FeedError {
        FeedError(
            code: .tooLarge,
            message: "The document is \(size) bytes, more than the limit of \(limit) bytes. Raise the limit "
                + "if this feed is genuine."
        )
    }

    static func tooDeep(_ limit: Int, at position: TextPosition) -> FeedError {
        FeedError(
            code: .tooDeep,
            message: "Elements nest more than \(limit) levels deep at line \(position.line), column "
                + "\(position.column); no feed needs this, so the document is refused."
        )
    }

    static func unsupportedEncoding(_ label: String) -> FeedError {
        FeedError(
            code: .unsupportedEncoding,
            message: "The document declares the encoding \"\(label)\", which is not supported (UTF-8, UTF-16, "
                + "US-ASCII, ISO-8859-1, ISO-8859-15 and windows-1252 are), and it is not valid UTF-8 either."
        )
    }
}

/// A 1-based line and column (in bytes) in a document, for error messages.
struct TextPosition: Hashable, Sendable {
    var line: Int
    var column: Int

    init(offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        var index = 0
        while index < end {
            if bytes[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        self.line = line
        self.column = end - lineStart + 1
    }
}
