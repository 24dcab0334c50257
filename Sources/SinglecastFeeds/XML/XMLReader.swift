import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Namespaces the feed and OPML readers know, resolved from `xmlns` declarations.
///
/// Real feeds often use `itunes:`, `podcast:`, `content:` or `media:` without declaring them, so an
/// undeclared prefix is matched by its literal spelling (see ``XMLReader/literalNamespace(_:)``).
enum XMLNamespace: UInt8, Sendable {
    /// No namespace: RSS elements and unprefixed attributes.
    case none
    case atom
    case itunes
    case podcast
    case content
    case media
    case psc
    case dc
    case rdf
    /// The `xml:` prefix (`xml:base`, `xml:lang`).
    case xml
    /// Any namespace the readers do not use.
    case other

    /// The namespace a URI names.
    ///
    /// Matching ignores case and a trailing slash: feeds spell the iTunes URI with `/dtds/` and `/DTDs/`,
    /// and Media RSS with and without the final `/`.
    init(uri: String) {
        var key = uri.trimmed.lowercased()
        if key.hasSuffix("/") { key.removeLast() }
        if let schemeEnd = key.firstRange(of: "://") { key = String(key[schemeEnd.upperBound...]) }
        switch key {
        case "www.w3.org/2005/atom": self = .atom
        case "www.itunes.com/dtds/podcast-1.0.dtd": self = .itunes
        case "podcastindex.org/namespace/1.0",
            "github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md":
            self = .podcast
        case "purl.org/rss/1.0/modules/content": self = .content
        case "search.yahoo.com/mrss": self = .media
        case "podlove.org/simple-chapters": self = .psc
        case "purl.org/dc/elements/1.1": self = .dc
        case "www.w3.org/1999/02/22-rdf-syntax-ns#": self = .rdf
        case "www.w3.org/xml/1998/namespace": self = .xml
        // RSS 1.0 and UserLand's RSS 2 namespace hold plain RSS elements.
        case "purl.org/rss/1.0", "backend.userland.com/rss2": self = .none
        default: self = .other
        }
    }
}

/// A byte range `[start, end)` in the document.
struct ByteRange: Sendable {
    var start: Int
    var end: Int
    var isEmpty: Bool { start == end }
}

/// One attribute of a start tag, as byte ranges into the document.
struct RawAttribute {
    /// The qualified name.
    var name: ByteRange
    /// The local name (after the colon, if any).
    var local: ByteRange
    /// The value between the quotes, still with entity references.
    var value: ByteRange
    var namespace: XMLNamespace
}

/// An element's local name: bytes of the document, compared with literals (`case "title":`, `name == "url"`) without
/// making a `String` of every tag; only valid during the callback, like its ``StartTag``.
struct ElementName {
    var bytes: UnsafeBufferPointer<UInt8>

    static func == (name: ElementName, literal: StaticString) -> Bool {
        literal.withUTF8Buffer { literal in
            guard name.bytes.count == literal.count else { return false }
            guard let bytes = name.bytes.baseAddress, let literal = literal.baseAddress else { return true }
            return memcmp(bytes, literal, name.bytes.count) == 0
        }
    }

    static func ~= (pattern: StaticString, name: ElementName) -> Bool { name == pattern }
}

/// A start tag as the reader hands it to its handler; only valid during the callback.
struct StartTag {
    var namespace: XMLNamespace
    /// The local name (after the prefix, if any).
    var name: ElementName
    /// ``name`` as a `String`, for messages and the rare comparison that is not with a literal.
    var localName: String { String(decoding: name.bytes, as: UTF8.self) }
    /// Nesting depth: 1 for the root element.
    var depth: Int
    /// The tag's bytes from `<` to `>`.
    var raw: UnsafeBufferPointer<UInt8>
    var document: UnsafeBufferPointer<UInt8>
    var attributes: UnsafeBufferPointer<RawAttribute>
    /// Offset of the tag's `<`, for error positions.
    var offset: Int

    /// The decoded value of the attribute with this local name and namespace (unprefixed: `.none`).
    func attribute(_ localName: StaticString, _ namespace: XMLNamespace = .none) -> String? {
        for attribute in attributes where attribute.namespace == namespace {
            if matches(attribute.local, localName) { return value(attribute) }
        }
        return nil
    }

    /// Like ``attribute(_:_:)``, but matches the local name case-insensitively (OPML's `xmlUrl`/`xmlURL`).
    func attributeIgnoringCase(_ localName: String) -> String? {
        let wanted = localName.lowercased()
        for attribute in attributes where attribute.namespace == .none {
            let name = String(decoding: slice(attribute.local), as: UTF8.self)
            if name.lowercased() == wanted { return value(attribute) }
        }
        return nil
    }

