import FoundationEssentials
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why the HTTP password could not be read or stored.
package struct WebPasswordError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// The password of HTTP Basic authentication: made on first use, kept in the state directory with mode 0600 so
/// that only this user reads it (`singlecastctl http-password` prints it), replaced by `--reset`.
package final class WebPassword: Sendable {
    /// The file, in the state directory.
    package let path: String
    private let cached = Mutex<String?>(nil)

    package static let fileName = "http-password"

    package init(stateDirectory: String) {
        path = stateDirectory + "/" + Self.fileName
    }

    /// The password, made and stored now if there is none yet.
    package func current() throws(WebPasswordError) -> String {
        if let password = cached.withLock({ $0 }) { return password }
        if let stored = try read() {
            cached.withLock { $0 = stored }
            return stored
        }
        return try reset()
    }

    /// Makes a new password and stores it; the old one stops working at once.
    @discardableResult
    package func reset() throws(WebPasswordError) -> String {
        let password = Self.generate()
        try write(password)
        cached.withLock { $0 = password }
        return password
    }

    /// 24 letters and digits from the system's random source: about 143 bits.
    static func generate() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")
        var random = SystemRandomNumberGenerator()
        return String((0..<24).map { _ in alphabet[Int(random.next(upperBound: UInt64(alphabet.count)))] })
    }

    private func read() throws(WebPasswordError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw WebPasswordError(message: "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0 && info.st_mode & 0o077 != 0 { _ = fchmod(fd, 0o600) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count >= 0 else {
            throw WebPasswordError(message: "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace()
        return text.isEmpty ? nil : text
    }

    /// Writes a new file beside the old and renames it over, so a reader never sees half a password.
    private func write(_ password: String) throws(WebPasswordError) {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw WebPasswordError(message: "cannot create '\(temporary)': \(String(cString: strerror(errno)))")
        }
        let line = Array((password + "\n").utf8)
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == line.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw WebPasswordError(message: "cannot store the HTTP password in '\(path)': \(reason)")
        }
    }
}
