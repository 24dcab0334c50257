import FoundationEssentials
import SinglecastDaemon

#if canImport(Glibc)
import Glibc
#endif

@main
struct Entrypoint {
    static func main() async {
        exit(await Daemon.main(arguments: CommandLine.arguments.dropFirst()))
    }
}