    private func value(_ attribute: RawAttribute) -> String {
        let raw = slice(attribute.value)
        // Most values hold no reference and no literal tab or newline: no decoding buffer needed.
        if !raw.contains(where: { $0 == 0x26 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            return String(decoding: raw, as: UTF8.self)
        }
        var out: [UInt8] = []
        XMLText.appendDecoded(raw, to: &out, isAttribute: true)
        return String(decoding: out, as: UTF8.self)
    }

    private func slice(_ range: ByteRange) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: document[range.start..<range.end])
    }

    private func matches(_ range: ByteRange, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { name in
            guard range.end - range.start == name.count, let document = document.baseAddress,
                let name = name.baseAddress
            else { return false }
            return memcmp(document + range.start, name, range.end - range.start) == 0
        }
    }
}

/// Receives a document's structure from ``XMLReader``.
protocol XMLHandler {
    mutating func startElement(_ tag: StartTag) throws(FeedError)
    /// `raw` is the end tag's bytes (empty for `<x/>`).
    mutating func endElement(raw: UnsafeBufferPointer<UInt8>) throws(FeedError)
    /// Character data inside an element, still with entity references (see ``XMLText``).
    mutating func text(_ raw: UnsafeBufferPointer<UInt8>)
    /// The content of a CDATA section inside an element.
    mutating func cdata(_ content: UnsafeBufferPointer<UInt8>)
}

