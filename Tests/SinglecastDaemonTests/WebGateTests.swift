import Foundation
import SinglecastDaemon
import Testing

/// `WebGate.decide`: who the HTTP listener serves, decided from a request's facts without any I/O.
@Suite struct WebGateTests {
    private let loopback = WebListenAddress("127.0.0.1:8372")!
    private let everywhere = WebListenAddress("0.0.0.0:8372")!
    private let gate = WebGate(password: "secret", csrfToken: "token", bodyLimit: 1000)
    private let now: Int64 = 1_000_000

    private func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    private func facts(
        method: WebRequest.Method = .get,
        host: String? = "127.0.0.1:8372",
        origin: String? = nil,
        authorization: String? = nil,
        csrf: String? = nil,
        length: Int64? = nil,
        listener: WebListenAddress? = nil,
        client: String = "127.0.0.1"
    ) -> WebGate.Facts {
        WebGate.Facts(
            client: client,
            listener: listener ?? loopback,
            method: method,
            host: host,
            origin: origin,
            authorization: authorization ?? basic("singlecast", "secret"),
            csrfToken: csrf,
            contentLength: length
        )
    }

    private func decide(_ facts: WebGate.Facts, gate: WebGate? = nil) -> WebGate.Action {
        var throttle = LoginThrottle()
        return (gate ?? self.gate).decide(facts, throttle: &throttle, now: now)
    }

    @Test func theRightCredentialsOnTheListenAddressAreServed() {
        #expect(decide(facts()) == .serve)
        #expect(decide(facts(host: "localhost:8372")) == .serve)
        #expect(decide(facts(host: "LOCALHOST")) == .serve)
        #expect(decide(facts(host: "127.0.0.1")) == .serve)
    }

    @Test func noCredentialsIsAChallengeAndAWrongPasswordToo() {
        var throttle = LoginThrottle()
        var request = facts()
        request.authorization = nil
        #expect(gate.decide(request, throttle: &throttle, now: now) == .challenge)
        #expect(throttle.trackedAddresses == 0, "a browser's first request is no failed login")
        #expect(
            gate.decide(facts(authorization: basic("singlecast", "guess")), throttle: &throttle, now: now) == .challenge
        )
        #expect(gate.decide(facts(authorization: basic("root", "secret")), throttle: &throttle, now: now) == .challenge)
        #expect(gate.decide(facts(authorization: "Bearer secret"), throttle: &throttle, now: now) == .challenge)
        #expect(gate.decide(facts(authorization: "Basic !!!"), throttle: &throttle, now: now) == .challenge)
        #expect(throttle.trackedAddresses == 1)
    }

    @Test func repeatedFailuresFromOneAddressAreThrottledAndOthersAreNot() {
        var throttle = LoginThrottle(capacity: 5, refillInterval: 12_000)
        let wrong = facts(authorization: basic("singlecast", "guess"))
        for _ in 0..<5 { #expect(gate.decide(wrong, throttle: &throttle, now: now) == .challenge) }
        #expect(gate.decide(wrong, throttle: &throttle, now: now) == .throttled(retryAfterSeconds: 12))
        // Even the right password waits: a guesser must not learn that a guess was right.
        #expect(gate.decide(facts(), throttle: &throttle, now: now) == .throttled(retryAfterSeconds: 12))
        #expect(gate.decide(facts(client: "127.0.0.2"), throttle: &throttle, now: now) == .serve)
        // One more try after one refill interval, and the right password clears the record.
        #expect(gate.decide(facts(), throttle: &throttle, now: now + 12_000) == .serve)
        #expect(throttle.retryAfter("127.0.0.1", now: now + 12_000) == nil)
    }

    @Test func aForeignHostOnLoopbackIsRefusedAsDNSRebinding() {
        #expect(decide(facts(host: "evil.example:8372")) == .forbidden(.foreignHost))
        #expect(decide(facts(host: "127.0.0.1:9999")) == .forbidden(.foreignHost))
        #expect(decide(facts(host: nil)) == .forbidden(.foreignHost))
        // Rebinding is checked before credentials: the page does not even get a challenge.
        #expect(decide(facts(host: "evil.example", authorization: basic("x", "y"))) == .forbidden(.foreignHost))
        // On a non-loopback address the machine has names the daemon cannot know: credentials protect it.
        #expect(decide(facts(host: "nas.home.arpa:8372", listener: everywhere)) == .serve)
    }

    @Test func ipv6LoopbackHostsAreItsOwnAddressInBrackets() {
        let v6 = WebListenAddress("[::1]:8372")!
        #expect(decide(facts(host: "[::1]:8372", listener: v6)) == .serve)
        #expect(decide(facts(host: "127.0.0.1:8372", listener: v6)) == .forbidden(.foreignHost))
    }

    @Test func aForeignOriginIsRefused() {
        #expect(decide(facts(origin: "http://127.0.0.1:8372")) == .serve)
        #expect(decide(facts(origin: "http://evil.example")) == .forbidden(.foreignOrigin))
        #expect(decide(facts(origin: "null")) == .forbidden(.foreignOrigin))
        #expect(decide(facts(origin: "https://127.0.0.1:8372")) == .forbidden(.foreignOrigin))
    }

    @Test func unsafeMethodsNeedTheCSRFToken() {
        #expect(decide(facts(method: .post)) == .forbidden(.missingCSRFToken))
        #expect(decide(facts(method: .post, csrf: "wrong")) == .forbidden(.missingCSRFToken))
        #expect(decide(facts(method: .other("DELETE"), csrf: "tokem")) == .forbidden(.missingCSRFToken))
        #expect(decide(facts(method: .post, csrf: "token")) == .serve)
        #expect(decide(facts(method: .head)) == .serve)
    }

    @Test func aBodyOverTheLimitIsTooLarge() {
        #expect(decide(facts(method: .post, csrf: "token", length: 1000)) == .serve)
        #expect(decide(facts(method: .post, csrf: "token", length: 1001)) == .tooLarge(limit: 1000))
        // Only after authentication: a stranger learns nothing about the limits.
        #expect(decide(facts(method: .post, authorization: basic("a", "b"), length: 5000)) == .challenge)
    }

    @Test func withoutAuthenticationTheOtherChecksStillHold() {
        let open = WebGate(password: nil, csrfToken: "token", bodyLimit: 10)
        var request = facts()
        request.authorization = nil
        #expect(decide(request, gate: open) == .serve)
        request.host = "evil.example"
        #expect(decide(request, gate: open) == .forbidden(.foreignHost))
    }
}

