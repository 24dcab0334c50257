import SinglecastDaemon
import Testing

/// The directory's endpoints are checked by `HTTPURL`, not by a scheme-and-host check of their own.
@Suite struct EndpointConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, path: "/etc/sc.conf", home: "/home/u")
    }

    /// The old check parsed the quoted text as given, so white space inside the quotes refused the URL; `HTTPURL`
    /// reads a URL with white space around it as the URL, and the endpoint is kept without it.
    @Test func whiteSpaceAroundAnEndpointDoesNotCount() throws {
        #expect(try parse("search_endpoint = \" https://example.com/ \"\n").searchEndpoint == "https://example.com")
    }

    @Test(arguments: ["ftp://example.com", "file:///etc", "https://", "example.com", "javascript:alert(1)"])
    func anEndpointThatIsNoHTTPURLIsRefused(value: String) {
        #expect(throws: ConfigurationError.self) { try parse("search_endpoint = \(value)\n") }
    }

    @Test func aChartTemplateIsCheckedFilledIn() throws {
        let template = "https://example.com/{country}/top/limit={limit}/json"
        #expect(try parse("chart_endpoint = \(template)\n").chartEndpoint == template)
    }
}