/// A small, strict-where-it-matters XML reader over UTF-8 bytes.
///
/// It checks what a feed reader needs checked (tags close in order, attributes are quoted, one root)
/// and is lenient where real feeds are sloppy: an undeclared prefix is resolved literally, an unknown
/// entity reference (`&nbsp;`) is decoded from the HTML table or kept as text, a lone `&` is text.
///
/// - Important: DTD entities are never expanded and nothing is ever fetched. A `DOCTYPE` with an
///   external identifier (RSS 0.91's Netscape DTD) is skipped; one that declares entities is refused
///   with ``FeedError/Code/entityRefused``, which stops "billion laughs" and external-entity reads
///   before any work is done.
struct XMLReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let base: UnsafePointer<UInt8>
    private let count: Int
    private let maxDepth: Int
    private var attributes: [RawAttribute] = []
    private var open: [ByteRange] = []
    /// In-scope `xmlns` declarations: prefix (empty for the default namespace), namespace, depth.
    private var bindings: [(prefix: ByteRange, namespace: XMLNamespace, depth: Int)] = []
    /// Told about each stretch of the document the reader has gone past, about every ``releaseStep`` bytes,
    /// so that a caller reading a mapped file can let its pages go (see ``FeedParser``). The reader may still
    /// read those bytes again (an end tag's name, an error's position); the caller must keep them readable.
    var readPast: ((UnsafeBufferPointer<UInt8>) -> Void)?
    private var readPastMark = 0
    static let releaseStep = 1 << 20
    /// How far the bytes are known to hold no carriage return (``count`` when the caller checked them all).
    private var lineEndsCheckedUpTo: Int
    /// Whether ``run(_:)`` stopped at a carriage return: the document must be read again with its line ends
    /// normalized (see ``DocumentBytes/withUTF8(_:lineEndsCheckedByReader:_:)``).
    private(set) var stoppedAtCarriageReturn = false
    /// How far ahead of the reader carriage returns are looked for: near enough that the reader finds the bytes
    /// still in the cache, far enough that the look costs one `memchr` per many tags.
    static let lineEndStep = 64 << 10

    /// - Parameter checkingLineEnds: the bytes may hold carriage returns, which the reader does not read: it looks
    ///   for them a little ahead of where it reads and stops at the first (``stoppedAtCarriageReturn``).
    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, checkingLineEnds: Bool = false) {
        self.bytes = bytes
        // An empty buffer may have no base address; point at a static byte instead.
        self.base = bytes.baseAddress ?? XMLReader.emptyBase
        self.count = bytes.count
        self.maxDepth = maxDepth
        lineEndsCheckedUpTo = checkingLineEnds ? 0 : bytes.count
        attributes.reserveCapacity(16)
        open.reserveCapacity(32)
    }

    /// Looks for a carriage return from where the last look ended to a step past `index`; false when there is one.
    private mutating func checkLineEnds(past index: Int) -> Bool {
        let end = min(count, max(index, lineEndsCheckedUpTo) + XMLReader.lineEndStep)
        if memchr(base + lineEndsCheckedUpTo, 0x0D, end - lineEndsCheckedUpTo) != nil { return false }
        lineEndsCheckedUpTo = end
        return true
    }

    /// Whether the document holds a carriage return anywhere: what ``run(_:)`` has not looked at yet is looked at
    /// now (after an error, or after the last element).
    mutating func documentHasCarriageReturn() -> Bool {
        if stoppedAtCarriageReturn { return true }
        guard lineEndsCheckedUpTo < count else { return false }
        return memchr(base + lineEndsCheckedUpTo, 0x0D, count - lineEndsCheckedUpTo) != nil
    }

    nonisolated(unsafe) private static let emptyBase: UnsafePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    /// Reads the whole document, calling `handler` for each element, text run and CDATA section.
    ///
    /// When checking line ends, it returns early at a carriage return with ``stoppedAtCarriageReturn`` set.
    mutating func run<Handler: XMLHandler>(_ handler: inout Handler) throws(FeedError) {
        var index = 0
        var sawRoot = false
        while index < count {
            if index >= lineEndsCheckedUpTo && !checkLineEnds(past: index) {
                stoppedAtCarriageReturn = true
                return
            }
            if index - readPastMark >= XMLReader.releaseStep, let readPast {
                readPast(slice(readPastMark, index))
                readPastMark = index
            }
            let lt = find(0x3C, from: index)
            if lt > index {
                if !open.isEmpty {
                    handler.text(slice(index, lt))
                } else if let junk = firstNonSpace(index, lt) {
                    throw .notXML(
                        sawRoot ? "text after the root element" : "text before the root element",
                        at: position(junk)
                    )
                }
            }
            if lt >= count { break }
            guard lt + 1 < count else { throw .notXML("the document ends with '<'", at: position(lt)) }
            switch base[lt + 1] {
            case 0x2F:  // </
                index = try endTag(at: lt, &handler)
            case 0x21:  // <!
                index = try markupDeclaration(at: lt, sawRoot: sawRoot, &handler)
            case 0x3F:  // <?
                let close = find(0x3F, 0x3E, from: lt + 2)
                guard close < count else { throw .notXML("unterminated processing instruction", at: position(lt)) }
                index = close + 2
            default:
                if open.isEmpty && sawRoot { throw .notXML("a second root element", at: position(lt)) }
                sawRoot = true
                index = try startTag(at: lt, &handler)
            }
        }
        if let innermost = open.last {
            throw .notXML("the document ends inside <\(string(innermost))>", at: position(count))
        }
        if !sawRoot { throw .notXML("there is no root element", at: nil) }
    }

    // MARK: - Tags

    private mutating func startTag<Handler: XMLHandler>(at lt: Int, _ handler: inout Handler) throws(FeedError) -> Int {
        var p = lt + 1
        let nameStart = p
        while p < count && !isNameEnd(base[p]) { p += 1 }
        guard p > nameStart else { throw .notXML("'<' is not followed by an element name", at: position(lt)) }
        let name = ByteRange(start: nameStart, end: p)
        if !attributes.isEmpty { attributes.removeAll(keepingCapacity: true) }  // most tags have no attributes
        var isEmpty = false
        var hasNamespaceDeclarations = false
        while true {
            while p < count && isSpace(base[p]) { p += 1 }
            guard p < count else { throw .notXML("unterminated start tag <\(string(name))>", at: position(lt)) }
            let byte = base[p]
            if byte == 0x3E {
                p += 1
                break
            }
            if byte == 0x2F {
                guard p + 1 < count, base[p + 1] == 0x3E else {
                    throw .notXML("'/' inside the tag <\(string(name))>", at: position(p))
                }
                p += 2
                isEmpty = true
                break
            }
            let attributeStart = p
            while p < count && !isNameEnd(base[p]) && base[p] != 0x3D { p += 1 }
            guard p > attributeStart else {
                throw .notXML("unexpected character in the tag <\(string(name))>", at: position(p))
            }
            let attributeName = ByteRange(start: attributeStart, end: p)
            while p < count && isSpace(base[p]) { p += 1 }
            guard p < count, base[p] == 0x3D else {
                throw .notXML(
                    "attribute \(string(attributeName)) of <\(string(name))> has no value",
                    at: position(attributeStart)
                )
            }
            p += 1
            while p < count && isSpace(base[p]) { p += 1 }
            guard p < count, base[p] == 0x22 || base[p] == 0x27 else {
                throw .notXML(
                    "the value of attribute \(string(attributeName)) is not quoted",
                    at: position(attributeStart)
                )
            }
            let quote = base[p]
            let valueStart = p + 1
            let valueEnd = find(quote, from: valueStart)
            guard valueEnd < count else {
                throw .notXML("unterminated value of attribute \(string(attributeName))", at: position(attributeStart))
            }
            p = valueEnd + 1
            let colon = find(0x3A, in: attributeName)
            let local = colon.map { ByteRange(start: $0 + 1, end: attributeName.end) } ?? attributeName
            if attributeName.end - attributeName.start >= 5 && hasPrefix("xmlns", at: attributeName.start)
                && (attributeName.end - attributeName.start == 5 || colon == attributeName.start + 5)
            {
                hasNamespaceDeclarations = true
            }
            attributes.append(
                RawAttribute(
                    name: attributeName,
                    local: local,
                    value: ByteRange(start: valueStart, end: valueEnd),
                    namespace: .none
                )
            )
        }

        let depth = open.count + 1
        guard depth <= maxDepth else { throw .tooDeep(maxDepth, at: position(lt)) }
        if hasNamespaceDeclarations { declareNamespaces(depth: depth) }
        let colon = find(0x3A, in: name)
        let namespace: XMLNamespace
        let localName: ByteRange
        if let colon {
            namespace = resolve(prefix: ByteRange(start: name.start, end: colon))
            localName = ByteRange(start: colon + 1, end: name.end)
        } else {
            namespace = resolve(prefix: ByteRange(start: name.start, end: name.start))
            localName = name
        }
        for index in attributes.indices {
            let attributeName = attributes[index].name
            if let colon = find(0x3A, in: attributeName) {
                attributes[index].namespace = resolve(prefix: ByteRange(start: attributeName.start, end: colon))
            }
        }
        open.append(name)
        try attributes.withUnsafeBufferPointer { (list) throws(FeedError) in
            try handler.startElement(
                StartTag(
                    namespace: namespace,
                    name: ElementName(bytes: slice(localName.start, localName.end)),
                    depth: depth,
                    raw: slice(lt, p),
                    document: bytes,
                    attributes: list,
                    offset: lt
                )
            )
        }
        if isEmpty {
            try handler.endElement(raw: slice(p, p))
            close()
        }
        return p
    }

    private mutating func endTag<Handler: XMLHandler>(at lt: Int, _ handler: inout Handler) throws(FeedError) -> Int {
        var p = lt + 2
        let nameStart = p
        while p < count && !isNameEnd(base[p]) { p += 1 }
        let name = ByteRange(start: nameStart, end: p)
        while p < count && isSpace(base[p]) { p += 1 }
        guard p < count, base[p] == 0x3E else { throw .notXML("unterminated end tag", at: position(lt)) }
        guard let expected = open.last else {
            throw .notXML("end tag </\(string(name))> without a start tag", at: position(lt))
        }
        guard sameBytes(expected, name) else {
            throw .notXML("expected </\(string(expected))> but found </\(string(name))>", at: position(lt))
        }
        try handler.endElement(raw: slice(lt, p + 1))
        close()
        return p + 1
    }

    private mutating func close() {
        let depth = open.count
        open.removeLast()
        while let last = bindings.last, last.depth >= depth { bindings.removeLast() }
    }

    /// `<!--`, `<![CDATA[` and `<!DOCTYPE`.
    private mutating func markupDeclaration<Handler: XMLHandler>(
        at lt: Int,
        sawRoot: Bool,
        _ handler: inout Handler
    ) throws(FeedError) -> Int {
        if hasPrefix("<!--", at: lt) {
            let close = find(0x2D, 0x2D, 0x3E, from: lt + 4)
            guard close < count else { throw .notXML("unterminated comment", at: position(lt)) }
            return close + 3
        }
        if hasPrefix("<![CDATA[", at: lt) {
            let start = lt + 9
            let close = find(0x5D, 0x5D, 0x3E, from: start)
            guard close < count else { throw .notXML("unterminated CDATA section", at: position(lt)) }
            guard !open.isEmpty else { throw .notXML("CDATA section outside the root element", at: position(lt)) }
            handler.cdata(slice(start, close))
            return close + 3
        }
        if hasPrefix("<!DOCTYPE", at: lt) {
            guard !sawRoot else { throw .notXML("DOCTYPE after the root element", at: position(lt)) }
            return try skipDoctype(at: lt)
        }
        throw .notXML("unknown markup declaration", at: position(lt))
    }

    /// Skips a DOCTYPE, refusing any entity declaration in its internal subset.
    ///
    /// > XML 1.0 §4.2: "An entity declaration … `<!ENTITY` …". Every expansion bomb and external
    /// > entity needs one, so refusing the declaration refuses them all without expanding anything.
    private func skipDoctype(at lt: Int) throws(FeedError) -> Int {
        var p = lt + 9
        var inSubset = false
        while p < count {
            let byte = base[p]
            switch byte {
            case 0x22, 0x27:
                let close = find(byte, from: p + 1)
                guard close < count else { break }
                p = close
            case 0x5B:
                inSubset = true
            case 0x5D:
                inSubset = false
            case 0x3C where inSubset:
                if hasPrefix("<!--", at: p) {
                    let close = find(0x2D, 0x2D, 0x3E, from: p + 4)
                    guard close < count else { break }
                    p = close + 2
                } else if hasPrefix("<!ENTITY", at: p) {
                    throw .entityRefused
                }
            case 0x3E where !inSubset:
                return p + 1
            default:
                break
            }
            p += 1
        }
        throw .notXML("unterminated DOCTYPE", at: position(lt))
    }

    // MARK: - Namespaces

    private mutating func declareNamespaces(depth: Int) {
        for attribute in attributes {
            let name = attribute.name
            let length = name.end - name.start
            guard length >= 5, hasPrefix("xmlns", at: name.start) else { continue }
            let prefix: ByteRange
            if length == 5 {
                prefix = ByteRange(start: name.start, end: name.start)
            } else if base[name.start + 5] == 0x3A {
                prefix = ByteRange(start: name.start + 6, end: name.end)
            } else {
                continue
            }
            var uri: [UInt8] = []
            XMLText.appendDecoded(slice(attribute.value.start, attribute.value.end), to: &uri, isAttribute: true)
            bindings.append((prefix, XMLNamespace(uri: String(decoding: uri, as: UTF8.self)), depth))
        }
    }

    private func resolve(prefix: ByteRange) -> XMLNamespace {
        for binding in bindings.reversed() where sameBytes(binding.prefix, prefix) {
            return binding.namespace
        }
        return prefix.isEmpty ? .none : XMLReader.literalNamespace(slice(prefix.start, prefix.end))
    }

    /// The namespace an undeclared prefix stands for: `itunes`, `podcast`, `content`, `media`, `atom`,
    /// `psc`, `dc`, `rdf` and `xml` by their usual spelling; anything else is ``XMLNamespace/other``.
    static func literalNamespace(_ prefix: UnsafeBufferPointer<UInt8>) -> XMLNamespace {
        switch String(decoding: prefix, as: UTF8.self) {
        case "itunes": .itunes
        case "podcast": .podcast
        case "content": .content
        case "media": .media
        case "atom": .atom
        case "psc": .psc
        case "dc": .dc
        case "rdf": .rdf
        case "xml": .xml
        default: .other
        }
    }

    // MARK: - Bytes

    @inline(__always)
    private func find(_ byte: UInt8, from start: Int) -> Int {
        guard start < count else { return count }
        guard let hit = memchr(base + start, Int32(byte), count - start) else { return count }
        return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
    }

    private func find(_ first: UInt8, _ second: UInt8, from start: Int) -> Int {
        var p = start
        while true {
            p = find(first, from: p)
            if p + 1 >= count { return count }
            if base[p + 1] == second { return p }
            p += 1
        }
    }

    private func find(_ first: UInt8, _ second: UInt8, _ third: UInt8, from start: Int) -> Int {
        var p = start
        while true {
            p = find(first, from: p)
            if p + 2 >= count { return count }
            if base[p + 1] == second && base[p + 2] == third { return p }
            p += 1
        }
    }

    private func find(_ byte: UInt8, in range: ByteRange) -> Int? {
        var p = range.start
        while p < range.end {
            if base[p] == byte { return p }
            p += 1
        }
        return nil
    }

    private func hasPrefix(_ literal: StaticString, at offset: Int) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard offset + length <= count else { return false }
        return memcmp(base + offset, literal.utf8Start, length) == 0
    }

    private func sameBytes(_ a: ByteRange, _ b: ByteRange) -> Bool {
        let length = a.end - a.start
        return length == b.end - b.start && memcmp(base + a.start, base + b.start, length) == 0
    }

    private func firstNonSpace(_ start: Int, _ end: Int) -> Int? {
        var p = start
        while p < end {
            if !isSpace(base[p]) { return p }
            p += 1
        }
        return nil
    }

    @inline(__always)
    private func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    @inline(__always)
    private func isNameEnd(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D || byte == 0x3E || byte == 0x2F || byte == 0x3C
    }

    private func slice(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + start, count: end - start)
    }

    private func string(_ range: ByteRange) -> String {
        String(decoding: slice(range.start, range.end), as: UTF8.self)
    }

    private func position(_ offset: Int) -> TextPosition {
        TextPosition(offset: offset, in: bytes)
    }
}