/// `LoginThrottle`: a token bucket of failed logins per address, with the time passed in.
@Suite struct LoginThrottleTests {
    @Test func refillsOverTimeAndForgetsOnSuccess() {
        var throttle = LoginThrottle(capacity: 2, refillInterval: 1000)
        throttle.recordFailure("a", now: 0)
        #expect(throttle.retryAfter("a", now: 0) == nil)
        throttle.recordFailure("a", now: 0)
        #expect(throttle.retryAfter("a", now: 0) == 1000)
        #expect(throttle.retryAfter("a", now: 400) == 600)
        #expect(throttle.retryAfter("a", now: 1000) == nil)
        throttle.recordSuccess("a")
        #expect(throttle.trackedAddresses == 0)
    }

    @Test func theTableStaysBoundedUnderManyAddresses() {
        var throttle = LoginThrottle(capacity: 1, refillInterval: 60_000, maximumAddresses: 100)
        for index in 0..<10_000 { throttle.recordFailure("10.0.\(index / 256).\(index % 256)", now: Int64(index)) }
        #expect(throttle.trackedAddresses <= 100)
        // The most recent guessers are still held.
        #expect(throttle.retryAfter("10.0.39.15", now: 10_000) != nil)
    }
}

/// `http_listen` and the other `http_*` keys.
@Suite struct WebSettingsTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, path: "/etc/sc.conf", home: "/home/u")
    }

    @Test func listenAddressesParse() throws {
        let configuration = try parse("http_listen = 127.0.0.1:8372, [::1]:8372 0.0.0.0:80")
        #expect(configuration.web.listen.map(\.description) == ["127.0.0.1:8372", "[::1]:8372", "0.0.0.0:80"])
        #expect(configuration.web.listen.map(\.isLoopback) == [true, true, false])
        #expect(try parse("http_listen = off").web.listen.isEmpty)
        #expect(DaemonConfiguration().web.listen.isEmpty, "off by default")
    }

    @Test(arguments: ["localhost:8372", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "::1:8372", "[::1]", "1.2.3:80"])
    func badAddressesAreRefused(_ word: String) {
        #expect(throws: ConfigurationError.self) { try parse("http_listen = \(word)") }
    }

    @Test func authOffIsOnlyForLoopback() throws {
        #expect(try parse("http_listen = 127.0.0.1:1, [::1]:1\nhttp_auth = off").web.basicAuth == false)
        do {
            _ = try parse("http_auth = off\nhttp_listen = 127.0.0.1:1, 0.0.0.0:1")
            Issue.record("accepted http_auth = off on 0.0.0.0")
        } catch {
            #expect(error.line == 1)
            #expect(error.message.contains("0.0.0.0:1 is not"))
        }
    }

    @Test func tlsNeedsBothFiles() {
        #expect(throws: ConfigurationError.self) { try parse("http_tls_cert = /etc/c.pem") }
        #expect(throws: ConfigurationError.self) { try parse("http_tls_key = /etc/k.pem") }
        #expect((try? parse("http_tls_cert = /c\nhttp_tls_key = /k"))?.web.summary == "off")
    }
}
