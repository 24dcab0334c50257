/// Text from outside (feed titles, error messages that quote a server) made safe to print on a terminal.
///
/// A feed may put terminal controls in a title (`&#x1b;` in its XML is an ESC): an OSC sequence sets the window
/// title or, on some terminals, writes to the clipboard; a CSI one recolours or clears the screen; CR and LF rewrite
/// or forge lines. Every C0 control, DEL and every C1 control is shown as `\u{1B}`, which no terminal acts on; all
/// other characters are left alone. This is the one place that decides it: table cells (``Formatting/cell(_:)``)
/// and the lines that name a podcast or an episode go through it, and `--json` output never does.
package enum TerminalText {
    /// `text` with every control character written as a visible `\u{…}` (upper-case hex).
    package static func escaped(_ text: String) -> String {
        // Nearly every title holds no control at all: hand it back without building a new string.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
