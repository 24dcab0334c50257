import Foundation

/// The system's nginx serving a fresh temporary directory on a free loopback port, for tests that need a real,
/// well-behaved HTTP server: static files with `ETag`, `Last-Modified`, `Accept-Ranges`, `Range` and `If-Range`.
///
/// nginx runs in the foreground as a single process (`master_process off`), so it never changes user even when
/// the tests run as root, and every path it writes (pid, error log, temp directories) is inside the temporary
/// directory. It is stopped when the value is released, and by `timeout(1)` after ``init(lifetime:)``'s lifetime
/// should the test process die first.
package final class NginxServer: Sendable {
    /// The directory whose files are served at `/`.
    package let documentRoot: String
    /// The loopback port nginx listens on.
    package let port: Int
    private let directory: TemporaryDirectory
    private let process: ChildProcess

    /// Starts nginx.
    ///
    /// - Parameters:
    ///   - executable: The nginx binary (Debian: `nginx-light` or `nginx-core`).
    ///   - lifetime: nginx exits on its own after this long.
    /// - Throws: ``TestServerError`` with nginx's error log when it does not come up.
    package init(executable: String = "/usr/sbin/nginx", lifetime: Duration = .seconds(600)) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestServerError("\(executable) not found; install nginx-light (apt-get install nginx-light)")
        }
        let directory = try TemporaryDirectory(prefix: "singlecast-nginx")
        let root = directory.file("www")
        for name in ["www", "tmp"] {
            try FileManager.default.createDirectory(atPath: directory.file(name), withIntermediateDirectories: true)
        }
        var lastLog = ""
        for _ in 0..<8 {
            let port = try freeLoopbackPort()
            let configuration = directory.file("nginx.conf")
            try NginxServer.configuration(directory: directory.path, port: port)
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            let errorLog = directory.file("error.log")
            try? FileManager.default.removeItem(atPath: errorLog)
            let process = try ChildProcess(
                "/usr/bin/timeout",
                [
                    "-s", "TERM", "\(lifetime.components.seconds)", executable,
                    "-p", directory.path, "-c", configuration, "-e", errorLog,
                ]
            )
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && !acceptsConnections(port: port) && Date() < deadline {
                usleep(10_000)
            }
            if process.isRunning && acceptsConnections(port: port) {
                self.directory = directory
                self.documentRoot = root
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastLog = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            guard lastLog.contains("Address already in use") else { break }
        }
        throw TestServerError("nginx did not start; its error log says:\n\(lastLog)")
    }

    /// Stops nginx now instead of when the value is released.
    package func stop() { process.stop() }

    /// `http://127.0.0.1:<port><path>`; `path` starts with `/`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Writes `data` to `name` in the document root and returns its URL.
    @discardableResult
    package func serve(_ data: Data, as name: String) throws -> String {
        try data.write(to: URL(fileURLWithPath: "\(documentRoot)/\(name)"))
        return url("/\(name)")
    }

    /// The URL of nginx's `stub_status` page, whose "accepts" counts the connections it accepted so far.
    package var statusURL: String { url("/nginx-status") }

    /// The connections accepted so far, from the text of the ``statusURL`` page.
    package static func acceptedConnections(inStatus text: String) -> Int? {
        // "Active connections: 1 \nserver accepts handled requests\n 3 3 7 \n…"
        let lines = text.split(separator: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("server accepts") }), header + 1 < lines.count
        else { return nil }
        return lines[header + 1].split(separator: " ").first.flatMap { Int($0) }
    }

    private static func configuration(directory: String, port: Int) -> String {
        """
        worker_processes 1;
        master_process off;
        daemon off;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log warn;
        events { worker_connections 512; }
        http {
            access_log off;
            default_type application/octet-stream;
            sendfile on;
            tcp_nopush on;
            keepalive_requests 10000;
            client_body_temp_path \(directory)/tmp/client_body;
            proxy_temp_path \(directory)/tmp/proxy;
            fastcgi_temp_path \(directory)/tmp/fastcgi;
            uwsgi_temp_path \(directory)/tmp/uwsgi;
            scgi_temp_path \(directory)/tmp/scgi;
            server {
                listen 127.0.0.1:\(port);
                root \(directory)/www;
                # How many connections nginx accepted, for tests of connection reuse.
                location = /nginx-status { stub_status; }
            }
        }

        """
    }
}
