import Testing

@testable import SinglecastSupport

/// One rule for which statuses are passing trouble. The directory's hint used to say "try again later" for any
/// status from 500 up (also 600 and beyond, which are no statuses) and not for 408; the download queue's retry
/// said 408, 429 and 500...599. The queue's reading is kept: 408 is the server giving up waiting, which passes.
@Suite struct HTTPStatusTests {
    @Test func requestTimeoutTooManyRequestsAndServerErrorsAreTransient() {
        for status in [408, 429, 500, 502, 503, 504, 599] { #expect(HTTPStatus.isTransient(status), "\(status)") }
    }

    @Test func otherStatusesAreNot() {
        for status in [0, 200, 301, 400, 401, 403, 404, 410, 416, 600, 999] {
            #expect(!HTTPStatus.isTransient(status), "\(status)")
        }
    }
}
