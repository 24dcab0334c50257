import SinglecastDaemon
import Testing

/// `Router.supersedes` decides, for every line a client sends, whether it cancels a `search` still running on its
/// connection; it must find the method wherever the line puts it and nothing else.
@Suite struct SupersedingRequestTests {
    private func supersedes(_ line: String) -> Bool { Router.supersedes(Array(line.utf8)) }

    @Test func aSearchSupersedesWhereverItsMethodStands() {
        #expect(supersedes(#"{"jsonrpc":"2.0","id":1,"method":"search","params":{"term":"a"}}"#))
        #expect(supersedes(#"{"params":{"term":"a"},"id":"x","jsonrpc":"2.0","method" :  "search"}"#))
        #expect(supersedes(#"  {"jsonrpc":"2.0","method":"search","id":2,"params":{"term":"search"}}"#))
    }

    @Test func otherLinesDoNot() {
        // "search" in a value, in a key, or as a prefix of another method is not a search request.
        #expect(!supersedes(#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"urls":["http://h/\"search\""]}}"#))
        #expect(!supersedes(#"{"jsonrpc":"2.0","id":1,"method":"podcasts","params":{"search":"x"}}"#))
        #expect(!supersedes(#"{"jsonrpc":"2.0","id":1,"method":"searches"}"#))
        #expect(!supersedes(#"{"jsonrpc":"2.0","id":1,"method":"search""#))
        #expect(!supersedes(""))
        #expect(!supersedes(#""search""#))
    }

    @Test func aLineTooLongToBeASearchIsNotParsed() {
        let term = String(repeating: "a", count: 1 << 16)
        #expect(!supersedes(#"{"jsonrpc":"2.0","id":1,"method":"search","params":{"term":"\#(term)"}}"#))
    }
}
