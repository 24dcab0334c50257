import FoundationEssentials
import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// A store failure with a stable ``code``, a message that says what failed and how to fix it, and the path.
///
/// The daemon logs ``message`` as is and exits on anything raised while opening; ``code`` is what code and
/// tests branch on, because messages may be reworded.
package struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; the raw values are stable for logs and the control protocol.
    package enum Code: String, Sendable {
        /// The file or its directory could not be opened (missing directory, permissions, a directory at the
        /// path…).
        case cannotOpen = "cannot_open"
        /// The file exists but is not an SQLite database; it was left untouched.
        case notADatabase = "not_a_database"
        /// The database failed `PRAGMA quick_check` or SQLite reported corruption; it was left untouched.
        case corrupt
        /// The schema was written by a newer singlecast; the file was left untouched.
        case newerSchema = "newer_schema"
        /// The file or its directory is write-protected.
        case readOnly = "read_only"
        /// Reading or writing failed (disk full, failing disk, file system errors).
        case io
        /// Any other SQLite failure; ``sqliteCode`` and the message say which.
        case sqlite
        /// The store was used after ``Store/close()``; a programming error in the caller.
        case closed
        /// A record the caller named does not exist.
        case notFound = "not_found"
    }

    package var code: Code
    /// Full sentences including the path and the fix.
    package var message: String
    /// The database path involved.
    package var path: String
    /// The SQLite extended result code, when SQLite reported the failure.
    package var sqliteCode: Int32?

    package init(code: Code, message: String, path: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.sqliteCode = sqliteCode
    }

    package var description: String { message }
}

extension StoreError: LocalizedError {
    /// Makes `localizedDescription` print the message rather than "The operation couldn't be completed".
    package var errorDescription: String? { message }
}

extension StoreError {
    /// The advice for any database singlecastd refuses to touch.
    static let moveAside =
        "Move the file aside (with any -wal and -shm files next to it) and start again; "
        + "singlecastd never overwrites a database it cannot read."

    /// Classifies an SQLite failure that happened while `activity` (e.g. "opening it", "recording a run").
    ///
    /// - Parameters:
    ///   - error: The raw failure.
    ///   - path: The database path, quoted in the message.
    ///   - activity: A gerund phrase naming what the store was doing.
    init(_ error: SQLiteError, path: String, while activity: String) {
        let code: Code
        let text: String
        switch error.primaryCode {
        case 26:  // SQLITE_NOTADB
            code = .notADatabase
            text = "\(path) is not an SQLite database (\(error.message)). \(Self.moveAside)"
        case 11:  // SQLITE_CORRUPT
            code = .corrupt
            text =
                "The database at \(path) is corrupt (SQLite reported \"\(error.message)\" while \(activity)). "
                + "\(Self.moveAside) "
                + "`sqlite3 <copy> .recover` may salvage data from a copy."
        case 14, 3:  // SQLITE_CANTOPEN, SQLITE_PERM
            code = .cannotOpen
            text = "Cannot open the database at \(path): \(Self.explainOpenFailure(path: path, error: error))"
        case 8:  // SQLITE_READONLY
            code = .readOnly
            text =
                "The database at \(path) is read-only (SQLite reported \"\(error.message)\" while \(activity)). "
                + "Make the file and its "
                + "directory writable by the user running singlecastd."
        case 10, 13:  // SQLITE_IOERR, SQLITE_FULL
            code = .io
            text =
                "Reading or writing the database at \(path) failed while \(activity) (\(error.message)"
                + "\(error.systemErrno.map { ", " + Self.describe(errno: $0) } ?? "")). Check free disk space "
                + "and the disk's health, then start singlecastd again."
        default:
            code = .sqlite
            text = "SQLite failed on the database at \(path) while \(activity): \(error.description)"
        }
        self.init(code: code, message: text, path: path, sqliteCode: error.code)
    }

    static func closed(path: String) -> StoreError {
        StoreError(
            code: .closed,
            message: "The store at \(path) is closed; it cannot be used after close(). This is a bug in the caller.",
            path: path
        )
    }

    static func corrupt(path: String, problems: [String]) -> StoreError {
        StoreError(
            code: .corrupt,
            message: "The database at \(path) failed PRAGMA quick_check: \(problems.joined(separator: "; ")). "
                + Self.moveAside,
            path: path
        )
    }

    static func newerSchema(path: String, found: Int, latest: Int) -> StoreError {
        StoreError(
            code: .newerSchema,
            message: "The database at \(path) has schema version \(found), but this singlecastd knows versions up "
                + "to \(latest); a newer singlecast wrote it. Upgrade singlecastd, or move the file aside to start "
                + "again. The file was left untouched.",
            path: path
        )
    }

    static func readOnly(path: String) -> StoreError {
        StoreError(
            code: .readOnly,
            message: "The database at \(path) can only be opened read-only. Make the file and its directory "
                + "writable by the user running singlecastd.",
            path: path
        )
    }

    /// Says why the open failed and what to do, preferring facts about the path over SQLite's generic text.
    private static func explainOpenFailure(path: String, error: SQLiteError) -> String {
        let directory = parentDirectory(of: path)
        var isDirectory = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            return "the directory \(directory) does not exist. Create it first (singlecastd creates the "
                + "database file but not its directory), or point singlecastd at another path."
        }
        if !isDirectory {
            return "\(directory) is not a directory. Point singlecastd at a path inside a directory."
        }
        let cause = error.systemErrno.map { Self.describe(errno: $0) } ?? error.message
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory {
            return "\(cause); the path is a directory. Point singlecastd at a file path."
        }
        return "\(cause). Check that the user running singlecastd can read and write the file and its "
            + "directory \(directory) (SQLite creates -wal and -shm files next to the database)."
    }

    /// "No such file or directory (errno 2, ENOENT)" style text.
    static func describe(errno code: Int32) -> String {
        let names: [Int32: String] = [
            EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", EACCES: "EACCES", EEXIST: "EEXIST",
            ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", ENOSPC: "ENOSPC", EROFS: "EROFS", ELOOP: "ELOOP",
            ENAMETOOLONG: "ENAMETOOLONG", EDQUOT: "EDQUOT", EMFILE: "EMFILE", ENFILE: "ENFILE",
        ]
        let reason = String(cString: strerror(code))
        return "\(reason) (errno \(code)\(names[code].map { ", " + $0 } ?? ""))"
    }
}
