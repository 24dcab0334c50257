/// The keys a value's `encode(to:)` writes at its top level, found without encoding what they hold.
///
/// The daemon refuses a request's parameter that its method does not read by comparing the keys sent with the keys
/// of the parameters it decoded. Encoding those parameters to JSON and reading them back only for their keys cost
/// two passes over every value: for an `enqueue` of 10,000 episodes, a fifth of reading the request. The keys are
/// the ones `JSONEncoder` would write: a key given `nil` explicitly (`encodeNil`) is there, an optional left out
/// (`encodeIfPresent` with `nil`) is not.
package enum EncodedKeys {
    /// The top-level keys of `value`, or `nil` when it does not encode as an object.
    package static func of(_ value: some Encodable) throws -> Set<String>? {
        let recorder = KeyRecorder()
        try value.encode(to: recorder)
        return recorder.keyed ? recorder.keys : nil
    }
}

/// Records keys and ignores values; a value wrapped in a single-value container is looked into, since its keys are
/// the top level's.
private final class KeyRecorder: Encoder {
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]
    var keys: Set<String> = []
    var keyed = false

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        keyed = true
        return KeyedEncodingContainer(KeyedRecorder<Key>(recorder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { IgnoredValues() }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueRecorder(recorder: self) }
}

private struct KeyedRecorder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let recorder: KeyRecorder
    var codingPath: [any CodingKey] { [] }

    private func record(_ key: Key) { recorder.keys.insert(key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: String, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { record(key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { record(key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { record(key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        record(key)
        return KeyedEncodingContainer(IgnoredKeys<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        record(key)
        return IgnoredValues()
    }

    mutating func superEncoder() -> any Encoder {
        recorder.keys.insert("super")
        return IgnoringEncoder()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        record(key)
        return IgnoringEncoder()
    }
}

private struct SingleValueRecorder: SingleValueEncodingContainer {
    let recorder: KeyRecorder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws {}
    mutating func encode(_ value: String) throws {}
    mutating func encode(_ value: Double) throws {}
    mutating func encode(_ value: Float) throws {}
    mutating func encode(_ value: Int) throws {}
    mutating func encode(_ value: Int8) throws {}
    mutating func encode(_ value: Int16) throws {}
    mutating func encode(_ value: Int32) throws {}
    mutating func encode(_ value: Int64) throws {}
    mutating func encode(_ value: UInt) throws {}
    mutating func encode(_ value: UInt8) throws {}
    mutating func encode(_ value: UInt16) throws {}
    mutating func encode(_ value: UInt32) throws {}
    mutating func encode(_ value: UInt64) throws {}
    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: recorder) }
}

/// Below the top level: everything is accepted and nothing kept.
private struct IgnoringEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(IgnoredKeys<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { IgnoredValues() }

    func singleValueContainer() -> any SingleValueEncodingContainer { IgnoredValue() }
}

private struct IgnoredKeys<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(IgnoredKeys<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { IgnoredValues() }
    mutating func superEncoder() -> any Encoder { IgnoringEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { IgnoringEncoder() }
}

private struct IgnoredValues: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    mutating func encodeNil() throws { count += 1 }
    mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<
        NestedKey
    > {
        count += 1
        return KeyedEncodingContainer(IgnoredKeys<NestedKey>())
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        count += 1
        return IgnoredValues()
    }

    mutating func superEncoder() -> any Encoder { IgnoringEncoder() }
}

private struct IgnoredValue: SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
}
