/// A route of files the catalogue names, under one path prefix: `/media/<episode-id>/<file name>` (an episode's
/// downloaded file, the personal feeds' enclosures) and `/artwork/<podcast-id>` (a podcast's image from the artwork
/// cache). Only the file the catalogue names for the path is served, with ranges; every other path under the prefix
/// is 404, and nothing is ever listed.
package struct ServedFileRoute: WebRoute {
    /// The first path segment: `media`, `artwork`.
    let prefix: String
    /// The file the segments after the prefix name; `nil` for none.
    let lookup: @Sendable ([String]) async -> ServableFile?

    /// `/media/<episode-id>/<file name>`: the URL's name must be the file's own.
    package static func media(subscriptions: Subscriptions) -> ServedFileRoute {
        ServedFileRoute(prefix: "media") { names in
            guard names.count == 2, let episode = WebPath.id(names[0]) else { return nil }
            return await subscriptions.servableFile(episode: episode, named: names[1])
        }
    }

    /// `/artwork/<podcast-id>`.
    package static func artwork(subscriptions: Subscriptions) -> ServedFileRoute {
        ServedFileRoute(prefix: "artwork") { names in
            guard names.count == 1, let podcast = WebPath.id(names[0]) else { return nil }
            return await subscriptions.servableArtwork(podcast: podcast)
        }
    }

    package func respond(to request: WebRequest) async -> WebResponse? {
        guard request.rawPath == "/" + prefix || request.rawPath.hasPrefix("/" + prefix + "/") else { return nil }
        guard let isGet = WebAnswers.isGet(request) else { return WebAnswers.methodNotAllowed() }
        guard let segments = WebPath.segments(request.rawPath), let file = await lookup(Array(segments.dropFirst()))
        else { return WebAnswers.notFound() }
        return WebAnswers.file(file, request: request, isGet: isGet)
    }
}
