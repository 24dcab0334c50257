import SinglecastSupport

#if canImport(Glibc)
import Glibc
#endif

/// One `http_listen` address: an IP literal and a port, `127.0.0.1:8372` or `[::1]:8372`.
///
/// Only literals: a host name would make the daemon resolve names at start and on reload, and the Host check
/// against DNS rebinding compares what the browser sends with what the listener is bound to.
package struct WebListenAddress: Hashable, Sendable, CustomStringConvertible {
    package enum Family: Hashable, Sendable { case v4, v6 }

    /// The address without brackets: `127.0.0.1`, `::1`.
    package var host: String
    package var port: UInt16
    package var family: Family

    package init?(_ text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
            family = .v6
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            family = .v4
        }
        guard let port = OutsideNumber.decimal(portText.utf8), port >= 1, port <= 65535 else { return nil }
        self.port = UInt16(port)
        self.host = String(host)
        guard Self.isLiteral(self.host, family: family) else { return nil }
    }

    /// Whether only this machine can connect: 127.0.0.0/8 or ::1.
    package var isLoopback: Bool {
        switch family {
        case .v4: host.hasPrefix("127.")
        case .v6: canonicalV6 == "::1"
        }
    }

    /// How the address is written in a URL's authority and in a `Host` header: `127.0.0.1:8372`, `[::1]:8372`.
    package var description: String {
        switch family {
        case .v4: "\(host):\(port)"
        case .v6: "[\(host)]:\(port)"
        }
    }

    /// The host as a `Host` header carries it: `127.0.0.1`, `[::1]`.
    package var hostInHeader: String {
        family == .v4 ? host : "[\(host)]"
    }

    private var canonicalV6: String? {
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, host, &bytes) == 1 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func isLiteral(_ host: String, family: Family) -> Bool {
        switch family {
        case .v4:
            var bytes = in_addr()
            return inet_pton(AF_INET, host, &bytes) == 1
        case .v6:
            var bytes = in6_addr()
            return inet_pton(AF_INET6, host, &bytes) == 1
        }
    }

    /// A list as `http_listen` takes it: addresses separated by commas or spaces, `nil` naming the first bad one.
    package static func parseList(_ text: String) -> Result<[WebListenAddress], ListProblem> {
        var addresses: [WebListenAddress] = []
        for word in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            guard let address = WebListenAddress(String(word)) else { return .failure(ListProblem(word: String(word))) }
            if !addresses.contains(address) { addresses.append(address) }
        }
        return .success(addresses)
    }

    package struct ListProblem: Error, Hashable, Sendable {
        package var word: String
    }
}
