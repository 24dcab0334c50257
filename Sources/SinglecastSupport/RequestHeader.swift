/// An extra request header as a user gives it, one `Name: value` line: the one rule for the client's `--header`, the
/// daemon's `enqueue` and the engine, here because the client cannot import the daemon or the engine.
package enum RequestHeader {
    /// Why a text is not such a header.
    package enum Problem: Equatable, Sendable, CustomStringConvertible {
        case noColon
        case emptyName
        case spaceInName
        case notOneLine
        case nul

        /// The reason, to follow "is invalid" or a header's text in a message.
        package var description: String {
            switch self {
            case .noColon: "expected 'Name: value'"
            case .emptyName: "the header name is empty"
            case .spaceInName: "the header name contains a space"
            case .notOneLine: "a header must be a single line"
            case .nul: "a header must not contain NUL characters"
            }
        }
    }

    /// Why `header` is not a `Name: value` line, or `nil` when it is one.
    ///
    /// A line break is any that Unicode knows (CR, LF, VT, FF, NEL, U+2028, U+2029), not only CR and LF: a header
    /// that holds one was pasted wrong. NUL is refused because libcurl's headers are C strings and would cut it there.
    package static func problem(_ header: String) -> Problem? {
        // Printable ASCII and tabs, what headers are: read as bytes, where the checks below read `Character`s (whose
        // grapheme breaking was 2 % of a refresh's CPU). Of these bytes only a space or a tab is white space, and
        // none breaks a line or is NUL.
        if header.utf8.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }) {
            let bytes = header.utf8
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return .noColon }
            if colon == bytes.startIndex { return .emptyName }
            if bytes[..<colon].contains(where: { $0 == 0x20 || $0 == 0x09 }) { return .spaceInName }
            return nil
        }
        guard let colon = header.firstIndex(of: ":") else { return .noColon }
        let name = header[..<colon]
        if name.isEmpty { return .emptyName }
        if name.contains(where: { $0.isWhitespace || $0.isNewline }) { return .spaceInName }
        if header.contains(where: \.isNewline) { return .notOneLine }
        if header.utf8.contains(0) { return .nul }
        return nil
    }
}
