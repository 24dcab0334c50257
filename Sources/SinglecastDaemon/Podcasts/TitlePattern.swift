import CPCRE2

/// What an episode title must (or must not) contain: a case-insensitive substring, or a regular expression
/// written between slashes (`/^#?\d+:/`), compiled once with PCRE2.
package struct TitlePattern: Sendable, Hashable, CustomStringConvertible {
    /// The text as written (`trailer`, `/teaser|trailer/`): how it is stored and shown.
    package let text: String
    private let matcher: Matcher

    private enum Matcher: Sendable, Hashable {
        case substring(String)
        case expression(CompiledExpression)
    }

    /// Why a pattern is refused.
    package struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        /// The regular expression's error, e.g. "missing closing parenthesis".
        package var message: String
        /// 1-based character position in the text as written (the opening slash is 1), when PCRE2 names one.
        package var position: Int?

        package var description: String {
            position.map { "\(message) at character \($0)" } ?? message
        }
    }

    package init(_ text: String) throws(Problem) {
        guard !text.isEmpty else { throw Problem(message: "the pattern is empty") }
        self.text = text
        if text.count >= 2, text.hasPrefix("/"), text.hasSuffix("/") {
            matcher = .expression(try CompiledExpression(String(text.dropFirst().dropLast())))
        } else {
            matcher = .substring(text.lowercased())
        }
    }

    package var description: String { text.hasPrefix("/") ? text : "\"\(text)\"" }

    /// What matching a title came to.
    package enum Match: Sendable, Hashable {
        case matched
        case notMatched
        /// The expression could not decide within its limits (PCRE2's reason, e.g. "match limit exceeded"): the
        /// title neither matches nor fails to, and the rules hold the episode back.
        case failed(String)
    }

    package func match(_ title: String) -> Match {
        switch matcher {
        case .substring(let needle): Self.contains(title, lowercasedNeedle: needle) ? .matched : .notMatched
        case .expression(let expression): expression.match(title)
        }
    }

    /// A case-insensitive search. ASCII titles are compared byte by byte, folding case as they go; lower-casing
    /// each title first was most of the time rules took over a podcast's 5,000 episodes.
    private static func contains(_ title: String, lowercasedNeedle needle: String) -> Bool {
        let titleBytes = title.utf8
        let needleBytes = needle.utf8
        guard titleBytes.allSatisfy({ $0 < 0x80 }), needleBytes.allSatisfy({ $0 < 0x80 }) else {
            return title.lowercased().contains(needle)
        }
        var haystack = title
        var wanted = needle
        return haystack.withUTF8 { hay in
            wanted.withUTF8 { pin in
                guard pin.count <= hay.count else { return false }
                guard !pin.isEmpty else { return true }
                func folded(_ byte: UInt8) -> UInt8 {
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                }
                for start in 0...(hay.count - pin.count) where folded(hay[start]) == pin[0] {
                    var offset = 1
                    while offset < pin.count, folded(hay[start + offset]) == pin[offset] { offset += 1 }
                    if offset == pin.count { return true }
                }
                return false
            }
        }
    }

    package static func == (left: TitlePattern, right: TitlePattern) -> Bool { left.text == right.text }
    package func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// A compiled PCRE2 pattern (caseless, UTF). PCRE2 code is read-only once compiled and may be matched from any
/// thread; each match brings its own match data and shares the match context, which only holds the limits.
private final class CompiledExpression: @unchecked Sendable, Hashable {
    private let code: OpaquePointer
    private let context: OpaquePointer

    /// Steps one match may take. PCRE2's default, ten million, let one catastrophic pattern (`/^(a+)+$/`) spend
    /// about a second on each hostile title; ordinary patterns over a 100,000-character title stay far below this.
    static let matchLimit: UInt32 = 1_000_000
    /// Nested backtracking frames of the interpreter (the JIT's own stack overflowing is an error as well).
    static let depthLimit: UInt32 = 10_000
    /// Heap for the interpreter's backtracking frames, in KiB (PCRE2's default is 20 GB).
    static let heapLimitKiB: UInt32 = 4096

    init(_ pattern: String) throws(TitlePattern.Problem) {
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compiled = pattern.withCString { text in
            text.withMemoryRebound(to: UInt8.self, capacity: pattern.utf8.count) {
                pcre2_compile_8(
                    $0,
                    pattern.utf8.count,
                    UInt32(PCRE2_CASELESS | PCRE2_UTF | PCRE2_UCP),
                    &errorCode,
                    &errorOffset,
                    nil
                )
            }
        }
        guard let compiled else {
            var buffer = [UInt8](repeating: 0, count: 256)
            let length = pcre2_get_error_message_8(errorCode, &buffer, buffer.count)
            let message = length > 0 ? String(decoding: buffer[..<Int(length)], as: UTF8.self) : "error \(errorCode)"
            // PCRE2 counts code units of the pattern; the user counts characters of what they wrote, slash included.
            let utf8 = pattern.utf8
            let offset = utf8.index(utf8.startIndex, offsetBy: min(errorOffset, utf8.count))
            let characters = pattern[..<(offset.samePosition(in: pattern) ?? pattern.endIndex)].count
            throw TitlePattern.Problem(message: message, position: characters + 2)
        }
        guard let limits = pcre2_match_context_create_8(nil) else {
            pcre2_code_free_8(compiled)
            throw TitlePattern.Problem(message: "out of memory compiling the pattern", position: nil)
        }
        pcre2_set_match_limit_8(limits, Self.matchLimit)
        pcre2_set_depth_limit_8(limits, Self.depthLimit)
        pcre2_set_heap_limit_8(limits, Self.heapLimitKiB)
        // Titles are matched thousands at a time; the JIT makes each match a few times cheaper where it exists.
        _ = pcre2_jit_compile_8(compiled, UInt32(PCRE2_JIT_COMPLETE))
        code = compiled
        context = limits
    }

    deinit {
        pcre2_match_context_free_8(context)
        pcre2_code_free_8(code)
    }

    /// Every result but a match or PCRE2_ERROR_NOMATCH is a failure with PCRE2's message: a limit reached must
    /// not read as "no match", which would let an excluded title through.
    func match(_ subject: String) -> TitlePattern.Match {
        guard let data = pcre2_match_data_create_from_pattern_8(code, nil) else { return .failed("out of memory") }
        defer { pcre2_match_data_free_8(data) }
        var subject = subject
        let result = subject.withUTF8 { bytes in
            pcre2_match_8(code, bytes.baseAddress, bytes.count, 0, 0, data, context)
        }
        if result >= 0 { return .matched }
        if result == PCRE2_ERROR_NOMATCH { return .notMatched }
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = pcre2_get_error_message_8(result, &buffer, buffer.count)
        return .failed(length > 0 ? String(decoding: buffer[..<Int(length)], as: UTF8.self) : "error \(result)")
    }

    static func == (left: CompiledExpression, right: CompiledExpression) -> Bool { left === right }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
