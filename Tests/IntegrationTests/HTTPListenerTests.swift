import Foundation
import SinglecastProtocol
import SinglecastTestServers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP listener of a real singlecastd, asked by curl and python3: who is served, who is refused, and that
/// hostile clients leave the daemon up and its memory flat.
@Suite(.serialized) struct HTTPListenerTests {
    /// A daemon with the listener on 127.0.0.1 and [::1] at a free port.
    final class WebDaemon {
        let daemon: DaemonProcess
        let port: Int

        init(config: String = "", port: Int? = nil, timeout: String = "3s") throws {
            daemon = DaemonProcess()
            self.port = try port ?? freeLoopbackPort()
            try daemon.writeConfig(
                "http_listen = 127.0.0.1:\(self.port), [::1]:\(self.port)\nhttp_timeout = \(timeout)\n" + config
            )
            try daemon.startAndWaitUntilReady()
        }

        var password: String {
            ((try? String(contentsOfFile: daemon.stateDirectory + "/http-password", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func url(_ path: String, host: String = "127.0.0.1") -> String { "http://\(host):\(port)\(path)" }

        /// curl's status code and body; `credentials: nil` sends none.
        func curl(
            _ path: String,
            credentials: String? = "",
            host: String = "127.0.0.1",
            _ arguments: [String] = []
        ) throws -> (status: Int, body: String) {
            var all = ["-s", "-g", "-w", "\n%{http_code}"]
            if let credentials { all += ["-u", credentials.isEmpty ? "singlecast:\(password)" : credentials] }
            let run = try runProgram("/usr/bin/curl", all + arguments + [url(path, host: host)])
            let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
        }

        /// The CSRF token from `GET /session`.
        func csrfToken() throws -> String {
            let session = try curl("/session")
            let object = try JSONSerialization.jsonObject(with: Data(session.body.utf8)) as? [String: Any]
            return try #require(object?["csrf_token"] as? String)
        }

        var rssKiB: Int {
            let status =
                (try? String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8))
            let line = status?.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            return Int(line?.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
    }

    /// Runs a python3 script with `arguments`; its stdout.
    static func python(_ script: String, _ arguments: [String] = []) throws -> String {
        let run = try runProgram("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard run.status == 0 else { throw HarnessError("python3 failed: \(run.stderr)") }
        return run.stdout
    }

    @Test func refusalsHaveClearStatuses() throws {
        let web = try WebDaemon()
        defer { _ = web.daemon.stop() }
        #expect(try web.curl("/session", credentials: nil).status == 401)
        #expect(try web.curl("/session", credentials: "singlecast:wrong").status == 401)
        #expect(try web.curl("/session").status == 200)
        #expect(try web.curl("/no/such/path").status == 404)
        #expect(try web.curl("/session", ["-H", "Host: rebind.example:\(web.port)"]).status == 403)
        #expect(try web.curl("/session", ["-H", "Origin: http://evil.example"]).status == 403)
        #expect(try web.curl("/session", ["-H", "Origin: http://127.0.0.1:\(web.port)"]).status == 200)
        let ping = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        #expect(try web.curl("/rpc", ["-X", "POST", "-d", ping]).status == 403, "no CSRF header")
        let token = try web.csrfToken()
        let answered = try web.curl("/rpc", ["-H", "X-Singlecast-CSRF: \(token)", "-d", ping])
        #expect(answered.status == 200)
        #expect(answered.body.contains(#""pong":true"#))
        let big = web.daemon.root.file("big")
        try Data(count: 300_000).write(to: URL(fileURLWithPath: big))
        #expect(try web.curl("/rpc", ["-H", "X-Singlecast-CSRF: \(token)", "--data-binary", "@\(big)"]).status == 413)
        #expect(try web.curl("/rpc", ["-H", "X-Singlecast-CSRF: \(token)"]).status == 405, "GET /rpc")
        // Huge headers: over the connection's header memory, libmicrohttpd answers 431 and the daemon stays up.
        let huge = String(repeating: "a", count: 64 << 10)
        #expect(try web.curl("/session", ["-H", "X-Filler: \(huge)"]).status == 431)
        #expect(try web.curl("/session").status == 200)
    }

    @Test func rpcAnswersStatusLikeTheControlSocketAndIPv6Works() throws {
        let web = try WebDaemon()
        defer { _ = web.daemon.stop() }
        let token = try web.csrfToken()
        let answer = try web.curl(
            "/rpc",
            host: "[::1]",
            ["-H", "X-Singlecast-CSRF: \(token)", "-d", #"{"jsonrpc":"2.0","id":7,"method":"status"}"#]
        )
        #expect(answer.status == 200)
        let status = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        #expect(status?["id"] as? Int == 7)
        let http = try #require((status?["result"] as? [String: Any])?["http"] as? [String: Any])
        #expect(http["listening"] as? [String] == [web.url(""), "http://[::1]:\(web.port)"])
        #expect(http["auth"] as? String == "basic")
        // The same password through the CLI.
        let cli = try runProgram(
            Binaries.client.path,
            ["--socket", web.daemon.socketPath, "--json", "http-password"]
        )
        #expect(cli.status == 0)
        #expect(cli.stdout.contains(web.password))
        let mode =
            try FileManager.default.attributesOfItem(atPath: web.daemon.stateDirectory + "/http-password")[
                .posixPermissions
            ] as? Int
        #expect(mode == 0o600)
        let old = web.password
        let reset = try runProgram(
            Binaries.client.path,
            ["--socket", web.daemon.socketPath, "http-password", "--reset"]
        )
        #expect(reset.status == 0)
        #expect(web.password != old && reset.stdout.contains(web.password))
        #expect(try web.curl("/session", credentials: "singlecast:\(old)").status == 401)
        #expect(try web.curl("/session").status == 200)
    }

    @Test func aThousandBadPasswordsAreThrottledAndMemoryStaysFlat() throws {
        let web = try WebDaemon()
        defer { _ = web.daemon.stop() }
        _ = try web.curl("/session")
        let baseline = web.rssKiB
        let script = """
            import base64, collections, http.client, sys
            counts = collections.Counter()
            retry = None
            for i in range(1000):
                c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
                auth = base64.b64encode(b"singlecast:guess%d" % i).decode()
                c.request("GET", "/session", headers={"Authorization": "Basic " + auth})
                r = c.getresponse()
                r.read()
                counts[r.status] += 1
                retry = r.getheader("Retry-After") or retry
                c.close()
            print(counts[401], counts[429], retry)
            """
        let output = try Self.python(script, [String(web.port)]).split(separator: " ")
        let (challenged, throttled) = (Int(output[0]) ?? -1, Int(output[1]) ?? -1)
        #expect(challenged >= 5 && challenged <= 8, "\(output)")
        #expect(challenged + throttled == 1000)
        #expect(Int(output[2].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0)
        // Another address is not held up, and the daemon answers.
        #expect(try web.curl("/session", host: "[::1]").status == 200)
        let after = web.rssKiB
        #expect(after < baseline + 8192, "RSS \(baseline) KiB before, \(after) KiB after")
        print("1,000 bad passwords: \(challenged) × 401, \(throttled) × 429; RSS \(baseline) → \(after) KiB")
    }

    @Test func slowClientsAreDroppedAfterTheTimeout() async throws {
        let web = try WebDaemon()
        defer { _ = web.daemon.stop() }
        _ = try web.curl("/session")
        let baseline = web.rssKiB
        let script = """
            import socket, sys, time
            port = int(sys.argv[1])
            held = []
            for i in range(200):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                s.sendall(b"GET /session HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nX-Slow: ")
                held.append(s)
            time.sleep(5)
            dropped = 0
            for s in held:
                try:
                    s.settimeout(0.5)
                    if s.recv(1) == b"":
                        dropped += 1
                except ConnectionResetError:
                    dropped += 1
                except socket.timeout:
                    pass
            print(dropped)
            """
        // While the half-open connections are held, the other address is still served.
        let port = web.port
        let attack = Task { try await onOwnThread { try Self.python(script, [String(port)]) } }
        usleep(1_000_000)
        #expect(try web.curl("/session", host: "[::1]").status == 200)
        let dropped = Int(try await attack.value.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(dropped == 200, "\(dropped) of 200 half-open connections were closed")
        #expect(try web.curl("/session").status == 200)
        #expect(web.rssKiB < baseline + 8192)
    }

    @Test func eventsStreamADownloadsEvents() async throws {
        let nginx = try NginxServer()
        let url = try nginx.serve(Data((0..<(256 << 10)).map { _ in UInt8.random(in: 0...255) }), as: "e.mp3")
        let web = try WebDaemon()
        defer { _ = web.daemon.stop() }
        // The reader marks when its stream is open (the daemon then sends it every event), and gives up after a
        // minute rather than reading heartbeats for ever.
        let script = """
            import base64, http.client, sys, time
            c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=20)
            auth = base64.b64encode(("singlecast:" + sys.argv[2]).encode()).decode()
            c.request("GET", sys.argv[4], headers={"Authorization": "Basic " + auth})
            r = c.getresponse()
            print(r.status, r.getheader("Content-Type"), flush=True)
            open(sys.argv[3], "w").close()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = r.fp.readline().decode()
                if not line:
                    break
                if line.startswith("data: "):
                    print(line.strip(), flush=True)
                    if "download.completed" in line:
                        break
            """
        let port = web.port
        let password = web.password
        let marker = web.daemon.root.file("stream-open")
        let reader = Task {
            try await onOwnThread {
                try Self.python(script, [String(port), password, marker, "/events?topics=downloads"])
            }
        }
        // A stream of the completions alone, as `watch` with `events` chooses them.
        let completionsMarker = web.daemon.root.file("completions-open")
        let completions = Task {
            try await onOwnThread {
                try Self.python(
                    script,
                    [String(port), password, completionsMarker, "/events?events=download.completed"]
                )
            }
        }
        // Enqueued before the streams are open, the download could finish unseen on a busy machine.
        let opened = ContinuousClock.now + .seconds(60)
        while !(FileManager.default.fileExists(atPath: marker)
            && FileManager.default.fileExists(atPath: completionsMarker))
            && ContinuousClock.now < opened
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try web.curl("/events?events=download.done").status == 400)
        let client = try LineClient(path: web.daemon.socketPath)
        let params = String(
            decoding: try JSONEncoder().encode(EnqueueParams(urls: [url], directory: web.daemon.root.file("ep"))),
            as: UTF8.self
        )
        _ = try client.call("enqueue", params: params)
        let output = try await reader.value
        #expect(output.hasPrefix("200 text/event-stream"))
        #expect(output.contains(#"data: {"jsonrpc":"2.0","method":"download.added""#))
        #expect(output.contains(#""method":"download.completed""#))
        let completed = try await completions.value
        #expect(completed.hasPrefix("200 text/event-stream"))
        #expect(
            completed.split(separator: "\n").dropFirst().map { $0.contains(#""method":"download.completed""#) } == [
                true
            ]
        )
    }

    /// A page that stops reading its event stream costs the daemon a bounded buffer; it then loses the oldest
    /// events and is told so with `events.dropped`, as a `watch` client is.
    @Test func aSlowEventConsumerIsToldWhatItLost() async throws {
        let web = try WebDaemon(config: "max_concurrent = 1\n", timeout: "60s")
        defer { _ = web.daemon.stop() }
        let script = """
            import base64, os, socket, sys, time
            port, password, marker = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            auth = base64.b64encode(("singlecast:" + password).encode()).decode()
            s.sendall(("GET /events?topics=downloads HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n"
                       "Authorization: Basic %s\\r\\n\\r\\n" % (port, auth)).encode())
            # The response's head says the stream is open (nothing is queued before it, so no event is read here).
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                byte = s.recv(1)
                if not byte:
                    sys.exit("the stream closed before its head")
                head += byte
            open(marker + ".open", "w").close()
            # Not reading until the test's enqueue has been answered, however long that takes on a busy machine.
            deadline = time.monotonic() + 120
            while not os.path.exists(marker) and time.monotonic() < deadline:
                time.sleep(0.1)
            s.settimeout(5)
            tail, total, added = b"", 0, 0
            try:
                # The failing downloads' retries keep events coming, so the reading has a deadline of its own.
                while b"events.dropped" not in tail and time.monotonic() < deadline:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    total += len(chunk)
                    added += (tail[-40:] + chunk).count(b"download.added") - tail[-40:].count(b"download.added")
                    tail = tail[-40:] + chunk
            except socket.timeout:
                pass
            print("dropped" if b"events.dropped" in tail else "none", total, added)
            """
        let port = web.port
        let password = web.password
        let marker = web.daemon.root.file("enqueued")
        let reader = Task { try await onOwnThread { try Self.python(script, [String(port), password, marker]) } }
        // Enqueued before the stream is open, the events would never reach it on a busy machine.
        let opened = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: marker + ".open") && ContinuousClock.now < opened {
            try await Task.sleep(for: .milliseconds(20))
        }
        let baseline = web.rssKiB
        let urls = (0..<20_000).map { "http://127.0.0.1:9/\($0).mp3" }
        let params = String(
            decoding: try JSONEncoder().encode(EnqueueParams(urls: urls, directory: web.daemon.root.file("ep"))),
            as: UTF8.self
        )
        let client = try LineClient(path: web.daemon.socketPath, timeout: 60)
        _ = try client.call("enqueue", params: params)
        let peak = web.rssKiB
        FileManager.default.createFile(atPath: marker, contents: nil)
        let output = try await reader.value.split(separator: " ")
        #expect(output.first == "dropped", "\(output)")
        print("slow /events consumer: \(output); RSS \(baseline) → \(peak) KiB while it did not read")
    }

    @Test func reloadMovesTheListenerAndStopEndsEventStreams() throws {
        let web = try WebDaemon()
        #expect(try web.curl("/session").status == 200)
        let newPort = try freeLoopbackPort()
        try web.daemon.writeConfig("http_listen = 127.0.0.1:\(newPort)\n")
        web.daemon.signal(SIGHUP)
        let messages = try #require(web.daemon.notify.receive(until: "READY=1"))
        #expect(messages.joined().contains("web on http://127.0.0.1:\(newPort)"))
        let moved = try runProgram(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "singlecast:\(web.password)",
                "http://127.0.0.1:\(newPort)/session",
            ]
        )
        #expect(moved.stdout == "200")
        #expect(try web.curl("/session").status == 0, "nothing listens on the old port")
        // SIGTERM with an event stream open: the stream ends with daemon.stopping and the daemon exits cleanly.
        let events = web.daemon.root.file("events.out")
        let stream = Process()
        stream.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        stream.arguments = [
            "-s", "-N", "-o", events, "-u", "singlecast:\(web.password)",
            "http://127.0.0.1:\(newPort)/events?topics=daemon",
        ]
        try stream.run()
        #expect(eventually { (try? String(contentsOfFile: events, encoding: .utf8))?.contains("retry:") == true })
        #expect(web.daemon.stop() == 0)
        stream.waitUntilExit()
        #expect(try String(contentsOfFile: events, encoding: .utf8).contains("daemon.stopping"))
    }

    /// singlecastd.socket with a second, TCP socket named `http`, as systemd-socket-activate passes it.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"),
            "needs systemd-socket-activate"
        )
    )
    func aSocketNamedHTTPFromSystemdIsServed() throws {
        let daemon = DaemonProcess()
        let socketPath = daemon.root.file("activated.sock")
        let port = try freeLoopbackPort()
        var wrapper = daemon.socketActivationWrapper("/usr/bin/systemd-socket-activate", socketPath)
        wrapper.insert(contentsOf: ["--listen=127.0.0.1:\(port)", "--fdname=control:http"], at: 2)
        try daemon.start(wrapper: wrapper)
        try waitForListener(socketPath)
        let status = try LineClient(path: socketPath).result("status", as: StatusResult.self)
        #expect(status.socketActivated)
        #expect(status.http?.listening == ["http://127.0.0.1:\(port)"])
        let password = try LineClient(path: socketPath).result("http_password", as: HTTPPasswordResult.self).password
        // Foundation's Process does not reap curl while the activated daemon, also a child, runs: spawnAndWait.
        let output = daemon.root.file("curl.out")
        let arguments = [
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "singlecast:\(password)",
            "http://127.0.0.1:\(port)/session",
        ]
        #expect(try spawnAndWait("/usr/bin/curl", arguments, output: output) == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "200")
        // A reload keeps systemd's socket.
        daemon.signal(SIGHUP)
        #expect(daemon.notify.receive(until: "READY=1") != nil)
        #expect(try spawnAndWait("/usr/bin/curl", arguments, output: output) == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "200")
        #expect(daemon.stop() == 0)
    }

    @Test func authOffIsRefusedOnANonLoopbackAddress() throws {
        let daemon = DaemonProcess()
        try daemon.writeConfig("http_listen = 0.0.0.0:\(try freeLoopbackPort())\nhttp_auth = off\n")
        try daemon.start()
        #expect(daemon.waitForExit() == 78)
        #expect(daemon.log.contains("http_auth = off is allowed only when every http_listen address is loopback"))
        // On loopback only, off is accepted and nobody is asked for a password.
        let open = try WebDaemon(config: "http_auth = off\n")
        defer { _ = open.daemon.stop() }
        #expect(try open.curl("/session", credentials: nil).status == 200)
        #expect(try open.curl("/session", ["-H", "Host: rebind.example"]).status == 403)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "needs openssl"))
    func tlsWithASelfSignedCertificate() throws {
        let root = TemporaryDirectory()
        let key = root.file("key.pem")
        let certificate = root.file("cert.pem")
        let made = try runProgram(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=127.0.0.1",
            ]
        )
        try #require(made.status == 0, "\(made.stderr)")
        let web = try WebDaemon(config: "http_tls_cert = \(certificate)\nhttp_tls_key = \(key)\n")
        defer { _ = web.daemon.stop() }
        let run = try runProgram(
            "/usr/bin/curl",
            [
                "-s", "-k", "-w", "\n%{http_code}", "-u", "singlecast:\(web.password)",
                "https://127.0.0.1:\(web.port)/session",
            ]
        )
        #expect(run.stdout.hasSuffix("\n200"))
        // The page's origin is https now.
        let origin = try runProgram(
            "/usr/bin/curl",
            [
                "-s", "-k", "-o", "/dev/null", "-w", "%{http_code}", "-u", "singlecast:\(web.password)",
                "-H", "Origin: https://127.0.0.1:\(web.port)", "https://127.0.0.1:\(web.port)/session",
            ]
        )
        #expect(origin.stdout == "200")
        #expect(try web.curl("/session").status != 200, "plain HTTP on the TLS port")
    }
}
