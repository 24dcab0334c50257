import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under `$TMPDIR` (or `/tmp`), removed with everything in it when the value is released.
package final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    package let path: String

    /// Creates `<tmp>/<prefix>.XXXXXX` with mode 0700.
    ///
    /// - Throws: ``TestServerError`` when `mkdtemp` fails.
    package init(prefix: String = "singlecast-test") throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw TestServerError("mkdtemp in \(base) failed: \(String(cString: strerror(errno))); check TMPDIR")
        }
        path = String(cString: created)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The absolute path of `name` inside the directory.
    package func file(_ name: String) -> String { "\(path)/\(name)" }
}

/// A test peer could not be set up; the message says what failed and how to fix it.
package struct TestServerError: Error, CustomStringConvertible, Sendable {
    package var description: String

    package init(_ description: String) { self.description = description }
}
