import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The `sync_*` keys: where and as whom singlecast synchronises subscriptions and episode actions with a phone
/// through the gPodder API. Sync is off while `server` is `nil`.
package struct SyncSettings: Hashable, Sendable {
    /// Which dialect of the API the server speaks.
    package enum Flavor: String, Hashable, Sendable, CaseIterable {
        /// gpodder.net and the servers that copy its API (`/api/2/…`).
        case gpodder
        /// The Nextcloud gpoddersync app (`/index.php/apps/gpoddersync/…`).
        case nextcloud
    }

    /// The base URL, without a trailing slash; `nil` turns sync off.
    package var server: String?
    package var flavor = Flavor.gpodder
    package var user: String?
    /// A file holding the password alone (a final newline is dropped); it must be readable by its owner only.
    package var passwordFile: String?
    /// The device id singlecast registers; `nil` = `singlecast-<hostname>`.
    package var device: String?
    /// Time between two syncs, jittered by up to a tenth either way.
    package var interval: Duration = .seconds(15 * 60)
    /// What a podcast subscribed to on another device downloads here: the newest episode, so that what the phone
    /// subscribes to is there to listen to.
    package var autoDownload = EpisodePolicy.Fetch.latest(1)

    package init() {}

    /// Whether a server is set.
    package var isEnabled: Bool { server != nil }

    /// What is missing for sync to run, once a server is set; `nil` when nothing is.
    package var problem: String? {
        guard server != nil else { return nil }
        if user == nil { return "sync_server is set but sync_user is not" }
        if passwordFile == nil { return "sync_server is set but sync_password_file is not" }
        return nil
    }

    /// `device`, or `singlecast-<hostname>` with the host name's characters the API refuses replaced by `-`.
    package var deviceID: String {
        if let device { return device }
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        return "singlecast-" + String(host.map { Self.isDeviceCharacter($0) ? $0 : "-" })
    }

    /// gpodder.net accepts device ids of letters, digits, `.`, `-` and `_`.
    package static func isDeviceID(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy(isDeviceCharacter)
    }

    private static func isDeviceCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "._-".contains(character))
    }

    /// Why a password file may not be used: missing, not a regular file, or readable by others than its owner.
    package static func passwordFileProblem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return "sync_password_file '\(path)' cannot be read: \(String(cString: strerror(errno)))"
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return "sync_password_file '\(path)' is not a regular file"
        }
        guard status.st_mode & 0o077 == 0 else {
            return "sync_password_file '\(path)' must be readable by its owner only (chmod 600 '\(path)')"
        }
        return nil
    }

    /// The password in `passwordFile`, read now (at start and on every reload), its final line break dropped.
    package func readPassword() throws(SyncError) -> String {
        guard let path = passwordFile else { throw SyncError(.misconfigured, problem ?? "no password file") }
        if let problem = Self.passwordFileProblem(path) { throw SyncError(.misconfigured, problem) }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096,
            var text = String(data: data, encoding: .utf8)
        else {
            throw SyncError(.misconfigured, "sync_password_file '\(path)' is not a short UTF-8 text file")
        }
        while let last = text.last, last.isNewline { text.removeLast() }
        guard !text.isEmpty else { throw SyncError(.misconfigured, "sync_password_file '\(path)' is empty") }
        return text
    }
}
