import Testing

@testable import SinglecastSupport

/// One rule for an extra request header. The client refused a space in the name and any Unicode line break; the
/// daemon refused NUL but took `X A: 1` and U+2028; the engine checked only CR, LF and a colon, so it sent `: v` and
/// cut `X: a<NUL>b` at the NUL. Every text one of them refused is refused now, so what the client accepted still
/// goes through unchanged.
@Suite struct RequestHeaderTests {
    @Test(arguments: [
        ("Authorization", RequestHeader.Problem.noColon),
        (": value", .emptyName),
        ("X A: 1", .spaceInName),
        (" : value", .spaceInName),
        ("X-A: 1\r\nX-B: 2", .notOneLine),
        ("X-A: 1\nX-B: 2", .notOneLine),
        ("X-A: 1\u{2028}X-B: 2", .notOneLine),
        ("X-A: 1\u{0B}2", .notOneLine),
        ("X-Token: a\u{0}b", .nul),
    ])
    func refusesWhatAnyOfTheOldRulesRefused(header: String, problem: RequestHeader.Problem) {
        #expect(RequestHeader.problem(header) == problem)
    }

    @Test(arguments: ["X-A: 1", "Authorization: Bearer a:b", "X-Empty:", "X-Tab:\tvalue", "X-Ünicode: é"])
    func acceptsOneNameValueLine(header: String) {
        #expect(RequestHeader.problem(header) == nil)
    }
}
