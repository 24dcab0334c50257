import SinglecastHTTP

@testable import SinglecastDaemon

/// A response's header block as libcurl hands it over, line by line, to the body policy that decides where its bytes
/// go; then the headers the daemon reads on their own (`Retry-After`, `Content-Range`, `Content-Length`).
///
/// The first 8 bytes are the resume offset the request was made with; the rest is header lines.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzHTTPHeaders(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    var offset: Int64 = 0
    for byte in bytes.prefix(8) { offset = offset << 8 | Int64(byte) }
    // Split at LF bytes, each line keeping its terminator, as libcurl hands them over: a String split at "\n" would
    // not split at all, since "\r\n" is one Character.
    let lines = bytes.dropFirst(8).split(separator: 0x0A, omittingEmptySubsequences: false).map { Array($0) + [0x0A] }
    let resumeOffset = max(0, offset)
    for expectedTotal in [nil, resumeOffset &+ 1000] {
        var policy = ResponseBodyPolicy(
            .init(resumeOffset: resumeOffset, expectedTotal: expectedTotal, maxFileSize: 1 << 40)
        )
        for line in lines { _ = line.withUnsafeBytes { policy.receiveHeaderLine($0) } }
        _ = policy.receiveBody(count: 65_536)
        _ = policy.receiveBody(count: 1)
        _ = policy.contentLength
        _ = policy.totalLength
        _ = policy.bytesInFile
        _ = RetryPolicy.retryAfter(policy.headers["retry-after"], nowMilliseconds: 1_780_000_000_000)
    }
    for line in lines {
        let value = String(decoding: line, as: UTF8.self).drop { $0 != ":" }.dropFirst()
        _ = RetryPolicy.retryAfter(String(value), nowMilliseconds: 1_780_000_000_000)
        _ = ContentRange(String(value))
        _ = ContentRange.unsatisfiedTotal(String(value))
    }
    return 0
}
