import Foundation
import SinglecastDaemon
import Testing

/// The web view's page and the personal feeds' QR codes, as a browser and a phone's camera get them.
@Suite struct WebPageTests {
    private func request(
        _ path: String,
        method: WebRequest.Method = .get,
        query: [String: String] = [:]
    ) -> WebRequest {
        WebRequest(method: method, rawPath: path, query: query, baseURL: "http://127.0.0.1:8372")
    }

    @Test func thePageItsScriptAndItsStyleSheetAreServedWithAPolicyThatRunsOnlyThem() async throws {
        let route = WebPageRoute()
        let page = try #require(await route.respond(to: request("/")))
        #expect(page.status == 200)
        let headers = Dictionary(page.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        #expect(headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(headers["Content-Security-Policy"]?.contains("script-src 'self'") == true)
        guard case .bytes(let html) = page.body else {
            Issue.record("the page has no body")
            return
        }
        // Every script and style sheet the page names is one the route serves.
        let text = String(decoding: html, as: UTF8.self)
        let named = text.matches(of: /(?:src|href)="(\/[^"]+)"/).map { String($0.output.1) }
        #expect(Set(named) == ["/app.css", "/app.js"])
        for path in named {
            let asset = try #require(await route.respond(to: request(path)), "\(path) is not served")
            #expect(asset.status == 200)
        }
        #expect(!text.contains("<script>"), "an inline script would need a weaker policy")
        #expect(await route.respond(to: request("/missing.js")) == nil)
        #expect(await route.respond(to: request("/", method: .post))?.status == 405)
    }

    @Test func aFeedsQRCodeDecodesToItsURLAndCarriesTheCredentialsOnlyWhenAsked() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/rsvg-convert"),
            "zbar-tools and librsvg2-bin decode the image (scripts/bootstrap installs them)"
        )
        let route = FeedQRCodeRoute(
            podcastExists: { $0 == 3 },
            credentials: { (user: "singlecast", password: "a:b@c/d é") }
        )
        let plain = try #require(await route.respond(to: request("/feeds/3.svg")))
        #expect(plain.status == 200)
        #expect(try decode(plain) == "http://127.0.0.1:8372/feeds/3.xml")
        let withSecret = try #require(await route.respond(to: request("/feeds/3.svg", query: ["credentials": "1"])))
        #expect(
            try decode(withSecret) == "http://singlecast:a%3Ab%40c%2Fd%20%C3%A9@127.0.0.1:8372/feeds/3.xml"
        )
        #expect(await route.respond(to: request("/feeds/4.svg"))?.status == 404)
    }

    @Test(arguments: [
        "/feeds/.svg", "/feeds/-1.svg", "/feeds/3.xml", "/feeds/99999999999999999999.svg", "/feeds/3a.svg",
    ])
    func onlyAnIdThatFitsNamesAFeedsCode(path: String) {
        #expect(FeedQRCodeRoute.podcastID(in: path) == nil)
    }

    @Test func textTooLongForAnyQRCodeIsRefused() {
        #expect(QRCodeSVG.render(String(repeating: "x", count: 4000)) == nil)
        #expect(QRCodeSVG.render("http://[::1]:8372/feeds/1.xml") != nil)
    }

    /// The image as a phone's camera reads it: drawn by librsvg, decoded by zbar.
    private func decode(_ response: WebResponse) throws -> String {
        guard case .bytes(let svg) = response.body else { throw CocoaError(.fileReadCorruptFile) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("code.svg")
        try Data(svg).write(to: image)
        let png = directory.appendingPathComponent("code.png")
        try run("/usr/bin/rsvg-convert", ["--width", "400", "--output", png.path, image.path])
        return try run("/usr/bin/zbarimg", ["--quiet", "--raw", png.path]).trimmingCharacters(in: .newlines)
    }

    @discardableResult
    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(tool) \(arguments) exited \(process.terminationStatus)")
        return String(decoding: bytes, as: UTF8.self)
    }
}
