import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A file operation's error as a person reads it: the system's reason (`strerror`) and the path it concerns, such
/// as "Permission denied (/home/ada/Podcasts)". FoundationEssentials' errors carry the `errno` but print as a
/// dump of their fields.
package func describeFileError(_ error: any Error) -> String {
    if let cocoa = error as? CocoaError {
        if let posix = cocoa.underlying as? POSIXError {
            let reason = String(cString: strerror(posix.code.rawValue))
            return cocoa.filePath.map { "\(reason) (\($0))" } ?? reason
        }
        if let path = cocoa.filePath { return "error \(cocoa.code.rawValue) (\(path))" }
    }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    return String(describing: error)
}
