import Foundation
import SinglecastDaemon

@main
struct Entrypoint {
    static func main() async {
        exit(await Daemon.main(arguments: CommandLine.arguments.dropFirst()))
    }
}
