import Foundation
import SinglecastStore

/// A fresh directory under the system temporary directory, removed when the test ends.
///
/// Every test gets its own real directory because WAL needs real files (`-wal`, `-shm`) next to the database.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("singlecast-store.XXXXXX")
    var template = Array(base.path.utf8CString)
    let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard let created else { throw CocoaError(.fileWriteUnknown) }
    let directory = String(cString: created)
    defer {
        // A test may have made the directory unreadable; restore access so it can be removed.
        chmod(directory, 0o700)
        try? FileManager.default.removeItem(atPath: directory)
    }
    return try await body(directory)
}

/// The file's bytes, for "left untouched" checks.
func contents(of path: String) -> Data? {
    FileManager.default.contents(atPath: path)
}

/// Opens a raw connection configured the way the store configures its own.
func configuredConnection(_ path: String) throws -> Connection {
    let connection = try Connection(path: path)
    try connection.configureForStore()
    return connection
}

/// Whether the tests run as root, for whom file permissions do not apply.
var runningAsRoot: Bool { geteuid() == 0 }
