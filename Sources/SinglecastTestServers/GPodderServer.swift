import Foundation

/// A real gpodder.net API server that no one here wrote: PyPI's `gpodder-fastapi-router` under uvicorn with
/// aiosqlite, run by `Resources/gpodder_server.py` from the venv `scripts/bootstrap` creates, with a fresh SQLite
/// database and one user.
package final class GPodderServer: Sendable {
    package let port: Int
    package let user: String
    package let password: String
    private let server: PythonServer
    private let directory: TemporaryDirectory

    /// Where the venv is looked for: `$SINGLECAST_GPODDER_VENV`, else `scripts/bootstrap`'s cache directory,
    /// `${XDG_CACHE_HOME:-~/.cache}/singlecast-test/gpodder-venv`.
    package static var venv: String {
        let environment = ProcessInfo.processInfo.environment
        if let venv = environment["SINGLECAST_GPODDER_VENV"], !venv.isEmpty { return venv }
        let cache =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() + "/.cache")
        return cache + "/singlecast-test/gpodder-venv"
    }

    /// The venv's python when the server's packages are installed in it; `nil` otherwise (tests are then skipped,
    /// saying so).
    package static var python: String? {
        let python = venv + "/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        let libraries = venv + "/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: libraries)) ?? []
        let installed = versions.contains {
            FileManager.default.fileExists(atPath: "\(libraries)/\($0)/site-packages/gpodder_router")
        }
        return installed ? python : nil
    }

    /// - Throws: ``TestServerError`` when the venv is missing or the server does not come up.
    package init(user: String = "phone-owner", password: String = "secret", lifetime: Duration = .seconds(600)) throws {
        guard let python = Self.python else {
            throw TestServerError("no gpodder-fastapi-router venv at \(Self.venv); run scripts/bootstrap")
        }
        directory = try TemporaryDirectory(prefix: "singlecast-gpodder")
        server = try PythonServer(
            script: "gpodder_server",
            arguments: ["--user", user, "--password", password, "--log", directory.file("requests.log")],
            python: python,
            lifetime: lifetime
        )
        port = server.port
        self.user = user
        self.password = password
    }

    /// `Resources/gpodder_phone.py`: a phone speaking the API as AntennaPod does (run it with /usr/bin/python3).
    package static var phoneScript: String? {
        Bundle.module.url(forResource: "gpodder_phone", withExtension: "py", subdirectory: "Resources")?.path
    }

    /// `http://127.0.0.1:<port>`, the value of `sync_server`.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// Every request so far as `METHOD path?query status`, in order.
    package func requests() -> [String] {
        let text = (try? String(contentsOfFile: directory.file("requests.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
}
