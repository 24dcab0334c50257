/// Any JSON value, kept exactly as it arrived so a request's `id` and `params` can be echoed and inspected.
package enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Strings first: each kind of token decodes as one of these only, and every attempt that fails throws, so an
        // `enqueue` of 1,000 URLs threw 3,000 errors before each URL was tried as a string.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode([String].self) {
            // Arrays of one kind whole, as the lists of URLs and ids most requests carry are: element by element,
            // each id threw twice (not a string, not a boolean), and those throws were most of reading an
            // `enqueue` of 10,000 episodes. An array of anything else fails here at its first element.
            self = .array(value.map(JSONValue.string))
        } else if let value = try? container.decode([Int64].self) {
            self = .array(value.map(JSONValue.integer))
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The JSON type name, for error messages such as "params.topics must be an array, not a string".
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
