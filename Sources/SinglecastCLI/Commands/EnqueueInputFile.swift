import FoundationEssentials
import SinglecastSupport

/// `enqueue -i FILE`: URLs (and episode IDs), one a line, as aria2c's `-i` reads them.
///
/// Blank lines and lines starting with `#` are skipped. A line that cannot be a URL is reported with its number and
/// left out, so that one typo does not cost the rest of a long list; the daemon still judges every URL sent.
package enum EnqueueInputFile {
    /// A line left out, and why.
    package struct Problem: Hashable, Sendable {
        package var line: Int
        package var text: String
        package var reason: String
    }

    /// The words to enqueue, in order, and the lines left out.
    package static func parse(_ text: String) -> (words: [String], problems: [Problem]) {
        var words: [String] = []
        var problems: [Problem] = []
        // `\r\n` is one Character, so it is a separator of its own.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if let reason = problem(line) {
                problems.append(Problem(line: index + 1, text: line, reason: reason))
            } else {
                words.append(line)
            }
        }
        return (words, problems)
    }

    /// Why a line is no URL and no episode ID, or `nil`. Only the shape is looked at here (one word, an http or https
    /// scheme, a host); what else a URL must be is the daemon's to say.
    static func problem(_ line: String) -> String? {
        if line.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let id = OutsideNumber.decimal(line), id > 0 else {
                return "an episode ID is a positive whole number"
            }
            return nil
        }
        if line.contains(where: \.isWhitespace) { return "one URL a line, without spaces" }
        let lowered = line.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            return "not an http or https URL"
        }
        let rest = line.drop(while: { $0 != ":" }).dropFirst(3)
        if rest.isEmpty || rest.hasPrefix("/") { return "the URL names no host" }
        return nil
    }

    /// `-i`'s report of a line left out: `urls.txt:3: not an http or https URL: ftp://example.com/a.mp3`.
    package static func describe(_ problem: Problem, in file: String) -> String {
        "\(file == "-" ? "standard input" : file):\(problem.line): \(problem.reason): \(problem.text)\n"
    }
}
