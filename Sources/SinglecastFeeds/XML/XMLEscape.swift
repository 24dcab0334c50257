/// Text made safe to write into an XML 1.0 document: the one escaper of every document singlecast writes (OPML
/// exports, personal feeds).
///
/// `&`, `<` and `>` become entity references; in attribute values `"` too, and tabs and line breaks become character
/// references so they survive attribute normalization. Characters XML 1.0 cannot carry at all (most C0 controls,
/// U+FFFE, U+FFFF) are left out rather than written into a document no reader accepts.
package enum XMLEscape {
    /// Element content.
    package static func text(_ text: String) -> String { escape(text, attribute: false) }

    /// An attribute value between double quotes.
    package static func attribute(_ text: String) -> String { escape(text, attribute: true) }

    private static func escape(_ text: String, attribute: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            case "\t" where attribute: out += "&#9;"
            case "\n" where attribute: out += "&#10;"
            case "\r": out += "&#13;"
            case let control where control.value < 0x20 && control != "\t" && control != "\n":
                continue
            case "\u{FFFE}", "\u{FFFF}":
                continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
