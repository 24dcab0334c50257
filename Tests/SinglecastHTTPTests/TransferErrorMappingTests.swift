import Testing

@testable import SinglecastHTTP

/// Builds the error for a libcurl failure the way the engine does.
private enum CurlFailureMapping {
    static func map(
        code: Int32,
        url: String,
        location: String? = nil,
        options: TransferOptions = TransferOptions(),
        message: String = "test"
    ) -> TransferError {
        TransferError(
            CurlFailure(
                code: code,
                curlMessage: message,
                url: url,
                redirectLocation: location,
                bodyBytesReceived: 0,
                contentLength: nil,
                bytesInFile: 0,
                options: options
            )
        )
    }
}

/// libcurl failures mapped to stable codes and helpful messages, without a network.
@Suite struct TransferErrorMappingTests {
    // CURLcode values from curl.h (stable ABI).
    private static let unsupportedProtocol: Int32 = 1
    private static let partialFile: Int32 = 18
    private static let operationTimedOut: Int32 = 28
    private static let sslConnectError: Int32 = 35
    private static let tooManyRedirects: Int32 = 47
    private static let peerFailedVerification: Int32 = 60
    private static let receiveError: Int32 = 56

    @Test func curlTimingsAreLeftOutSoTheSameFailureReadsTheSame() {
        let couldNotConnect: Int32 = 7
        let messages = [
            "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
            "Failed to connect to 127.0.0.1 port 9 after 1234 ms: Couldn't connect to server",
        ].map { CurlFailureMapping.map(code: couldNotConnect, url: "http://127.0.0.1:9/a", message: $0).message }
        #expect(messages[0] == messages[1])
        #expect(messages[0].contains("curl: Failed to connect to 127.0.0.1 port 9: Couldn't connect to server"))
        // Only "after <digits> ms" goes; other uses of "after" stay.
        let other = CurlFailureMapping.map(
            code: couldNotConnect,
            url: "http://127.0.0.1:9/a",
            message: "Connection died after 3 bytes after 5 ms"
        )
        #expect(other.message.contains("curl: Connection died after 3 bytes"))
        #expect(!other.message.contains("5 ms"))
    }

    @Test func endlessHeadersAreToldApartFromABrokenConnection() {
        let headers = CurlFailureMapping.map(
            code: Self.receiveError,
            url: "http://feeds.example/ep.mp3",
            message: "Too large response headers: 307783 > 307200"
        )
        #expect(headers.code == .headersTooLarge)
        #expect(headers.message.contains("headers without end"))
        let reset = CurlFailureMapping.map(
            code: Self.receiveError,
            url: "http://feeds.example/ep.mp3",
            message: "Recv failure: Connection reset by peer"
        )
        #expect(reset.code == .network)
    }

    @Test func insecureRedirectIsToldApartFromOtherSchemes() throws {
        var options = TransferOptions()
        options.requireHTTPS = true
        let insecure = CurlFailureMapping.map(
            code: Self.unsupportedProtocol,
            url: "https://feeds.example/ep.mp3",
            location: "http://cdn.example/ep.mp3",
            options: options
        )
        #expect(insecure.code == .insecureRedirect)
        #expect(insecure.message.contains("https to plain http"))

        let file = CurlFailureMapping.map(
            code: Self.unsupportedProtocol,
            url: "https://feeds.example/ep.mp3",
            location: "file:///etc/passwd",
            options: options
        )
        #expect(file.code == .schemeNotAllowed)
    }

    @Test(arguments: [
        (partialFile, TransferError.Code.network),
        (operationTimedOut, .timeout),
        (sslConnectError, .tls),
        (peerFailedVerification, .tls),
        (tooManyRedirects, .tooManyRedirects),
        (7, .network),
        (6, .network),
        (8, .protocolError),
    ])
    func curlCodesMapToStableCodes(curlCode: Int32, expected: TransferError.Code) {
        let error = CurlFailureMapping.map(code: curlCode, url: "https://u:p@example.com/a.mp3")
        #expect(error.code == expected)
        #expect(error.curlCode == curlCode)
        #expect(!error.message.contains("u:p@"))
    }

    /// libcurl reports garbage where a status line belongs (left on a reused connection by a server that sent more
    /// than its Content-Length) as CURLE_UNSUPPORTED_PROTOCOL; it is a broken response, not a refused scheme.
    @Test func garbageInsteadOfAStatusLineIsAProtocolError() {
        let error = CurlFailureMapping.map(
            code: Self.unsupportedProtocol,
            url: "http://feeds.example/ep.mp3",
            message: "Received HTTP/0.9 when not allowed"
        )
        #expect(error.code == .protocolError)
        #expect(error.message.contains("not an HTTP response"), "\(error.message)")
    }

    /// The retry rule the download queue follows, one code at a time.
    @Test func everyCodeHasARetryClass() {
        #expect(TransferError.Code.protocolError.isRetryable)
        #expect(TransferError.Code.network.retryClass == .afterBackoff)
        #expect(TransferError.Code.timeout.retryClass == .afterBackoff)
        #expect(TransferError.Code.rangeMismatch.retryClass == .immediately)
        #expect(TransferError.Code.diskFull.retryClass == .afterUserAction)
        #expect(TransferError.Code.cancelled.retryClass == .notAFailure)
        for code in [TransferError.Code.schemeNotAllowed, .insecureRedirect, .tooManyRedirects, .tooLarge] {
            #expect(!code.isRetryable, "\(code)")
        }
        #expect(!TransferError.Code.headersTooLarge.isRetryable)
        #expect(!TransferError.Code.invalidURL.isRetryable)
    }
}
