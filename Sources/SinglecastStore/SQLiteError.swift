internal import CSQLite

/// A failure reported by SQLite, with everything needed to tell what went wrong where.
///
/// The shape follows SQLite.swift's `Result` and GRDB's `DatabaseError`: the *extended* result code
/// (``code``), SQLite's own message, the SQL that failed, and for I/O failures the `errno` SQLite saw.
/// ``Store`` turns these into ``StoreError`` with a path and a fix; code inside this module sees them raw.
package struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code, for example 2067 (`SQLITE_CONSTRAINT_UNIQUE`).
    package var code: Int32
    /// `sqlite3_errmsg` at the time of the failure, or our own explanation when SQLite was not involved.
    package var message: String
    /// The statement that failed, when one was involved.
    package var sql: String?
    /// The operating system's `errno` behind an I/O or open failure (`sqlite3_system_errno`).
    package var systemErrno: Int32?

    package init(code: Int32, message: String, sql: String? = nil, systemErrno: Int32? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// The primary result code (the low byte of ``code``), for example 19 (`SQLITE_CONSTRAINT`).
    package var primaryCode: Int32 { code & 0xFF }

    /// SQLite's generic English name for ``code``, such as "database disk image is malformed".
    package var codeDescription: String { String(cString: sqlite3_errstr(code)) }

    package var description: String {
        var text = "SQLite error \(code) (\(codeDescription)): \(message)"
        if let systemErrno, systemErrno != 0 { text += " [errno \(systemErrno)]" }
        if let sql { text += " — SQL: \(sql)" }
        return text
    }
}

extension SQLiteError {
    /// Captures the connection's current error state right after a call returned `code`.
    ///
    /// `sqlite3_errmsg` and `sqlite3_system_errno` describe the *most recent* failing call, so this must run
    /// before anything else touches the connection.
    init(connection db: OpaquePointer, code: Int32, sql: String?) {
        let primary = code & 0xFF
        // > sqlite3_system_errno ... is only meaningful after an I/O or open error.
        let errnoMatters = primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_FULL
        let systemErrno = errnoMatters ? sqlite3_system_errno(db) : 0
        self.init(
            code: code,
            message: String(cString: sqlite3_errmsg(db)),
            sql: sql,
            systemErrno: systemErrno == 0 ? nil : systemErrno
        )
    }

    /// An error raised by this wrapper itself, worded with SQLite's name for `code`.
    static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, message: message, sql: sql)
    }
}
