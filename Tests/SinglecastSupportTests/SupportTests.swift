import Foundation
import Synchronization
import Testing

@testable import SinglecastSupport

@Suite("Support") struct SupportTests {
    @Test(arguments: [
        ("  a b  ", "a b"),
        ("\t\r\nvalue\r\n", "value"),
        ("\u{00A0}\u{2003}x\u{3000}", "x"),  // no-break, em and ideographic spaces
        ("\u{0085}x\u{2028}", "x"),
        ("   ", ""),
        ("", ""),
        ("x\u{301} ", "x\u{301}"),  // a combining mark stays with its letter
        ("\u{200B}x\u{200B}", "x"),  // zero-width space, as Foundation trims it
    ])
    func trimsUnicodeWhiteSpace(input: String, expected: String) {
        #expect(input.trimmingWhitespace() == expected)
        #expect(input[...].trimmingWhitespace() == expected)
    }

    @Test func trimsWhatFoundationTrims() {
        // Everything Foundation's whitespacesAndNewlines trims, this trims too.
        for value in UInt32(0)...0x3000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)x\(scalar)"
            if text.trimmingCharacters(in: .whitespacesAndNewlines) == "x" {
                #expect(text.trimmingWhitespace() == "x", "U+\(String(value, radix: 16))")
            }
        }
    }

    @Test(arguments: [
        ("plain", "plain"),
        ("a%20b", "a b"),
        ("%C3%A9t%C3%A9", "été"),
        ("100%25", "100%"),
        ("%2Fetc%2fpasswd", "/etc/passwd"),
    ])
    func decodesPercentEscapes(input: String, expected: String) {
        #expect(input.percentDecoded() == expected)
        #expect(input.percentDecoded() == input.removingPercentEncoding)
    }

    @Test(arguments: ["%", "%2", "%zz", "a%g1", "%C3", "%FF%FE"])
    func refusesBrokenEscapesLikeFoundation(input: String) {
        #expect(input.percentDecoded() == nil)
        #expect(input.removingPercentEncoding == nil)
    }

    @Test func findsLineBreaksInsideCRLF() {
        #expect("X-A: 1\r\nX-B: 2".containsLineBreak)
        #expect("a\rb".containsLineBreak)
        #expect("a\nb".containsLineBreak)
        #expect(!"X-A: 1".containsLineBreak)
        // The reason for a byte check: "\r\n" is one Character, which String.contains does not match.
        #expect(!"a\r\nb".contains(Character("\n")))
    }

    @Test func replacesEveryLineFeed() {
        #expect("one\ntwo\r\nthree".replacingLineFeeds(with: " ⏎ ") == "one ⏎ two\r ⏎ three")
        #expect("no breaks".replacingLineFeeds(with: "x") == "no breaks")
        #expect(!"a\r\nb".replacingLineFeeds(with: " ").utf8.contains(UInt8(ascii: "\n")))
    }

    /// An ASCII scalar is found by its byte, another by decoding: both wherever they stand, a quote before a
    /// combining mark and a substring's bounds included.
    @Test func replacesEveryScalar() {
        #expect("it's \"q\u{301}\"".replacingEvery("\"", with: "'") == "it's 'q\u{301}'")
        #expect("a\"\u{301}b".replacingEvery("\"", with: "") == "a\u{301}b")
        #expect("naïve café".replacingEvery("é", with: "e").replacingEvery("ï", with: "i") == "naive cafe")
        #expect("e\u{301}".replacingEvery("é", with: "x") == "e\u{301}")
        #expect("plain".replacingEvery("\u{0}", with: "x") == "plain")
        let text = "x:y:z"
        #expect(text.dropFirst(2).replacingEvery(":", with: "-") == "y-z")
        #expect(text.dropLast(2).replacingEvery("z", with: "-") == "x:y")
    }

    @Test(arguments: [
        ("/a/b", "/a"), ("/a/b/", "/a"), ("/a", "/"), ("/", "/"), ("a", "."), ("a/b", "a"), ("//a//b", "//a"),
        ("/a/\u{301}b", "/a"), ("/a\u{301}/b", "/a\u{301}"),
    ])
    func findsTheParentDirectory(path: String, expected: String) {
        #expect(parentDirectory(of: path) == expected)
    }

    @Test func describesFileErrorsByTheirSystemReason() throws {
        let path = "/proc/singlecast-nonexistent/child"
        let error = try #require(
            throws: (any Error).self,
            performing: { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        )
        let text = describeFileError(error)
        #expect(text.hasPrefix("No such file or directory ("), "\(text)")
        #expect(describeFileError(POSIXError(.EACCES)) == "Permission denied")
    }

    @Test func startsNamedThreads() async throws {
        let name = Mutex<String?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            startThread(name: "singlecast-test-thread") {
                let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                name.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
                done.resume()
            }
        }
        #expect(name.withLock { $0 } == "singlecast-test")  // the kernel keeps 15 bytes
    }
}
