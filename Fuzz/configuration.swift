@testable import SinglecastDaemon

/// The configuration file (`singlecast.conf`); its values name sizes, durations, times and rules.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzConfiguration(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    _ = try? DaemonConfiguration.parse(text, path: "singlecast.conf", home: "/home/user")
    return 0
}
