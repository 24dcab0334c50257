import Foundation
import Testing

@testable import SinglecastProtocol

/// `EncodedKeys` must find exactly the keys `JSONEncoder` writes at the top level, which the daemon's check for
/// unknown parameters compared before.
@Suite struct EncodedKeysTests {
    private struct Inner: Codable { var deep: String }

    private struct Plain: Codable {
        var name: String
        var count: Int64
        var missing: Int?
        var present: Bool?
        var list: [Inner]
        var nested: Inner
        var map: [String: String]
    }

    /// A hand-written `encode(to:)`: a key only when it holds something, an explicit null, a nested container.
    private struct Custom: Encodable {
        var value: Int?
        enum CodingKeys: String, CodingKey {
            case value, always
            case explicitNull = "explicit_null"
            case box, items
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let value, value > 0 { try container.encode(value, forKey: .value) }
            try container.encode("x", forKey: .always)
            try container.encodeNil(forKey: .explicitNull)
            var box = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .box)
            try box.encode(1, forKey: .value)
            var items = container.nestedUnkeyedContainer(forKey: .items)
            try items.encode(1)
        }
    }

    /// A value that hands its encoding to another, keyed one.
    private struct Wrapper: Encodable {
        var wrapped: Plain
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(wrapped)
        }
    }

    private func encoderKeys(_ value: some Encodable) throws -> Set<String>? {
        guard case .object(let fields) = try WireCoding.value(of: value) else { return nil }
        return Set(fields.keys)
    }

    @Test func findsTheKeysTheEncoderWrites() throws {
        let plain = Plain(
            name: "n",
            count: 1,
            missing: nil,
            present: false,
            list: [Inner(deep: "d")],
            nested: Inner(deep: "d"),
            map: ["a": "b"]
        )
        #expect(try EncodedKeys.of(plain) == ["name", "count", "present", "list", "nested", "map"])
        #expect(try EncodedKeys.of(plain) == encoderKeys(plain))
        #expect(try EncodedKeys.of(Custom(value: 3)) == ["value", "always", "explicit_null", "box", "items"])
        for custom in [Custom(value: 3), Custom(value: 0), Custom(value: nil)] {
            #expect(try EncodedKeys.of(custom) == encoderKeys(custom))
        }
        #expect(try EncodedKeys.of(Wrapper(wrapped: plain)) == encoderKeys(Wrapper(wrapped: plain)))
    }

    @Test func aValueThatIsNoObjectHasNoKeys() throws {
        #expect(try EncodedKeys.of([1, 2, 3]) == nil)
        #expect(try EncodedKeys.of("text") == nil)
        #expect(try EncodedKeys.of(Int?.none) == nil)
    }

    /// Parameters as clients send them, decoded as the daemon decodes them.
    @Test(arguments: [
        #"{"urls":["https://a/1"],"directory":"/d","name":"n","headers":["X: 1"],"user":"u","password":"p","priority":2,"now":true}"#,
        #"{"urls":[],"episodes":[1,2,3]}"#,
    ])
    func enqueueParameters(json: String) throws {
        let params = try JSONDecoder().decode(EnqueueParams.self, from: Data(json.utf8))
        #expect(try EncodedKeys.of(params) == encoderKeys(params))
    }

    @Test(arguments: [
        #"{"ids":[1],"delete_partial":true,"now":false}"#, #"{"all":true}"#, "{}",
    ])
    func selectionParameters(json: String) throws {
        let params = try JSONDecoder().decode(SelectionParams.self, from: Data(json.utf8))
        #expect(try EncodedKeys.of(params) == encoderKeys(params))
    }

    @Test func podcastSettingsAndRules() throws {
        let settings = try JSONDecoder().decode(
            SetPodcastParams.self,
            from: Data(#"{"podcast":"1","keep":3,"folder":"f","rules":{"include":"a"}}"#.utf8)
        )
        #expect(try EncodedKeys.of(settings) == encoderKeys(settings))
        let rules = try JSONDecoder().decode(
            RulesParams.self,
            from: Data(#"{"podcast":"1","changes":{"include":"a"},"keep":2}"#.utf8)
        )
        #expect(try EncodedKeys.of(rules) == encoderKeys(rules))
    }
}
