/// Where singlecastd listens by default, shared by the daemon and the client so both agree.
package enum SocketLocation {
    /// Environment variable that points the client at another socket (the `--socket` flag wins over it).
    package static let environmentVariable = "SINGLECAST_SOCKET"

    /// `$XDG_RUNTIME_DIR/singlecast/control.sock`, or `/tmp/singlecast-<uid>/control.sock` when
    /// `XDG_RUNTIME_DIR` is unset or not absolute (the XDG spec says to ignore relative values).
    ///
    /// The `/tmp` fallback is safe because the daemon creates that directory itself with mode 0700 and
    /// refuses to use it when another user owns it.
    package static func defaultSocketPath(environment: [String: String], uid: UInt32) -> String {
        defaultDirectory(environment: environment, uid: uid) + "/control.sock"
    }

    /// The directory that holds the default socket.
    package static func defaultDirectory(environment: [String: String], uid: UInt32) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return trimmingTrailingSlashes(runtime) + "/singlecast"
        }
        return "/tmp/singlecast-\(uid)"
    }

    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }
}
