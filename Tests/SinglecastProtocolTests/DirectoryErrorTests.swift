import Testing

@testable import SinglecastProtocol

/// The directory's error hint asks `HTTPStatus.isTransient`, as the download queue's retries do.
@Suite struct DirectoryErrorTests {
    @Test func aTransientStatusSaysTryAgainLaterAndAnyOtherPointsAtTheEndpoints() {
        for status in [408, 429, 503] {
            #expect(RPCError.directoryHTTPError(status: status, url: "u").message.contains("try again later"))
        }
        for status in [404, 600] {
            #expect(RPCError.directoryHTTPError(status: status, url: "u").message.contains("search_endpoint"))
        }
    }
}
