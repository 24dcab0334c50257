#if canImport(Glibc)
import Glibc
#endif

/// The answers the feed, media and artwork routes share.
package enum WebAnswers {
    package static func notFound() -> WebResponse {
        WebResponse(
            status: 404,
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: .bytes(Array("not found\n".utf8))
        )
    }

    /// The routes here only read: anything but GET and HEAD is 405.
    package static func methodNotAllowed() -> WebResponse {
        WebResponse(
            status: 405,
            headers: [("Allow", "GET, HEAD"), ("Content-Type", "text/plain; charset=utf-8")],
            body: .bytes(Array("only GET and HEAD\n".utf8))
        )
    }

    package static func failed(_ why: String) -> WebResponse {
        WebResponse(
            status: 500,
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: .bytes(Array("\(why)\n".utf8))
        )
    }

    /// GET or HEAD; `nil` for any other method.
    package static func isGet(_ request: WebRequest) -> Bool? {
        switch request.method {
        case .get: true
        case .head: false
        case .post, .other: nil
        }
    }

    /// A file the catalogue named, opened and answered as ``FileAnswer`` decides; 404 when it may not be served.
    ///
    /// A HEAD gets the same body as its GET: libmicrohttpd sends no body for HEAD and reports the body's size as
    /// `Content-Length`, which is what a HEAD must say.
    package static func file(_ file: ServableFile?, request: WebRequest, isGet: Bool) -> WebResponse {
        guard let file, let opened = ServedFile.open(file) else { return notFound() }
        let answer = FileAnswer(
            isGet: isGet,
            headers: request.headers,
            facts: opened.facts,
            contentType: MediaType.of(name: file.name, announced: file.announcedType)
        )
        guard let bytes = answer.bytes else {
            close(opened.descriptor)
            return WebResponse(status: answer.status, headers: answer.headers)
        }
        return WebResponse(
            status: answer.status,
            headers: answer.headers,
            body: .file(descriptor: opened.descriptor, offset: bytes.offset, length: bytes.length)
        )
    }
}
