/// A JSON document, for output whose shape is fixed by someone else (podcastparser's dictionaries).
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Serializes with sorted keys; `indent` spaces per level, or one line when `nil`.
    package func serialized(indent: Int? = 2) -> String {
        var out = ""
        write(to: &out, indent: indent, level: 0)
        return out
    }

    /// Deep equality where `3600` equals `3600.0`, as Python's `==` sees JSON numbers.
    package func matches(_ other: JSONValue) -> Bool {
        switch (self, other) {
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.matches($1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { value.matches($0) } ?? false }
        default: return self == other
        }
    }

    private func write(to out: inout String, indent: Int?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += value.isFinite ? "\(value)" : "null"
        case .string(let value): JSONValue.writeString(value, to: &out)
        case .array(let values):
            guard !values.isEmpty else {
                out += "[]"
                return
            }
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                newline(&out, indent: indent, level: level + 1)
                value.write(to: &out, indent: indent, level: level + 1)
            }
            newline(&out, indent: indent, level: level)
            out += "]"
        case .object(let values):
            guard !values.isEmpty else {
                out += "{}"
                return
            }
            out += "{"
            for (index, key) in values.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                newline(&out, indent: indent, level: level + 1)
                JSONValue.writeString(key, to: &out)
                out += indent == nil ? ":" : ": "
                values[key]!.write(to: &out, indent: indent, level: level + 1)
            }
            newline(&out, indent: indent, level: level)
            out += "}"
        }
    }

    private func newline(_ out: inout String, indent: Int?, level: Int) {
        guard let indent else { return }
        out += "\n" + String(repeating: " ", count: indent * level)
    }

    private static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
