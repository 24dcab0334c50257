import Foundation
import SinglecastFeeds

/// `singlecast-feed`: a developer tool that parses a feed file and prints JSON; see ``FeedTool``.
@main
struct Entrypoint {
    static func main() {
        FeedTool.run(arguments: Array(CommandLine.arguments.dropFirst())) { outcome -> Never in
            FileHandle.standardOutput.write(outcome.standardOutput)
            FileHandle.standardError.write(Data(outcome.standardError.utf8))
            exit(outcome.status)
        }
    }
}
