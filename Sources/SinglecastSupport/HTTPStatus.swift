/// Which HTTP statuses are passing trouble, for every part that says "try again later": the download queue's
/// retries and the directory's error hint. Here, below them all, because the protocol module (and so the client)
/// cannot import the daemon or the engine.
package enum HTTPStatus {
    /// Whether another request later may succeed: 408 (the server gave up waiting), 429 (too many requests) and the
    /// 5xx server errors are; other statuses mean the request is wrong, and one outside 100...599 is no status at all.
    package static func isTransient(_ status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }
}
