import SinglecastSupport

@testable import SinglecastDaemon

/// Episode rules as `set`, the configuration and the store write them: `key = value` lines. The first byte picks
/// the reader: every line set rule by rule, or the whole text read as the stored form.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzEpisodeRules(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    var rules = EpisodeRules()
    if bytes.first.map({ $0 & 1 == 0 }) ?? true {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key =
                EpisodeRules.Key(rawValue: String(parts[0]).trimmingWhitespace())
                ?? EpisodeRules.Key.allCases[Int(line.utf8.first ?? 0) % EpisodeRules.Key.allCases.count]
            try? rules.set(key, to: parts.count > 1 ? String(parts[1]) : String(line))
        }
    } else {
        rules = EpisodeRules(stored: text)
    }
    try? rules.validate()
    let combined = rules.over(EpisodeRules(stored: "max_age = 30d\ntitle_exclude = trailer"))
    for key in EpisodeRules.Key.allCases {
        // The written form reads back: what the store keeps, `rules` shows.
        _ = combined.value(of: key)
        _ = rules.value(of: key)
    }
    _ = combined.titleExclude?.match(text)
    _ = combined.titleInclude?.match(text)
    return 0
}
