import SinglecastSupport

/// A request path as names: each segment percent-decoded once, and nothing that could name a place other than
/// itself. The routes look the names up among what singlecast lists; they never join them into a file path.
package enum WebPath {
    /// The decoded segments of `rawPath` (which starts with `/`); `nil` when a segment is empty, `.` or `..`, holds
    /// a `/`, `\` or NUL once decoded, or is not valid percent-encoded UTF-8. Decoded once only: `%252e` is the
    /// three characters `%2e`, a name no file of singlecast's has.
    package static func segments(_ rawPath: String) -> [String]? {
        guard rawPath.hasPrefix("/") else { return nil }
        var segments: [String] = []
        for raw in rawPath.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let decoded = String(Substring(raw)).percentDecoded(), !decoded.isEmpty, decoded != ".",
                decoded != "..", !decoded.utf8.contains(where: { $0 == 0x2F || $0 == 0x5C || $0 == 0 })
            else { return nil }
            segments.append(decoded)
        }
        return segments
    }

    /// A database id as a path writes it: decimal digits, no sign, no leading zero.
    package static func id(_ text: some StringProtocol) -> Int64? {
        guard let value = OutsideNumber.decimal(text), value > 0, String(value) == text else { return nil }
        return value
    }

}
