import Foundation

/// The deterministic file contents the test peers serve: byte `i` is `(i * 31 + 7 + seed) & 0xff`.
///
/// `Resources/fault_server.py` computes the same bytes, so tests can check a download byte for byte without keeping
/// a copy. The pattern repeats every 256 bytes, and no 256-byte window equals another seed's, so an offset or seed
/// mix-up shows.
package enum TestContent {
    /// Byte `index` of the file generated with `seed`.
    package static func byte(at index: Int64, seed: Int = 0) -> UInt8 {
        UInt8(truncatingIfNeeded: index &* 31 &+ 7 &+ Int64(seed))
    }

    /// Bytes `range` of the file generated with `seed`.
    package static func data(_ range: Range<Int64>, seed: Int = 0) -> Data {
        let period = (0..<256).map { byte(at: range.lowerBound + Int64($0), seed: seed) }
        var data = Data(capacity: range.count)
        var remaining = range.count
        while remaining > 0 {
            let count = min(remaining, period.count)
            data.append(contentsOf: period[..<count])
            remaining -= count
        }
        return data
    }

    /// The whole file of `size` bytes generated with `seed`.
    package static func data(size: Int64, seed: Int = 0) -> Data { data(0..<size, seed: seed) }

    /// `count` bytes that libmagic takes for MPEG audio, as an episode is: an MPEG-1 Layer III frame header, then
    /// `filler`. The daemon fails a download whose body is text where audio was announced (a feed's enclosure, an
    /// `.mp3` URL), and a run of one letter is text to libmagic.
    package static func mp3(count: Int, filler: UInt8 = 0) -> Data {
        var data = Data(mpegFrameHeader.prefix(count))
        data.append(Data(repeating: filler, count: max(0, count - mpegFrameHeader.count)))
        return data
    }

    /// The header of an MPEG-1 Layer III frame: 128 kbit/s, 44.1 kHz, joint stereo.
    package static let mpegFrameHeader: [UInt8] = [0xFF, 0xFB, 0x90, 0x64]

    /// Writes the file of `size` bytes generated with `seed` to `path`, replacing it.
    package static func write(size: Int64, to path: String, seed: Int = 0) throws {
        try data(size: size, seed: seed).write(to: URL(fileURLWithPath: path))
    }
}

/// Whether two byte strings are equal, for `#expect(sameBytes(a, b))` in place of `#expect(a == b)`.
///
/// A failed `==` of two collections makes Swift Testing compute their difference to show it, and for a few hundred
/// kilobytes of `Data` that takes minutes on one of the cooperative threads (two on a 2-core machine): every other
/// test stalls meanwhile and fails its time limit. A Bool is all `#expect` gets here, and it shows both
/// values' sizes.
package func sameBytes(_ actual: Data?, _ expected: Data?) -> Bool {
    actual == expected
}
